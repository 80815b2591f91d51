import { readFileSync } from "node:fs";
import { expect, type Page, test } from "@playwright/test";
import {
  callFromTestConsole,
  createApiKey,
  createLiveApp,
  newPerson,
  type Person,
  signOut,
  signUp,
  submitSignIn,
  topUpFromZero,
  verifyEmailFromOutbox,
} from "./fixtures.ts";
import { OPERATOR_EMAIL } from "./playwright.config.ts";

async function signOutEverywhere(page: Page) {
  const ended = page.waitForResponse((response) => response.url().includes("/oidc/session/end/confirm"));
  await signOut(page);
  await ended;
  await expect(page.getByRole("link", { name: "Get Started Free" })).toBeVisible();
}

/** "$1,234.5678" → 1234567800 micro-dollars (the admin page shows micros to the unit). */
function micros(text: string): number {
  const match = /(-?)\$([\d,]+)\.(\d+)/.exec(text);
  if (!match) throw new Error(`No amount in "${text}"`);
  const [, sign, dollars = "0", fraction = "0"] = match;
  const value = Number(dollars.replaceAll(",", "")) * 1_000_000 + Number(fraction.padEnd(6, "0").slice(0, 6));
  return sign ? -value : value;
}

interface OperatorFigures {
  gross: number;
  fee: number;
  paid: number;
}

/** The operator's /admin figures, opened from the nav as an operator would. */
async function operatorFigures(page: Page): Promise<OperatorFigures> {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Admin" }).click();
  await expect(page.getByRole("heading", { name: "Operator", level: 1 })).toBeVisible();
  const figures = page.getByRole("region", { name: "Figures" });
  const card = (label: string) => figures.getByText(label, { exact: true }).locator("xpath=..");
  await expect(card("Platform fee income")).toContainText("$");
  const payouts = (await card("Payouts queued / in transit").textContent()) ?? "";
  return {
    gross: micros((await card("Gross volume").textContent()) ?? ""),
    fee: micros((await card("Platform fee income").textContent()) ?? ""),
    paid: micros(/Paid (\S+)/.exec(payouts)?.[1] ?? ""),
  };
}

test("a creator onboards in the sandbox, earns from paid calls, the clock passes the hold, and withdraws", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const creator = newPerson();
  const consumer = newPerson();
  const operator: Person = { ...newPerson(), email: OPERATOR_EMAIL, displayName: "Operator" };

  // The operator (ADMIN_EMAILS, verified) notes the platform's figures before the journey: other specs share
  // this server, so the journey's calls must move them by exactly their own amounts.
  // The operator's rights wait for the address to be verified: the mailed link, from the outbox.
  await signUp(page, operator);
  await expect(page).toHaveURL(/\/dashboard$/);
  await verifyEmailFromOutbox(page, operator);
  await page.goto("/dashboard");
  const before = await operatorFigures(page);
  await signOutEverywhere(page);

  // The creator publishes a public app at $5.00 a call and sets up payouts on the sandbox's page.
  await signUp(page, creator);
  await expect(page).toHaveURL(/\/dashboard$/);
  const name = `Payout Writer ${Date.now().toString(36)}`;
  const slug = await createLiveApp(page, { name, description: "Writes on any topic.", priceCents: 500 });

  // Payouts wait for a verified address: the notice says so until the mailed link is opened.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Earnings" }).click();
  await expect(page.getByRole("heading", { name: "Earnings", level: 1 })).toBeVisible();
  await expect(page.getByText("Verify your email address")).toBeVisible();
  await verifyEmailFromOutbox(page, creator);
  await page.goto("/earnings");
  await expect(page.getByRole("heading", { name: "Earnings", level: 1 })).toBeVisible();
  await expect(page.getByText("Sandbox payouts — no real money moves")).toBeVisible();
  await expect(page.getByText("Verify your email address")).toHaveCount(0);
  await expect(page.getByText("No payouts yet")).toBeVisible();
  await page.getByRole("button", { name: "Set up payouts" }).click();
  await expect(page.getByRole("heading", { name: "Set up payouts (sandbox)" })).toBeVisible();
  await page.getByLabel("Test bank account: succeeds payouts").check();
  await page.getByRole("button", { name: "Continue" }).click();
  await expect(page).toHaveURL(/\/earnings/);
  await expect(page.getByText("Payouts are enabled.")).toBeVisible();
  await signOutEverywhere(page);

  // A consumer tops up $25 and pays for three calls.
  await signUp(page, consumer);
  await expect(page).toHaveURL(/\/dashboard$/);
  await page.goto("/wallet");
  await topUpFromZero(page, 25);
  await page.goto("/api-keys");
  const apiKey = await createApiKey(page, "Payout journey");
  await callFromTestConsole(page, { slug, apiKey, input: "green tea", times: 3 });
  await signOutEverywhere(page);

  // The creator's $13.50 (3 × $5.00 less the 10% fee) is pending for the hold period.
  await page.goto("/earnings");
  await page.getByRole("button", { name: "Sign In" }).click();
  await submitSignIn(page, creator);
  await expect(page).toHaveURL(/\/earnings$/);
  const figures = page.getByRole("region", { name: "Earnings figures" });
  const pendingCard = figures.getByText("Pending", { exact: true }).locator("xpath=..");
  await expect(async () => {
    await page.reload();
    await expect(pendingCard).toContainText("$13.50", { timeout: 1_000 });
  }).toPass({ timeout: 30_000 });
  const availableCard = figures.getByText("Available", { exact: true }).locator("xpath=..");
  await expect(availableCard).toContainText("$0.00");
  await expect(page.getByRole("button", { name: /^Withdraw/ })).toBeDisabled();

  // The test clock moves past the 7-day hold: the money is available, and the creator withdraws it.
  await page.getByLabel("Days to advance").fill("8");
  await page.getByRole("button", { name: "Advance clock" }).click();
  await expect(availableCard).toContainText("$13.50");
  await page.getByRole("button", { name: "Withdraw $13.50" }).click();
  await expect(page.getByText("Payout of $13.50 is on its way.")).toBeVisible();
  const history = page.getByRole("table", { name: "Payout history" });
  await expect(history.getByRole("row", { name: /\$13\.50/ })).toContainText("Paid");
  await expect(figures.getByText("Paid out", { exact: true }).locator("xpath=..")).toContainText("$13.50");

  // The statement lists the earnings and the payout.
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export CSV" }).click();
  const file = await (await download).path();
  const csv = readFileSync(file, "utf8");
  expect(csv).toContain("date,type,description,amount_usd,payout_id,payout_status,failure_reason");
  expect(csv).toMatch(/,earnings,\d+ paid calls?,\d+\.\d{6},/);
  expect(csv).toMatch(/,payout,Payout to your bank account,-13\.500000,[0-9a-f-]{36},paid,/);

  await signOutEverywhere(page);

  // The operator sees the fee income of exactly these three calls (10% of 3 × $5.00), their gross,
  // the app among the top apps, and the payout among payouts paid.
  await page.goto("/dashboard");
  await page.getByRole("button", { name: "Sign In" }).click();
  await submitSignIn(page, operator);
  await expect(page).toHaveURL(/\/dashboard$/);
  const after = await operatorFigures(page);
  expect(after.fee - before.fee).toBe(1_500_000);
  expect(after.gross - before.gross).toBe(15_000_000);
  expect(after.paid - before.paid).toBe(13_500_000);
  const appRow = page.getByRole("region", { name: "Top apps" }).getByRole("row", { name: new RegExp(name) });
  await expect(appRow).toContainText(creator.email);
  await expect(appRow.getByRole("cell").nth(2)).toHaveText("3");
  await expect(appRow.getByRole("cell").nth(3)).toHaveText("$15.00");
});
