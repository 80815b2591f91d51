import { defineConfig } from "vitest/config";

// One test run, several projects: the web app (jsdom), and the API's integration suite on
// PGlite always and on a real PostgreSQL when TEST_DATABASE_URL is set.
const apiProject = (name: string, env: Record<string, string>) => ({
  test: {
    name,
    root: "apps/api",
    include: ["src/**/*.test.ts"],
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
      apiProject("api-pglite", { TEST_DB: "pglite" }),
      ...(process.env.TEST_DATABASE_URL ? [apiProject("api-postgres", { TEST_DB: "postgres" })] : []),
    ],
  },
});
