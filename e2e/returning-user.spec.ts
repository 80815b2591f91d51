import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, expect, type Page, test } from "@playwright/test";
import { completeSignUp, newPerson, signOut, submitSignIn } from "./fixtures.ts";

// A server of its own with 8-second access tokens, so that a returning user's token has expired
// after a short wait (the shared server keeps the default 5 minutes for every other spec).
const ACCESS_TOKEN_TTL_SECONDS = 8;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
// E2E_PORT + 1 and + 2 are the config's demo and agent-rails servers (playwright.config.ts).
const port = Number(process.env.E2E_PORT ?? 3199) + 3;
const baseURL = `http://localhost:${port}`;
const dataDir = path.join(root, `.tmp/e2e-returning-${port}`);
let server: ChildProcess | undefined;

test.use({ baseURL });
test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  rmSync(dataDir, { recursive: true, force: true });
  server = spawn(process.execPath, ["apps/api/src/main.ts"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      ...process.env,
      PORT: String(port),
      PUBLIC_URL: baseURL,
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      NODE_ENV: "test",
      OIDC_ACCESS_TOKEN_TTL_SECONDS: String(ACCESS_TOKEN_TTL_SECONDS),
    },
  });
  for (let waited = 0; ; waited += 500) {
    const ready = await fetch(`${baseURL}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (waited > 110_000 || server.exitCode !== null)
      throw new Error("the returning-user server did not start");
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
});

test.afterAll(async () => {
  if (server?.pid && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once("exit", resolve));
    process.kill(server.pid, "SIGTERM");
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Every path the page's main frame showed, including the SPA's own history changes, and every API
 * answer's status: recorded from the first script on, so a flash of /login cannot go unseen.
 */
async function watchedPage(context: BrowserContext) {
  await context.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { seenPaths: string[] }).seenPaths = seen;
    const record = () => seen.push(window.location.pathname);
    for (const method of ["pushState", "replaceState"] as const) {
      const original = history[method];
      history[method] = function (this: History, ...args: Parameters<History["pushState"]>) {
        const result = original.apply(this, args);
        record();
        return result;
      };
    }
    window.addEventListener("popstate", record);
    record();
    // The sign-in screen's heading, should it ever render.
    new MutationObserver(() => {
      if (document.body?.textContent?.includes("Sign in to your account")) seen.push("sign-in screen shown");
    }).observe(document, { childList: true, subtree: true });
  });
  const page = await context.newPage();
  const navigations: string[] = [];
  const apiStatuses: number[] = [];
  page.on("framenavigated", (frame) => {
    if (frame === page.mainFrame()) navigations.push(new URL(frame.url()).pathname);
  });
  page.on("response", (response) => {
    if (new URL(response.url()).pathname.startsWith("/api/")) apiStatuses.push(response.status());
  });
  const seenPaths = async () => [
    ...navigations,
    ...(await page.evaluate(() => (window as unknown as { seenPaths: string[] }).seenPaths)),
  ];
  return { page, apiStatuses, seenPaths };
}

async function signUpAndClose(context: BrowserContext) {
  const person = newPerson();
  const page = await context.newPage();
  await page.goto("/register");
  await completeSignUp(page, person);
  await expect(page).toHaveURL(/\/dashboard$/);
  const stored = await page.evaluate(() => {
    const key = Object.keys(window.localStorage).find((name) => name.startsWith("oidc.user:"));
    return key
      ? (JSON.parse(window.localStorage.getItem(key) ?? "{}") as {
          access_token?: string;
          refresh_token?: string;
          expires_at?: number;
        })
      : {};
  });
  expect(stored.refresh_token).toEqual(expect.any(String));
  // The server honours OIDC_ACCESS_TOKEN_TTL_SECONDS: this token is dead after the wait.
  expect((stored.expires_at ?? 0) - Date.now() / 1000).toBeLessThanOrEqual(ACCESS_TOKEN_TTL_SECONDS);
  await page.close();
  return { person, refreshToken: stored.refresh_token as string, accessToken: stored.access_token as string };
}

const storedAccessToken = (page: Page) =>
  page.evaluate(() => {
    const key = Object.keys(window.localStorage).find((name) => name.startsWith("oidc.user:"));
    return key
      ? (JSON.parse(window.localStorage.getItem(key) ?? "{}") as { access_token?: string }).access_token
      : undefined;
  });

const pastTheAccessToken = (page: Page) => page.waitForTimeout((ACCESS_TOKEN_TTL_SECONDS + 3) * 1000);

test("a returning user whose access token expired opens a new tab on a protected page and is signed in at once", async ({
  context,
}) => {
  test.setTimeout(90_000);
  const { person, accessToken } = await signUpAndClose(context);
  const waiting = await context.newPage();
  await pastTheAccessToken(waiting);
  await waiting.close();

  // A new tab, straight to a protected page: no /login on the way, and the API answers.
  const { page, apiStatuses, seenPaths } = await watchedPage(context);
  await page.goto("/profile");
  await expect(page.getByLabel("Email")).toHaveValue(person.email);
  await expect(page).toHaveURL(/\/profile$/);
  expect(await seenPaths()).not.toContain("/login");
  expect(await seenPaths()).not.toContain("sign-in screen shown");
  expect(apiStatuses.length).toBeGreaterThan(0);
  expect(apiStatuses.filter((status) => status === 401)).toEqual([]);
  // Signed in with a token renewed from the refresh token, not the expired one.
  const renewedOnArrival = await storedAccessToken(page);
  expect(renewedOnArrival).toEqual(expect.any(String));
  expect(renewedOnArrival).not.toBe(accessToken);

  // The page stays open past another token's lifetime: renewed in time, its calls still succeed.
  await pastTheAccessToken(page);
  await page.getByRole("button", { name: "User menu" }).click();
  await page.getByRole("menuitem", { name: "Profile" }).click();
  await page.getByLabel("Display Name").fill("Renewed Tester");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page.getByText("Profile updated successfully!")).toBeVisible();
  expect(apiStatuses.filter((status) => status === 401)).toEqual([]);
  expect(await seenPaths()).not.toContain("/login");
  expect(await storedAccessToken(page)).not.toBe(renewedOnArrival);

  // Signing out in another tab signs this one out too.
  const other = await context.newPage();
  await other.goto("/dashboard");
  await expect(other.getByRole("button", { name: "User menu" })).toBeVisible();
  await signOut(other);
  await expect(other).toHaveURL(/\/$/);
  await expect(page).toHaveURL(/\/login$/);
});

test("a returning user whose refresh token was revoked goes to /login, then back to the page they asked for", async ({
  context,
  request,
}) => {
  test.setTimeout(90_000);
  const { person, refreshToken } = await signUpAndClose(context);
  const revoked = await request.post("/oidc/token/revocation", {
    form: { token: refreshToken, token_type_hint: "refresh_token", client_id: "promptmint-web" },
  });
  expect(revoked.status()).toBe(200);
  // The issuer's own session ends with it (both live 30 days): signing in again asks for the password.
  await context.clearCookies();
  const waiting = await context.newPage();
  await pastTheAccessToken(waiting);
  await waiting.close();

  const page = await context.newPage();
  await page.goto("/profile");
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole("heading", { name: "Sign in to your account" })).toBeVisible();
  expect(
    await page.evaluate(() => Object.keys(window.localStorage).filter((key) => key.startsWith("oidc.user:"))),
  ).toEqual([]);

  await page.getByRole("button", { name: "Sign In" }).click();
  await submitSignIn(page, person);
  await expect(page).toHaveURL(/\/profile$/);
  await expect(page.getByLabel("Email")).toHaveValue(person.email);
});
