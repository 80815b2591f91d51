import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, devices } from "@playwright/test";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const port = Number(process.env.E2E_PORT ?? 3199);
const baseURL = `http://localhost:${port}`;
const dataDir = path.join(root, `.tmp/e2e-data-${port}`);
/** The seeded demo server (see analytics-demo.spec.ts). */
export const demoURL = `http://localhost:${port + 1}`;
/**
 * The operators (ADMIN_EMAILS) of the real server: granted the role once they verify the address
 * through the mailed link (the outbox at /oidc/dev/outbox). payouts.spec.ts signs up the first,
 * operator-verification.spec.ts the second.
 */
export const OPERATOR_EMAIL = "e2e-operator@example.com";
export const VERIFYING_OPERATOR_EMAIL = "e2e-operator-2@example.com";
const demoDataDir = path.join(root, `.tmp/e2e-demo-${port + 1}`);
/**
 * A third server with both agent rails on, x402 and MPP (docs/decisions/070, 074): MCP clients must
 * still be asked to sign in at an app's MCP URL. Its facilitator and Stripe are never reached (no
 * spec pays with a rail in a browser).
 */
export const x402URL = `http://localhost:${port + 2}`;
const x402DataDir = path.join(root, `.tmp/e2e-x402-${port + 2}`);

/** The real server (built SPA + API + embedded issuer on a fresh PGlite) driven by Debian's Chromium. */
export default defineConfig({
  testDir: ".",
  testMatch: "*.spec.ts",
  outputDir: path.join(root, ".tmp/e2e-results"),
  timeout: 60_000,
  expect: { timeout: 10_000 },
  retries: 0,
  workers: 1,
  reporter: [["list"], ["json"]],
  use: {
    baseURL,
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-dev-shm-usage",
      ],
    },
  },
  projects: [
    {
      name: "desktop",
      use: { ...devices["Desktop Chrome"], viewport: { width: 1280, height: 800 } },
      testIgnore: /mobile/,
    },
    { name: "phone", use: { ...devices["Pixel 7"] }, testMatch: /mobile\.spec\.ts/ },
    {
      name: "x402",
      use: { ...devices["Desktop Chrome"], viewport: { width: 1280, height: 800 }, baseURL: x402URL },
      testMatch: /mcp-oauth\.spec\.ts/,
    },
  ],
  webServer: [
    {
      command: `rm -rf "${dataDir}" && node apps/api/src/main.ts`,
      cwd: root,
      url: `${baseURL}/readyz`,
      timeout: 120_000,
      reuseExistingServer: false,
      env: {
        PORT: String(port),
        PUBLIC_URL: baseURL,
        DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
        NODE_ENV: "test",
        ALLOW_PRIVATE_UPSTREAMS: "true",
        // The journeys call $1 apps more often than the default spend budget allows (decision 072).
        GATEWAY_SPEND_PER_MINUTE_CENTS: "1000000",
        // Payouts only when a creator withdraws, so the journey's Withdraw is never beaten by the
        // weekly schedule (the schedule has its integration tests).
        PAYOUT_SCHEDULE: "manual",
        // The operators, once verified (payouts.spec.ts, operator-verification.spec.ts). No
        // SMTP_URL: mail goes to the outbox the specs read.
        ADMIN_EMAILS: `${OPERATOR_EMAIL},${VERIFYING_OPERATOR_EMAIL}`,
      },
    },
    {
      // A second server filled by `seed:demo`, for the screens that need weeks of data.
      command: `rm -rf "${demoDataDir}" && node apps/api/src/scripts/seed-demo.ts --days 14 && node apps/api/src/main.ts`,
      cwd: root,
      url: `${demoURL}/readyz`,
      timeout: 180_000,
      reuseExistingServer: false,
      env: {
        PORT: String(port + 1),
        PUBLIC_URL: demoURL,
        DATA_DIR: demoDataDir,
        LOG_LEVEL: "warn",
        NODE_ENV: "test",
      },
    },
    {
      command: `rm -rf "${x402DataDir}" && node apps/api/src/main.ts`,
      cwd: root,
      url: `${x402URL}/readyz`,
      timeout: 120_000,
      reuseExistingServer: false,
      env: {
        PORT: String(port + 2),
        PUBLIC_URL: x402URL,
        DATA_DIR: x402DataDir,
        LOG_LEVEL: "warn",
        NODE_ENV: "test",
        ALLOW_PRIVATE_UPSTREAMS: "true",
        PAYOUT_SCHEDULE: "manual",
        X402_PAY_TO: "0x1111111111111111111111111111111111111111",
        X402_FACILITATOR_URL: "http://127.0.0.1:9",
        MPP_SECRET_KEY: "e2e-mpp-challenge-key-0123456789abcdefgh",
        MPP_STRIPE_SECRET_KEY: "sk_test_e2e_never_called",
        MPP_STRIPE_API_URL: "http://127.0.0.1:9",
      },
    },
  ],
});
