import { type Browser, expect, type Page, type Route, type TestInfo, test } from "@playwright/test";
import {
  callFromTestConsole,
  createApiKey,
  createLiveApp,
  newPerson,
  type Person,
  signUp,
  submitSignIn,
} from "./fixtures.ts";
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

test("a failed request shows its error box at once, not after retries", async ({ page }) => {
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  // Off the dashboard first, so that its own request for the list cannot be answered here.
  await page.goto("about:blank");
  // The first request for the list fails; any later one (a retry, a refetch) is never answered.
  // The box must come from the first answer alone: a page that waited on a retry would never show
  // it. A condition, not a clock, so a loaded machine cannot fail it (decision 066).
  const unanswered: Route[] = [];
  let failed = false;
  await page.route("**/api/app/", (route) => {
    if (!failed) {
      failed = true;
      return route.fulfill({ status: 500, contentType: "application/json", body: '{"message":"down"}' });
    }
    unanswered.push(route);
  });
  await page.goto("/applications");
  await expect(page.getByText("Failed to load dashboard data")).toBeVisible();
  await page.unrouteAll({ behavior: "ignoreErrors" });
  for (const route of unanswered) await route.abort().catch(() => {});
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

/** A screenshot of the page as it is, attached to the report, at the viewport's width. */
async function snap(page: Page, testInfo: TestInfo, name: string, fullPage = true): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  const path = testInfo.outputPath(`${name}-${width}.png`);
  await page.screenshot({ path, fullPage });
  await testInfo.attach(`${name} at ${width} px`, { path, contentType: "image/png" });
}

/** A second person in their own browser context, signed up and on their dashboard. */
async function anotherPerson(browser: Browser, testInfo: TestInfo, person: Person): Promise<Page> {
  const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL, viewport: DESKTOP });
  const page = await context.newPage();
  await signUp(page, person);
  await expect(page).toHaveURL(/\/dashboard$/);
  return page;
}

test("Create Application shows the starter model's lowest price and refuses less at the field", async ({
  page,
}, testInfo) => {
  test.setTimeout(120_000);
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  for (const size of [PHONE, DESKTOP]) {
    await page.setViewportSize(size);
    await page.goto("/applications/create");
    const price = page.getByLabel("Price per API Call (cents)");
    // The figure comes from the server's price guard (GET /prompt-apps/starter/), not a copy of it.
    await expect(page.getByText(/At least \$0\.\d\d per call for the starter model \(gpt4\)/)).toBeVisible();
    const hint = (await page.getByText(/per call for the starter model/).textContent()) ?? "";
    const floorCents = Math.round(Number(/\$(\d+\.\d\d) per call for/.exec(hint)?.[1]) * 100);
    expect(floorCents).toBeGreaterThan(1);
    await page.getByLabel("Application Name").fill("Too Cheap Writer");
    await price.fill(String(floorCents - 1));
    await page.getByRole("button", { name: "Create Application" }).click();
    // One short sentence, once, beside the field, with the figure that passes; nothing created.
    const refusal = page.getByText(
      new RegExp(`^At least ${floorCents} cents \\(\\$0\\.\\d\\d\\) a call covers`),
    );
    await expect(refusal).toBeVisible();
    await expect(page.getByText(/a call covers its worst case/)).toHaveCount(1);
    await expect(price).toHaveAttribute("aria-invalid", "true");
    await expect(page).toHaveURL(/\/applications\/create$/);
    await snap(page, testInfo, "create-app-price-refused");
    // The figure it names passes.
    await price.fill(String(floorCents));
    await page.getByRole("button", { name: "Create Application" }).click();
    await expect(page.getByRole("heading", { name: "Too Cheap Writer", level: 1 })).toBeVisible();
  }
});

test("a card saved moments earlier is offered and used, and the creator's earnings are one line a day", async ({
  page,
  browser,
}, testInfo) => {
  test.setTimeout(240_000);
  // The creator publishes an app at 10 cents a call with a $5.00 plan of 2 calls.
  await signUp(page, newPerson());
  await expect(page).toHaveURL(/\/dashboard$/);
  const name = `Card Writer ${Date.now().toString(36)}`;
  const slug = await createLiveApp(page, { name, priceCents: 10 });
  await page.goto(`/applications/${slug}/billing`);
  await page.getByRole("button", { name: "Create Plan" }).click();
  const planDialog = page.getByRole("dialog", { name: "Create Plan" });
  await planDialog.getByLabel("Plan name").fill("Pro");
  await planDialog.getByLabel("Price (USD per period)").fill("5.00");
  await planDialog.getByLabel("Included calls").fill("2");
  await planDialog.getByRole("button", { name: "Create Plan" }).click();
  await expect(planDialog).toBeHidden();

  // A consumer saves a card on the app's billing page...
  const consumer = await anotherPerson(browser, testInfo, newPerson());
  await consumer.goto(`/applications/${slug}/billing`);
  await consumer.getByRole("button", { name: "Add Payment Method" }).click();
  const addCard = consumer.getByRole("dialog", { name: "Add Payment Method" });
  await addCard.getByLabel("Card number").fill("5555 5555 5555 4444");
  await addCard.getByLabel("Expiry (MM/YY)").fill("12/34");
  await addCard.getByLabel("CVC").fill("123");
  await addCard.getByLabel("Name on card").fill("Consumer Person");
  await addCard.getByLabel("Address line 1").fill("1 Main St");
  await addCard.getByLabel("City").fill("Austin");
  await addCard.getByLabel("Postal code").fill("78701");
  await addCard.getByLabel("Country").selectOption("US");
  await addCard.getByRole("button", { name: "Add Payment Method" }).click();
  await expect(addCard).toBeHidden();

  // ...and moments later the checkout offers it, chosen, with no card to type again.
  await consumer.getByRole("button", { name: "Subscribe to Pro" }).click();
  const checkout = consumer.getByRole("dialog", { name: "Subscribe to Pro" });
  const saved = checkout.getByRole("radio", { name: "Mastercard •••• 4444" });
  await expect(saved).toBeChecked();
  await expect(checkout.getByRole("radio", { name: "Use a new card" })).not.toBeChecked();
  await expect(checkout.getByLabel("Card number")).toHaveCount(0);
  const subscribe = checkout.getByRole("button", { name: "Subscribe for $5.00/usd" });
  for (const size of [PHONE, DESKTOP]) {
    await consumer.setViewportSize(size);
    // The main button is in view without scrolling (the dialog's footer stays).
    await expect(subscribe).toBeInViewport({ ratio: 1 });
    await snap(consumer, testInfo, "checkout-saved-card", false);
  }
  // A new card is still one click away, and the saved one one click back.
  await checkout.getByText("Use a new card").click();
  await expect(checkout.getByLabel("Card number")).toBeVisible();
  await checkout.getByText("Mastercard •••• 4444").click();
  await expect(saved).toBeChecked();
  await subscribe.click();
  await expect(checkout).toBeHidden();
  const subscription = consumer
    .getByRole("list", { name: "Subscriptions" })
    .getByRole("listitem", { name: "Pro" });
  await expect(subscription).toContainText("active");

  // The wallet's top-up offers the same card, and it pays.
  await consumer.goto("/wallet");
  await expect(consumer.getByRole("radio", { name: "Mastercard •••• 4444" })).toBeChecked();
  await expect(consumer.getByLabel("Card number")).toHaveCount(0);
  for (const size of [PHONE, DESKTOP]) {
    await consumer.setViewportSize(size);
    await snap(consumer, testInfo, "wallet-top-up-saved-card");
  }
  await consumer.getByRole("button", { name: "Top up $10.00" }).click();
  await expect(consumer.getByText("Added $10.00 to your wallet. New balance: $10.00.")).toBeVisible();
  await expect(consumer.getByRole("table", { name: "Statement" })).toContainText(
    "Wallet top-up (card •••• 4444)",
  );

  // Four calls: two from the plan, two paid from the wallet, earned by the creator on one line.
  await consumer.goto("/api-keys");
  const apiKey = await createApiKey(consumer, "First week");
  await callFromTestConsole(consumer, { slug, apiKey, input: "green tea", times: 4 });
  await consumer.context().close();

  await page.goto("/wallet");
  const history = page.getByRole("table", { name: "Earnings history" });
  // The calls' leases post when they close, just after the answers.
  await expect(async () => {
    await page.reload();
    await expect(history.getByRole("row", { name: /Earned from 2 paid calls/ })).toBeVisible({
      timeout: 2_000,
    });
  }).toPass({ timeout: 45_000 });
  const calls = history.getByRole("row", { name: /Earned from 2 paid calls/ });
  await expect(calls).toContainText("+$0.18");
  await expect(calls).toContainText("(UTC day)");
  await expect(history.getByRole("row", { name: /Earned from 1 paid call\b/ })).toHaveCount(0);
  for (const size of [PHONE, DESKTOP]) {
    await page.setViewportSize(size);
    await snap(page, testInfo, "wallet-earnings-by-day");
  }
});
