import { appendFileSync, existsSync, globSync, mkdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";

// One test run, several projects: the web app (jsdom), the API's integration suite on PGlite
// always and on a real PostgreSQL when TEST_DATABASE_URL is set (only that one runs
// `*.pg.test.ts`), and the security suite (authorization matrix, mass assignment, fuzzing,
// secrets) on PGlite, which records the figures `npm run test:security` summarises. Tests that
// need a Redis server (`*.redis.*test.ts`) run only when REDIS_URL is set.
const securityTests = "src/security/**/*.security.test.ts";
/** Tests that need a real PostgreSQL server (several server processes on one database). */
const postgresOnlyTests = "src/**/*.pg.test.ts";
/** Security tests that need one (the database cut under load): only with TEST_DATABASE_URL. */
const postgresSecurityTests = process.env.TEST_DATABASE_URL ? [] : ["src/**/*.pg.security.test.ts"];
/** Tests that need a Redis server (limits shared by several processes): only with REDIS_URL. */
const redisTests = process.env.REDIS_URL ? [] : ["src/**/*.redis.*test.ts"];

/**
 * The API's test files that never open a database of the project's kind: no import of theirs,
 * however deep, reaches a module that reads TEST_DB (the test database, server and upgrade helpers).
 * They run once, in api-pglite; the PostgreSQL project would only run them again (pure functions,
 * protocol parsers, limiters), about a fifth of the API's files.
 */
function filesWithoutDatabase(): string[] {
  const root = "apps/api/src";
  const opensDatabase = /\/src\/test\/(database|server|use-test-server|upgrade-database)\.ts$/;
  const seen = new Map<string, boolean>();
  const reaches = (file: string, path_: Set<string>): boolean => {
    const known = seen.get(file);
    if (known !== undefined) return known;
    if (path_.has(file) || !existsSync(file)) return false;
    if (opensDatabase.test(file)) return true;
    path_.add(file);
    const source = readFileSync(file, "utf8");
    const found =
      source.includes("TEST_DB") ||
      [...source.matchAll(/(?:from|import\()\s*"(\.[^"]+)"/g)].some((match) =>
        reaches(path.join(path.dirname(file), match[1] as string), path_),
      );
    seen.set(file, found);
    return found;
  };
  return globSync(`${root}/**/*.test.ts`)
    .filter((file) => !reaches(file, new Set()))
    .map((file) => path.relative("apps/api", file));
}

/**
 * A test's time limit finds hangs; it does not judge speed (that is bench/'s, with its spread).
 * Two minutes: integration tests run their servers, PostgreSQL and the load of the other worker on
 * two cores, where a money test that takes 8 s alone took 30 s and failed by its old 30 s limit
 * (issue 38). A hang still ends the run, two minutes later.
 */
const TEST_TIMEOUT_MS = 120_000;

const apiProject = (name: string, env: Record<string, string>, exclude: string[] = []) => ({
  test: {
    name,
    root: "apps/api",
    include: ["src/**/*.test.ts"],
    exclude: ["**/node_modules/**", securityTests, ...redisTests, ...exclude],
    environment: "node",
    env,
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: TEST_TIMEOUT_MS,
  },
});

/**
 * Where an error no test caught is written (it still fails the run): `npm test` prints this file
 * at its end, so a run whose tests all passed but whose step failed says why in its last lines.
 */
const UNHANDLED_ERRORS = ".tmp/test-results/unhandled-errors.txt";

/**
 * At least two test files at a time. vitest's default is one fewer than the cores, so one on a
 * two-core machine (CI's), where most files wait on their servers, sockets and databases more than
 * they compute: six typical API files took 71.7 s with one worker and 44.1 s with two, for the same
 * CPU time (idle machine, 2026-11-27).
 */
const maxWorkers = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    maxWorkers,
    onUnhandledError(error) {
      const where = error as { VITEST_TEST_PATH?: string; VITEST_TEST_NAME?: string };
      const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
      mkdirSync(".tmp/test-results", { recursive: true });
      appendFileSync(
        UNHANDLED_ERRORS,
        `${where.VITEST_TEST_PATH ?? "(no test file)"} › ${where.VITEST_TEST_NAME ?? "(no test)"}\n${stack.split("\n").slice(0, 12).join("\n")}\n\n`,
      );
    },
    projects: [
      "apps/web/vitest.config.ts",
      apiProject("api-pglite", { TEST_DB: "pglite" }, [postgresOnlyTests]),
      ...(process.env.TEST_DATABASE_URL
        ? [apiProject("api-postgres", { TEST_DB: "postgres" }, filesWithoutDatabase())]
        : []),
      {
        test: {
          name: "security",
          root: "apps/api",
          include: [securityTests],
          exclude: ["**/node_modules/**", ...redisTests, ...postgresSecurityTests],
          environment: "node",
          env: { TEST_DB: "pglite" },
          testTimeout: TEST_TIMEOUT_MS,
          hookTimeout: TEST_TIMEOUT_MS,
        },
      },
    ],
  },
});
