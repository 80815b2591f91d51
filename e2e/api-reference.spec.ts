import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, type Page, type TestInfo, test } from "@playwright/test";
import { newPerson, signUp, verifyEmailFromOutbox } from "./fixtures.ts";

// The API reference (/api/docs) and the sandbox's payout onboarding page, the server-rendered pages
// in the product's look: they render under the strict CSP without a console error, and lead back.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const shots = path.join(root, ".tmp/test-results/screenshots");

/** Console errors, uncaught errors and CSP violations of the page, as they happen. */
async function watchProblems(page: Page): Promise<string[]> {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || /Content Security Policy/i.test(message.text()))
      problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`uncaught: ${error.message}`));
  await page.exposeFunction("reportCspViolation", (text: string) => problems.push(`CSP: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      (window as unknown as { reportCspViolation(t: string): void }).reportCspViolation(
        `${event.violatedDirective} blocked ${event.blockedURI}`,
      );
    });
  });
  return problems;
}

/** The page at 1280 and 390 px, saved and attached to the report. */
async function screenshotBothWidths(
  page: Page,
  testInfo: TestInfo,
  name: string,
  ready: () => Promise<void>,
) {
  mkdirSync(shots, { recursive: true });
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
    await ready();
    const file = path.join(shots, `${name}-${width}.png`);
    await page.screenshot({ path: file });
    await testInfo.attach(`${name} at ${width} px`, { path: file, contentType: "image/png" });
    // Nothing wider than the window: a phone never scrolls sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
  }
}

test("the API reference opens from the user menu, renders the operations offline under the CSP, and leads back", async ({
  page,
}, testInfo) => {
  const problems = await watchProblems(page);
  const outside: string[] = [];
  page.on("request", (request) => {
    if (!request.url().startsWith(new URL(testInfo.project.use.baseURL ?? "").origin))
      outside.push(request.url());
  });
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);

  await page.getByRole("button", { name: "User menu" }).click();
  await page.getByRole("menuitem", { name: "API reference" }).click();
  await expect(page).toHaveURL(/\/api\/docs$/);
  await expect(page).toHaveTitle("API reference · Promptmint");
  // Scalar lays out the whole document (some 200 operations) at once; recording the trace of that
  // page slows Chromium well past a person's 2 s on this shared machine.
  await expect(page.getByRole("heading", { name: "Promptmint API", level: 1 })).toBeVisible({
    timeout: 45_000,
  });
  // An operation, from the document the reference read from /api/openapi.json.
  await expect(page.getByRole("heading", { name: "Run a completion (Dify compatible)" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Promptmint" }).first()).toBeVisible();

  await screenshotBothWidths(page, testInfo, "api-reference", async () => {
    await expect(page.getByRole("link", { name: "Back to Promptmint" })).toBeVisible();
    await expect(page.getByRole("heading", { name: "Promptmint API", level: 1 })).toBeVisible();
  });

  await page.getByRole("link", { name: "Back to Promptmint" }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
  await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
  await expect(page).not.toHaveTitle("API reference · Promptmint");
  expect(problems).toEqual([]);
  expect(outside).toEqual([]);
});

test("the sandbox's payout onboarding page wears the sign-in pages' shell", async ({ page }, testInfo) => {
  const problems = await watchProblems(page);
  const person = newPerson();
  await signUp(page, person);
  await expect(page).toHaveURL(/\/dashboard$/);
  await verifyEmailFromOutbox(page, person);
  await page.goto("/earnings");
  await page.getByRole("button", { name: "Set up payouts" }).click();
  await expect(page.getByRole("heading", { name: "Set up payouts (sandbox)" })).toBeVisible();
  await expect(page).toHaveTitle("Set up payouts · Promptmint");

  await screenshotBothWidths(page, testInfo, "payout-onboarding", async () => {
    await expect(page.getByRole("button", { name: "Continue" })).toBeVisible();
  });
  // The shell's stylesheet applies: the button is the brand blue, as on the sign-in page.
  await expect(page.getByRole("button", { name: "Continue" })).toHaveCSS(
    "background-color",
    "rgb(37, 99, 235)",
  );

  await page.getByLabel("Test bank account: succeeds payouts").check();
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page).toHaveURL(/\/earnings/);
  await expect(page.getByText("Payouts are enabled.")).toBeVisible();
  expect(problems).toEqual([]);
});
