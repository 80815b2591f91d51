import { expect, type Locator, type Page, test } from "@playwright/test";
import {
  callFromTestConsole,
  createApiKey,
  createLiveApp,
  newPerson,
  signOut,
  signUp,
  submitSignIn,
  topUpFromZero,
} from "./fixtures.ts";

/** The sandbox card form: 4242… succeeds. */
async function fillCard(scope: Locator | Page, number = "4242 4242 4242 4242") {
  await scope.getByLabel("Card number").fill(number);
  await scope.getByLabel("Expiry (MM/YY)").fill("12/34");
  await scope.getByLabel("CVC").fill("123");
}

/** Signs out and waits for the issuer to end its session too, so the next sign-in asks for a password. */
async function signOutEverywhere(page: Page) {
  const ended = page.waitForResponse((response) => response.url().includes("/oidc/session/end/confirm"));
  await signOut(page);
  await ended;
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("link", { name: "Get Started Free" })).toBeVisible();
}

async function openUserMenuItem(page: Page, name: string) {
  await page.getByRole("button", { name: "User menu" }).click();
  await page.getByRole("menuitem", { name }).click();
}

test("a creator sells a plan; a consumer tops up, subscribes by card, uses the included calls and cancels", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const creator = newPerson();
  const consumer = newPerson();

  // The creator publishes a public prompt app at 50 cents a call.
  await signUp(page, creator);
  await expect(page).toHaveURL(/\/dashboard$/);
  const name = `Plan Writer ${Date.now().toString(36)}`;
  const slug = await createLiveApp(page, { name, description: "Writes on any topic.", priceCents: 50 });

  // On the app's billing page, the owner creates the 'Pro' plan: $5.00 for 2 calls.
  await page.goto(`/applications/${slug}/billing`);
  await expect(page.getByRole("heading", { name: "Billing & Subscriptions" })).toBeVisible();
  await expect(page.getByText("Sandbox payments — no real money moves")).toBeVisible();
  await page.getByRole("button", { name: "Create Plan" }).click();
  const planDialog = page.getByRole("dialog", { name: "Create Plan" });
  await planDialog.getByLabel("Plan name").fill("Pro");
  await planDialog.getByLabel("Price (USD per period)").fill("5.00");
  await planDialog.getByLabel("Included calls").fill("2");
  await planDialog.getByLabel("Description").fill("Two calls a month, then pay per call.");
  await planDialog.getByLabel("Features").fill("Support: Email");
  await planDialog.getByRole("button", { name: "Create Plan" }).click();
  await expect(planDialog).toBeHidden();
  await expect(page.getByRole("list", { name: "Your plans" })).toContainText("$5.00/usd · 2 included calls");
  const proCard = page.getByRole("list", { name: "Available plans" }).getByRole("listitem", { name: "Pro" });
  await expect(proCard.getByText("Popular")).toBeVisible();
  await signOutEverywhere(page);

  // The consumer tops up $10 with the sandbox's good card.
  await signUp(page, consumer);
  await expect(page).toHaveURL(/\/dashboard$/);
  await openUserMenuItem(page, "Wallet");
  await expect(page).toHaveURL(/\/wallet$/);
  const balances = page.getByRole("region", { name: "Balances" });
  await expect(balances).toContainText("$0.00");
  await topUpFromZero(page, 10);
  await expect(balances).toContainText("$10.00");
  await expect(page.getByRole("table", { name: "Statement" })).toContainText("+$10.00");

  // ...subscribes to Pro, paying the first period by card.
  await page.goto(`/applications/${slug}/billing`);
  await expect(page.getByRole("heading", { name: "Plans", exact: true })).toBeHidden();
  await page.getByRole("button", { name: "Subscribe to Pro" }).click();
  const checkout = page.getByRole("dialog", { name: "Subscribe to Pro" });
  await expect(checkout.getByText("Includes:")).toBeVisible();
  // Its main button is in view without scrolling, on a phone and on a desktop (the dialog's footer stays).
  const subscribeButton = checkout.getByRole("button", { name: "Subscribe for $5.00/usd" });
  for (const size of [
    { width: 390, height: 705 },
    { width: 1280, height: 800 },
  ]) {
    await page.setViewportSize(size);
    await expect(subscribeButton).toBeInViewport({ ratio: 1 });
  }
  await fillCard(checkout);
  await checkout.getByLabel("Name on card").fill("Consumer Person");
  await checkout.getByLabel("Address line 1").fill("1 Main St");
  await checkout.getByLabel("City").fill("Austin");
  await checkout.getByLabel("Postal code").fill("78701");
  await checkout.getByLabel("Country").selectOption("US");
  await checkout.getByRole("button", { name: "Subscribe for $5.00/usd" }).click();
  await expect(checkout).toBeHidden();
  const subscription = page
    .getByRole("list", { name: "Subscriptions" })
    .getByRole("listitem", { name: "Pro" });
  await expect(subscription).toContainText("active");
  await expect(subscription).toContainText("0 / 2");
  await expect(proCard.getByRole("button", { name: "Current Plan" })).toBeDisabled();

  // ...creates an API key and calls the app three times from the test console.
  await openUserMenuItem(page, "API Keys");
  const apiKey = await createApiKey(page, "Billing journey");
  await callFromTestConsole(page, { slug, apiKey, input: "green tea", times: 3 });
  await expect(page.getByRole("region", { name: "Completion result" })).toBeVisible();

  // Two calls came out of the plan; only the third was paid from the wallet.
  await page.goto(`/applications/${slug}/billing`);
  await expect(subscription).toContainText("2 / 2");
  await page.goto("/wallet");
  await expect(balances).toContainText("$9.50");
  await expect(page.getByRole("table", { name: "Statement" })).toContainText("-$0.50");

  // ...and cancels: the plan runs to the end of the period, marked 'Canceling'.
  await page.goto(`/applications/${slug}/billing`);
  await subscription.getByRole("button", { name: "Cancel Pro subscription" }).click();
  const confirm = page.getByRole("dialog", { name: "Cancel subscription?" });
  await confirm.getByRole("button", { name: "Cancel Subscription" }).click();
  await expect(confirm).toBeHidden();
  await expect(subscription.getByText("Canceling")).toBeVisible();
  await expect(subscription.getByRole("button", { name: "Cancel Pro subscription" })).toBeHidden();
  await signOutEverywhere(page);

  // The creator sees what they earned: the plan and the paid call, less the platform fee.
  await page.goto("/wallet");
  await expect(page).toHaveURL(/\/login$/);
  await page.getByRole("button", { name: "Sign In" }).click();
  await submitSignIn(page, creator);
  await expect(page).toHaveURL(/\/wallet$/);
  const earnings = page.getByRole("region", { name: "Balances" }).getByText("Earnings").locator("xpath=..");
  await expect(earnings).toContainText("$4.95");
  // The paid call's hold closed after its answer and posted it: one line for the calls it paid.
  const history = page.getByRole("table", { name: "Earnings history" });
  await expect(history.getByRole("row", { name: /Earned from 1 paid call/ })).toContainText("+$0.45");
});
