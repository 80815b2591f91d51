import { expect, type Page, type TestInfo, test } from "@playwright/test";
import { newPerson, signUp, submitSignIn } from "./fixtures.ts";
import { demoURL } from "./playwright.config.ts";

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

/** The page does not scroll sideways on a 390 px phone (content wider than it would). */
async function expectFitsPhone(page: Page): Promise<void> {
  await page.setViewportSize(PHONE);
  await expect
    .poll(() => page.evaluate(() => document.documentElement.scrollWidth), { timeout: 5_000 })
    .toBeLessThanOrEqual(PHONE.width);
}

/** The page at 1280 and 390 px, full length, attached to the test's results. */
async function screenshots(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  for (const [label, size] of [
    ["1280", DESKTOP],
    ["390", PHONE],
  ] as const) {
    await page.setViewportSize(size);
    const path = testInfo.outputPath(`${name}-${label}.png`);
    await page.screenshot({ path, fullPage: true });
    await testInfo.attach(`${name} at ${label} px`, { path, contentType: "image/png" });
  }
  await page.setViewportSize(DESKTOP);
}

test("a new person without apps gets first steps, Explore and Wallet, and a profile with their balance", async ({
  page,
}, testInfo) => {
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);

  const steps = page.getByRole("region", { name: "Get started" });
  for (const [name, href] of [
    ["Explore apps", "/explore"],
    ["Top up your wallet", "/wallet"],
    ["Create an API key", "/api-keys"],
    ["Create your first app", "/applications/create"],
  ] as const)
    await expect(steps.getByRole("link", { name: new RegExp(name) })).toHaveAttribute("href", href);
  const nav = page.getByRole("navigation", { name: "Main" });
  await expect(nav.getByRole("link", { name: "Explore" })).toBeVisible();
  await expect(nav.getByRole("link", { name: "Wallet" })).toBeVisible();
  // SPEC's empty state, with its links and cards at 0.
  await expect(page.getByRole("heading", { name: "No applications" })).toBeVisible();
  await expect(page.getByText("Get started by creating a new application.")).toBeVisible();
  await expect(page.getByRole("link", { name: "Manage Workflows" })).toHaveAttribute("href", "/workflows");
  await expect(page.getByRole("region", { name: "Summary" }).getByText("Total Applications")).toBeVisible();
  await screenshots(page, testInfo, "dashboard-consumer");
  await expectFitsPhone(page);
  await page.setViewportSize(DESKTOP);

  await steps.getByRole("link", { name: /Top up your wallet/ }).click();
  await expect(page).toHaveURL(/\/wallet$/);

  await page.goto("/profile");
  // SPEC §6's Plan and Credits, with meaning: the credits are the wallet's balance.
  await expect(page.getByText("Credits", { exact: true })).toBeVisible();
  await expect(page.getByText("$0.00").first()).toBeVisible();
  await expect(
    page.getByText("Free — no monthly fee; the platform takes its fee per paid call"),
  ).toBeVisible();
  await screenshots(page, testInfo, "profile");
  await expectFitsPhone(page);
});

test("Test Prompt shows the model's answer with its tokens; the app's pages fit a phone", async ({
  page,
}, testInfo) => {
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  const name = `Phone Fit ${Date.now().toString(36)}`;
  await page.getByRole("link", { name: /Create your first app/ }).click();
  await page.getByLabel("Application Name").fill(name);
  await page.getByRole("button", { name: "Create Application" }).click();
  await expect(page.getByRole("heading", { name, level: 1 })).toBeVisible();
  const slug = new URL(page.url()).pathname.split("/").pop() ?? "";
  await screenshots(page, testInfo, "application-detail");
  await expectFitsPhone(page);
  await page.setViewportSize(DESKTOP);

  // The builder's four tabs do not fit a phone: the strip scrolls, the page does not.
  await page.goto(`/applications/${slug}/edit`);
  await expect(page.getByRole("tab", { name: "Preview & Test" })).toBeAttached();
  await screenshots(page, testInfo, "prompt-builder");
  await expectFitsPhone(page);
  await page.setViewportSize(DESKTOP);

  await page.goto(`/prompts/${slug}`);
  await page.getByRole("tab", { name: "Prompt Config" }).click();
  await page.getByRole("button", { name: "Test Prompt" }).click();
  const result = page.getByRole("status", { name: "Test result" });
  const answer = result.getByRole("region", { name: "Model answer" });
  // This server has no model keys: the sandbox answers, and says so.
  await expect(answer.getByText("sandbox", { exact: true })).toBeVisible();
  await expect(answer.getByText("Input tokens")).toBeVisible();
  await expect(answer.getByText("Output tokens")).toBeVisible();
  await expect(answer.getByText("Model cost", { exact: true })).toBeVisible();
  await expect(answer.locator("pre")).toContainText("[sandbox");
  await expect(result.getByText("Rendered Template")).toBeVisible();
  await screenshots(page, testInfo, "prompt-editor-test");
  await expectFitsPhone(page);

  // The test was the owner's own call: it is in the app's analytics.
  await page.goto(`/applications/${slug}/analytics`);
  await expect(page.getByRole("region", { name: "Recent Invocations", exact: true })).toBeVisible();
  await screenshots(page, testInfo, "application-analytics");
  await expectFitsPhone(page);
  await page.goto("/analytics");
  await expect(page.getByRole("region", { name: "Application Performance", exact: true })).toBeVisible();
  await screenshots(page, testInfo, "global-analytics");
  await expectFitsPhone(page);
});

test.describe("with demo data", () => {
  test.use({ baseURL: demoURL });

  test("every chart of a page shows the same days and round value ticks, drawn at once", async ({
    page,
  }, testInfo) => {
    await page.goto("/login");
    await page.getByRole("button", { name: "Sign In" }).click();
    await submitSignIn(page, { email: "demo@promptmint.dev", password: "Mint-sandbox-2026" });
    await expect(page).toHaveURL(/\/(dashboard)?$/);
    await expect(
      page.getByRole("region", { name: "Summary" }).getByText("Last 30 days").first(),
    ).toBeVisible();
    await screenshots(page, testInfo, "dashboard-creator");
    await expectFitsPhone(page);
    await page.setViewportSize(DESKTOP);

    await page.goto("/analytics");
    const ticks = (chart: string, axis: "xAxis" | "yAxis") =>
      page
        .getByRole("region", { name: chart })
        .locator(`.recharts-${axis}-tick-labels .recharts-cartesian-axis-tick-value`)
        .allTextContents();
    await expect(
      page
        .getByRole("region", { name: "Response Time Trend" })
        .locator(".recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value")
        .first(),
    ).toBeVisible();
    const days = await ticks("Invocations Over Time", "xAxis");
    expect(days.length).toBeGreaterThan(1);
    for (const chart of ["Success vs Error Rate", "Response Time Trend", "Token Usage"])
      expect(await ticks(chart, "xAxis")).toEqual(days);
    // Seconds, SPEC's unit, with the decimals their step needs ("0.025s", "1.50s") above the origin's "0".
    const [origin, ...seconds] = await ticks("Response Time Trend", "yAxis");
    expect(origin).toBe("0");
    for (const tick of seconds) expect(tick).toMatch(/^\d+(\.\d{2,3})?s$/);
    await screenshots(page, testInfo, "global-analytics-demo");
    await expectFitsPhone(page);
  });
});
