import { expect, type Page, test } from "@playwright/test";
import { newPerson, signUp, submitSignIn } from "./fixtures.ts";
import { demoURL } from "./playwright.config.ts";

// Issue 32: what a person trips over in their first week, at a phone's and a desktop's width.
const PHONE = { width: 390, height: 705 };
const DESKTOP = { width: 1280, height: 800 };

/** Every signed-in screen a new person can reach from the navigation. */
const ROUTES = [
  "/dashboard",
  "/applications",
  "/applications/create",
  "/analytics",
  "/prompts",
  "/workflows",
  "/api-test",
  "/explore",
  "/wallet",
  "/api-keys",
  "/profile",
] as const;

/** Console errors and uncaught exceptions of the page, from now on. */
function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`${page.url()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`${page.url()}: ${error.message}`));
  return errors;
}

test("a new person's screens: one title each, no console error, at 390 and 1280 px", async ({
  page,
}, testInfo) => {
  test.setTimeout(120_000);
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  const errors = collectErrors(page);
  const titles = new Map<string, string>();

  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    for (const route of ROUTES) {
      await page.goto(route);
      await expect(page.getByRole("heading", { level: 1 }).first()).toBeVisible();
      await expect(page).toHaveTitle(/ · Promptmint$/);
      // Every request the screen makes has been answered before its errors are counted.
      await page.waitForLoadState("networkidle");
      titles.set(route, await page.title());
    }
    await page.goto("/dashboard");
    await page.waitForLoadState("networkidle");
    const path = testInfo.outputPath(`dashboard-new-person-${size.width}.png`);
    await page.screenshot({ path, fullPage: true });
    await testInfo.attach(`new person's dashboard at ${size.width} px`, { path, contentType: "image/png" });
  }

  // One title per route: tabs, history and bookmarks tell them apart.
  expect(new Set(titles.values()).size).toBe(ROUTES.length);
  expect(titles.get("/wallet")).toBe("Wallet · Promptmint");
  // No refused admin check, no 403 or 404 logged, nothing thrown, for a person who is no operator.
  expect(errors).toEqual([]);
  // A brand-new person has nothing to earn yet.
  await expect(page.getByRole("link", { name: "Earnings" })).toHaveCount(0);
});

test("a failed request shows its error box within 2 s, not after retries", async ({ page }) => {
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  await page.route("**/api/app/", (route) =>
    route.fulfill({ status: 500, contentType: "application/json", body: '{"message":"down"}' }),
  );
  const failed = page.waitForResponse((response) => response.url().endsWith("/api/app/"));
  await page.goto("/applications");
  await failed;
  const started = Date.now();
  await expect(page.getByText("Failed to load dashboard data")).toBeVisible({ timeout: 2_000 });
  expect(Date.now() - started).toBeLessThan(2_000);
});

test.describe("the seeded demo", () => {
  test.use({ baseURL: demoURL });

  test("is editable: the creator changes a seeded app's visibility and it saves", async ({ page }) => {
    await page.goto("/login");
    await page.getByRole("button", { name: "Sign In" }).click();
    await submitSignIn(page, { email: "demo@promptmint.dev", password: "Mint-sandbox-2026" });
    await expect(page).toHaveURL(/\/(dashboard)?$/);
    await page.goto("/applications");
    await page.getByRole("link", { name: "Support Chatbot", exact: true }).first().click();
    await expect(page.getByRole("heading", { name: "Support Chatbot", level: 1 })).toBeVisible();
    await page.getByRole("button", { name: "Edit", exact: true }).click();
    await page.getByLabel("Visibility").selectOption("private");
    await page.getByRole("button", { name: "Save Changes" }).click();
    await expect(page.getByText("Application updated")).toBeVisible();
    await expect(page.getByText(/At least \d+ cents/)).toHaveCount(0);
  });
});
