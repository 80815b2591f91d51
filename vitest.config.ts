import { defineConfig } from "vitest/config";

// One test run, several projects: the web app (jsdom), the API's integration suite on PGlite
// always and on a real PostgreSQL when TEST_DATABASE_URL is set (only that one runs
// `*.pg.test.ts`), and the security suite (authorization matrix, mass assignment, fuzzing,
// secrets) on PGlite, which records the figures `npm run test:security` summarises. Tests that
// need a Redis server (`*.redis.*test.ts`) run only when REDIS_URL is set.
const securityTests = "src/security/**/*.security.test.ts";
/** Tests that need a real PostgreSQL server (several server processes on one database). */
const postgresOnlyTests = "src/**/*.pg.test.ts";
/** Tests that need a Redis server (limits shared by several processes): only with REDIS_URL. */
const redisTests = process.env.REDIS_URL ? [] : ["src/**/*.redis.*test.ts"];

const apiProject = (name: string, env: Record<string, string>, exclude: string[] = []) => ({
  test: {
    name,
    root: "apps/api",
    include: ["src/**/*.test.ts"],
    exclude: ["**/node_modules/**", securityTests, ...redisTests, ...exclude],
    environment: "node",
    env,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

export default defineConfig({
  test: {
    projects: [
      "apps/web/vitest.config.ts",
      apiProject("api-pglite", { TEST_DB: "pglite" }, [postgresOnlyTests]),
      ...(process.env.TEST_DATABASE_URL ? [apiProject("api-postgres", { TEST_DB: "postgres" })] : []),
      {
        test: {
          name: "security",
          root: "apps/api",
          include: [securityTests],
          exclude: ["**/node_modules/**", ...redisTests],
          environment: "node",
          env: { TEST_DB: "pglite" },
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
