import { type APIRequestContext, expect, type Locator, type Page, test } from "@playwright/test";
import { createApiKey, createLiveApp, newPerson, signUp, topUpFromZero } from "./fixtures.ts";

/** What a call's answer says about how it was paid (metadata.usage, decision 080). */
interface Paid {
  paidBy: string;
  chargedCents: number;
}

/** One blocking completion with the buyer's API key, answered 200. */
async function call(request: APIRequestContext, slug: string, apiKey: string, n: number): Promise<Paid> {
  const response = await request.post(`/api/app/${slug}/completion-messages`, {
    headers: { authorization: `Bearer ${apiKey}` },
    data: { inputs: { query: `Question ${n}` }, response_mode: "blocking", user: "buyer" },
  });
  expect(response.status(), await response.text()).toBe(200);
  const usage = (await response.json()).metadata.usage;
  return { paidBy: usage.paid_by, chargedCents: usage.charged_cents };
}

/** A figure of the Health card on an app's Explore page, by its label. */
function healthFigure(page: Page, label: string): Locator {
  return page
    .locator("dl > div")
    .filter({ has: page.getByText(label, { exact: true }) })
    .locator("dd");
}

/** A latency as the rollup keeps it: floored to three significant digits (decision 081). */
function bucketOf(ms: number): number {
  if (ms < 1000) return ms;
  const scale = 10 ** (Math.floor(Math.log10(ms)) - 2);
  return Math.floor(ms / scale) * scale;
}

/** format.ts's rules, as the page shows a rate and a duration. */
const shownRate = (rate: number) => `${(Math.round(rate * 1000) / 10).toFixed(1)}%`;
const shownDuration = (ms: number) =>
  ms < 1000 ? `${ms} ms` : `${(Math.round(ms / 100) / 10).toFixed(1)} s`;

async function noOverflow(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
}

/**
 * Issue 42, buying made easy: a creator offers a free trial and a promotion code on a paid app; a
 * buyer takes the trial, redeems the code, tops up with Apple Pay (sandbox), calls the app with an
 * API key, rates it, and the app's measured health matches its recorded calls; at 1280 and 390 px.
 */
for (const size of [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
]) {
  test(`a buyer tries, redeems, tops up with Apple Pay, rates and sees measured health (${size.width} px)`, async ({
    page,
    browser,
  }, testInfo) => {
    test.setTimeout(150_000);
    await page.setViewportSize(size);
    const creator = newPerson();
    const tag = `${size.width}${Date.now().toString(36)}`.toUpperCase();
    const name = `Buying ${tag}`;
    const code = `TRY${tag}`;
    const trialCalls = 3;

    // The creator funds their wallet (trials and codes are paid from it), publishes a $1.00 app,
    // offers three free calls and a $2.00 code good five times.
    await signUp(page, creator);
    await expect(page).toHaveURL(/\/dashboard$/);
    await page.goto("/wallet");
    await topUpFromZero(page, 10);
    const slug = await createLiveApp(page, { name, priceCents: 100 });
    await page.goto(`/applications/${slug}/billing`);
    const trialForm = page.getByRole("form", { name: "Free trial" });
    await trialForm.getByLabel("Free calls per consumer").fill(String(trialCalls));
    await trialForm.getByRole("button", { name: "Save trial" }).click();
    await expect(trialForm.getByText("Free trial saved")).toBeVisible();
    await expect(trialForm).toContainText("Offered: 3 free calls per consumer.");
    const codeForm = page.getByRole("form", { name: "Create a promotion code" });
    await codeForm.getByLabel("Code", { exact: true }).fill(code);
    await codeForm.getByLabel("Credit (USD)").fill("2.00");
    await codeForm.getByLabel("Most redemptions").fill("5");
    await codeForm.getByRole("button", { name: "Create code" }).click();
    const codeRow = page
      .getByRole("list", { name: "Your promotion codes" })
      .getByRole("listitem", { name: code });
    await expect(codeRow).toContainText("$2.00 credit");
    await expect(codeRow).toContainText("0 of 5 redeemed");
    await expect(codeRow).toContainText("Active");

    // The buyer, in a browser of their own, starts the free trial on the app's Explore page.
    const buyerContext = await browser.newContext({ baseURL: testInfo.project.use.baseURL, viewport: size });
    const buyer = await buyerContext.newPage();
    await signUp(buyer, newPerson());
    await expect(buyer).toHaveURL(/\/dashboard$/);
    await buyer.goto(`/explore/${slug}`);
    await expect(buyer.getByRole("heading", { name, level: 1 })).toBeVisible();
    await buyer.getByRole("button", { name: "Start free trial (3 calls)" }).click();
    await expect(buyer.getByText("Your free trial is on")).toBeVisible();
    await expect(
      buyer.getByText("3 calls left: run the app above, or call it with your API key."),
    ).toBeVisible();

    // Two calls with an API key: paid by the trial, nothing charged.
    await buyer.goto("/api-keys");
    const apiKey = await createApiKey(buyer, "Buying");
    const paid: Paid[] = [];
    for (let n = 1; n <= 2; n++) paid.push(await call(buyer.request, slug, apiKey, n));
    expect(paid).toEqual([
      { paidBy: "trial", chargedCents: 0 },
      { paidBy: "trial", chargedCents: 0 },
    ]);

    // The code, redeemed on the Wallet page: the credits show the trial's last call and the $2.00.
    await buyer.goto("/wallet");
    await expect(buyer.getByRole("region", { name: "Balances" })).toContainText("$0.00");
    await buyer.getByLabel("Redeem a code").fill(code);
    await buyer.getByRole("button", { name: "Redeem", exact: true }).click();
    const redeemed = buyer.getByRole("form", { name: "Redeem a promotion code" }).getByText("Code redeemed");
    await expect(redeemed).toBeVisible();
    const trialRow = buyer.getByRole("listitem").filter({ hasText: "Free trial" }).filter({ hasText: name });
    await expect(trialRow).toContainText("1 free call left");
    const promotionRow = buyer
      .getByRole("listitem")
      .filter({ hasText: "Promotion" })
      .filter({ hasText: code });
    await expect(promotionRow).toContainText("$2.00 left");
    await expect(promotionRow).toContainText(name);
    await noOverflow(buyer);
    await buyer
      .locator("div")
      .filter({ has: buyer.getByRole("heading", { name: "Trials and promotional credit" }) })
      .filter({ has: buyer.getByRole("form", { name: "Redeem a promotion code" }) })
      .last()
      .screenshot({ path: testInfo.outputPath(`wallet-credits-${size.width}.png`) });

    // A top-up with Apple Pay (the sandbox's wallet choice).
    await buyer.getByRole("button", { name: "$10", exact: true }).click();
    // The radio itself is visually hidden: the buyer taps its card.
    await buyer.getByText("Apple Pay", { exact: true }).click();
    await expect(buyer.getByRole("radio", { name: "Apple Pay" })).toBeChecked();
    await buyer.getByRole("button", { name: "Pay $10.00 with Apple Pay" }).click();
    await expect(buyer.getByText("Added $10.00 to your wallet. New balance: $10.00.")).toBeVisible();

    // The trial's last call, the code's two dollars, then the wallet: ten calls in all.
    for (let n = 3; n <= 10; n++) paid.push(await call(buyer.request, slug, apiKey, n));
    expect(paid.slice(2)).toEqual([
      { paidBy: "trial", chargedCents: 0 },
      { paidBy: "promotion", chargedCents: 0 },
      { paidBy: "promotion", chargedCents: 0 },
      ...Array.from({ length: 5 }, () => ({ paidBy: "wallet", chargedCents: 100 })),
    ]);
    // $10.00 less five $1.00 calls: the balance, with what the last call's lease still holds
    // (it returns within seconds, decision 062).
    await buyer.reload();
    const balances = buyer.getByRole("region", { name: "Balances" });
    await expect(balances).toContainText("Balance$");
    const figures = /Balance\$(\d+\.\d\d)(?:On hold\$(\d+\.\d\d))?/.exec(
      (await balances.textContent()) ?? "",
    );
    expect(Number(figures?.[1]) + Number(figures?.[2] ?? 0)).toBeCloseTo(5, 2);

    // The buyer rates the app on its page; the rating is on its card in Explore.
    await buyer.goto(`/explore/${slug}`);
    const reviews = buyer.getByRole("region", { name: "Reviews" });
    await reviews.getByRole("button", { name: "Write a review" }).click();
    await reviews.getByRole("radio", { name: "4 stars: Very good" }).check();
    await reviews.getByLabel("Review (optional)").fill("Three free calls sold me.");
    await reviews.getByRole("button", { name: "Post review" }).click();
    await expect(reviews.getByRole("region", { name: "Your review" })).toContainText(
      "Three free calls sold me.",
    );
    await buyer.goto(`/explore?q=${encodeURIComponent(name)}`);
    const card = buyer.getByRole("list", { name: "Apps" }).getByRole("listitem");
    await expect(card).toHaveCount(1);
    await expect(card.getByRole("img", { name: "Rated 4.0 out of 5 from 1 review" })).toBeVisible();

    // The recorded calls, as the creator's analytics list them (newest first, up to 20).
    const listed = page.waitForResponse(
      (response) =>
        new URL(response.url()).pathname === `/api/app/${slug}/analytics/invocations/` &&
        response.status() === 200,
    );
    await page.goto(`/applications/${slug}/analytics`);
    const recorded: { status: string; response_time: number }[] = (await (await listed).json())
      .recent_invocations;
    expect(recorded).toHaveLength(paid.length);
    const failed = recorded.filter((row) => row.status === "error").length;
    const latencies = recorded
      .filter((row) => row.status === "success")
      .map((row) => bucketOf(Math.round(row.response_time * 1000)))
      .sort((a, b) => a - b);
    const median = latencies[Math.ceil(latencies.length / 2) - 1] ?? 0;

    // The health the buyer sees: uptime, error rate, median latency and calls of those calls.
    await buyer.goto(`/explore/${slug}`);
    await expect(async () => {
      await buyer.reload();
      await expect(healthFigure(buyer, "Calls")).toHaveText(String(recorded.length), { timeout: 2_000 });
    }).toPass({ timeout: 30_000 });
    await expect(healthFigure(buyer, "Uptime")).toHaveText(shownRate(1 - failed / recorded.length));
    await expect(healthFigure(buyer, "Error rate")).toHaveText(shownRate(failed / recorded.length));
    await expect(healthFigure(buyer, "Median latency")).toHaveText(shownDuration(median));
    await expect(buyer.getByText("Free trial used")).toBeVisible();
    await noOverflow(buyer);
    await buyer.screenshot({ path: testInfo.outputPath(`explore-app-${size.width}.png`), fullPage: true });
    // The list card's one line says the same.
    await buyer.goto(`/explore?q=${encodeURIComponent(name)}`);
    await expect(card).toContainText(
      `${shownRate(1 - failed / recorded.length)} uptime · ${shownDuration(median)} median`,
    );
    await buyerContext.close();
  });
}
