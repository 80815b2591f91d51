import { expect, type Page, test } from "@playwright/test";
import { completeSignUp, createLiveApp, newPerson, signOut, signUp } from "./fixtures.ts";

/** The sandbox card form and a billing address: 4242… succeeds. */
async function payByNewCard(page: Page) {
  const checkout = page.getByRole("dialog", { name: "Subscribe to Pro" });
  await checkout.getByLabel("Card number").fill("4242 4242 4242 4242");
  await checkout.getByLabel("Expiry (MM/YY)").fill("12/34");
  await checkout.getByLabel("CVC").fill("123");
  await checkout.getByLabel("Name on card").fill("Consumer Person");
  await checkout.getByLabel("Address line 1").fill("1 Main St");
  await checkout.getByLabel("City").fill("Austin");
  await checkout.getByLabel("Postal code").fill("78701");
  await checkout.getByLabel("Country").selectOption("US");
  await checkout.getByRole("button", { name: "Subscribe for $5.00/usd" }).click();
  await expect(checkout).toBeHidden();
}

/**
 * Issue 42: a visitor finds a plan on Explore, signs up on the way and lands back in that plan's
 * checkout, then finds the subscription under My subscriptions, cancels it and resumes it, at
 * 1280 and 390 px wide.
 */
for (const size of [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
]) {
  test(`a visitor subscribes from Explore and cancels and resumes it in My subscriptions (${size.width} px)`, async ({
    page,
  }) => {
    test.setTimeout(180_000);
    await page.setViewportSize({ width: 1280, height: 800 });
    const creator = newPerson();
    const consumer = newPerson();

    // The creator sells 'Pro' on a public, live app.
    await signUp(page, creator);
    await expect(page).toHaveURL(/\/dashboard$/);
    const name = `Subscribe ${size.width} ${Date.now().toString(36)}`;
    const slug = await createLiveApp(page, { name, priceCents: 50 });
    await page.goto(`/applications/${slug}/billing`);
    await page.getByRole("button", { name: "Create Plan" }).click();
    const planDialog = page.getByRole("dialog", { name: "Create Plan" });
    await planDialog.getByLabel("Plan name").fill("Pro");
    await planDialog.getByLabel("Price (USD per period)").fill("5.00");
    await planDialog.getByLabel("Included calls").fill("2");
    await planDialog.getByRole("button", { name: "Create Plan" }).click();
    await expect(planDialog).toBeHidden();
    // Signed out everywhere (the issuer's session too) before the visitor's turn.
    const ended = page.waitForResponse((response) => response.url().includes("/oidc/session/end/confirm"));
    await signOut(page);
    await ended;
    await expect(page).toHaveURL(/\/$/);
    await expect(page.getByRole("link", { name: "Get Started Free" })).toBeVisible();

    // A visitor, signed out, finds the plan where the app is shown and subscribes.
    await page.setViewportSize(size);
    await page.goto(`/explore/${slug}`);
    const plans = page.getByRole("region", { name: "Plans" });
    await plans.getByRole("button", { name: "Subscribe to Pro" }).click();
    await expect(page).toHaveURL(/\/login$/);
    await page.getByRole("link", { name: "Create new account" }).click();
    await completeSignUp(page, consumer);

    // Back on the app's page, in the same plan's checkout.
    const checkout = page.getByRole("dialog", { name: "Subscribe to Pro" });
    await expect(checkout).toBeVisible();
    await expect(page).toHaveURL(new RegExp(`/explore/${slug}#plans$`));
    await expect(checkout.getByRole("button", { name: "Subscribe for $5.00/usd" })).toBeInViewport();
    await payByNewCard(page);
    await expect(plans.getByRole("button", { name: "Pro: your current plan" })).toBeDisabled();

    // My subscriptions lists it, with its app, calls used, and when it renews.
    await plans.getByRole("link", { name: "My subscriptions" }).click();
    await expect(page.getByRole("heading", { name: "My Subscriptions", level: 1 })).toBeVisible();
    const subscription = page
      .getByRole("list", { name: "Subscriptions" })
      .getByRole("listitem", { name: "Pro" });
    await expect(subscription.getByRole("link", { name })).toBeVisible();
    await expect(subscription).toContainText("active");
    await expect(subscription).toContainText("0 / 2");
    await expect(subscription).toContainText("Renews on");

    await subscription.getByRole("button", { name: "Cancel Pro subscription" }).click();
    const confirm = page.getByRole("dialog", { name: "Cancel subscription?" });
    await confirm.getByRole("button", { name: "Cancel Subscription" }).click();
    await expect(confirm).toBeHidden();
    await expect(subscription.getByText("Canceling")).toBeVisible();
    await expect(subscription).toContainText("Ends on");

    await subscription.getByRole("button", { name: "Resume Pro subscription" }).click();
    await expect(subscription.getByRole("button", { name: "Cancel Pro subscription" })).toBeVisible();
    await expect(subscription.getByText("Canceling")).toBeHidden();
    await expect(subscription).toContainText("Renews on");
    // Nothing runs off the screen at this width.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  });
}
