import { expect, type Locator, test } from "@playwright/test";
import { completeSignUp, newPerson } from "./fixtures.ts";

/**
 * Issue 42: the README's quick start, step by step as written there, from the landing page to a
 * paid call made with the snippet Explore hands the buyer (its key filled in, its example input
 * valid). Every click a person makes is counted; the count and the time are printed, so the
 * README's "about N clicks" can be checked against a run.
 */
test("the README's quick start: from the landing page to a paid call with the snippet Explore gives", async ({
  browser,
  baseURL,
}, testInfo) => {
  test.setTimeout(180_000);
  const started = Date.now();
  let clicks = 0;
  const seller = await browser.newPage();
  const click = async (locator: Locator) => {
    clicks += 1;
    await locator.click();
  };

  // 1. Sell: Get Started, sign up, create a Public app with a price, Set as Live.
  await seller.goto("/");
  await click(seller.getByRole("link", { name: "Get Started Free" }).first());
  clicks += 1; // Create Account, inside completeSignUp
  await completeSignUp(seller, newPerson());
  await expect(seller).toHaveURL(/\/dashboard$/);
  await click(seller.getByRole("link", { name: "Create Application" }).first());
  const name = `Quick start ${Date.now().toString(36)}`;
  await seller.getByLabel("Application Name").fill(name);
  await seller.getByLabel("Visibility").selectOption("public");
  await seller.getByLabel("Price per API Call (cents)").fill("50");
  await click(seller.getByRole("button", { name: "Create Application" }));
  await expect(seller.getByRole("heading", { name, level: 1 })).toBeVisible();
  const slug = new URL(seller.url()).pathname.split("/").pop() ?? "";
  await click(seller.getByRole("button", { name: "Set as Live" }));
  await expect(seller.getByRole("button", { name: "Set as Live" })).toBeDisabled();

  // 2. Buy, as a second person (a private window): sign up, top up with Apple Pay (sandbox).
  const context = await browser.newContext({ baseURL, permissions: ["clipboard-read", "clipboard-write"] });
  const buyer = await context.newPage();
  await buyer.goto("/register");
  clicks += 2; // Create Account, Create account
  await completeSignUp(buyer, newPerson());
  await expect(buyer).toHaveURL(/\/dashboard$/);
  await click(buyer.getByRole("link", { name: "Wallet" }).first());
  // The tile a person clicks (its radio is the label's own input).
  await click(buyer.locator("label").filter({ hasText: "Apple Pay" }));
  await expect(buyer.getByRole("radio", { name: "Apple Pay" })).toBeChecked();
  await click(buyer.getByRole("button", { name: "Pay $10.00 with Apple Pay" }));
  await expect(buyer.getByText("Added $10.00 to your wallet. New balance: $10.00.")).toBeVisible();

  // 3. Explore → the app → Create a key for this snippet → Copy cURL, and run it.
  await click(buyer.getByRole("link", { name: "Explore" }).first());
  await click(buyer.getByRole("link", { name }).first());
  await click(buyer.getByRole("button", { name: "Create a key for this snippet" }));
  await expect(buyer.getByRole("button", { name: "Reveal" })).toBeVisible();
  // The page shows the key masked; Copy takes it whole, as a person pastes it into a shell.
  await expect(buyer.locator("pre code").first()).toContainText("••••");
  await click(buyer.getByRole("button", { name: "Copy curl" }));
  const curl = await buyer.evaluate(() => navigator.clipboard.readText());
  expect(curl).toMatch(/^curl -X POST /);
  expect(curl).not.toContain("YOUR_API_KEY");
  expect(curl).not.toMatch(/<[a-z_]+>/);
  // The snippet as a shell would run it: its URL, its headers, its body.
  const url = /curl -X POST (\S+)/.exec(curl ?? "")?.[1] ?? "";
  const key = /Authorization: Bearer (pm_\S+?)"/.exec(curl ?? "")?.[1] ?? "";
  const body = /-d '([\s\S]*)'$/.exec(curl?.trim() ?? "")?.[1] ?? "";
  const answer = await fetch(url, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body,
  });
  expect(answer.status).toBe(200);
  expect(answer.headers.get("promptmint-charged")).toBe("0.50 USD");
  const answered = (await answer.json()) as { answer?: string };
  expect(answered.answer).toBeTruthy();

  // The wallet says what the call cost.
  await buyer.goto("/wallet");
  await expect(buyer.getByRole("region", { name: "Balances" }).getByText("$9.50")).toBeVisible();

  const seconds = (Date.now() - started) / 1000;
  console.log(`quick start: ${clicks} clicks, ${seconds.toFixed(1)} s scripted (app ${slug})`);
  testInfo.annotations.push({
    type: "quick-start",
    description: `${clicks} clicks, ${seconds.toFixed(1)} s`,
  });
  await context.close();
});
