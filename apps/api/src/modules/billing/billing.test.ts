import { eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { holds, invocations, ledgerEntries } from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { modelCostTaken } from "../../test/model-cost.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { walletBalances } from "./balances.ts";
import { placeHold, sweepExpiredHolds } from "./call-payment/holds.ts";
import { centsToMicros } from "./money.ts";
import { reconcile } from "./reconcile.ts";

const { server, vendor } = useVendorServer({
  GATEWAY_RATE_LIMIT_PER_MINUTE: "100000",
  PLATFORM_FEE_PERCENT: "10",
});
const creator = useCaller(server, "Seller");
afterEach(async () => {
  vendor.set({ kind: "echo" });
  const report = await reconcile(server.database.db);
  expect(report.mismatches).toEqual([]);
  expect(report.unbalancedTransactions).toEqual([]);
  expect(report.ledgerTotal).toBe(0);
  expect(report.ok).toBe(true);
});

async function paidApp(priceCents: number) {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: `Paid ${priceCents}`, visibility: "public", price_cents: priceCents },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  return app as { slug: string; id: string };
}
const call = (caller: Caller, slug: string, headers: Record<string, string> = {}) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, { body: { inputs: { query: "hi" } }, headers });
const userIdOf = async (caller: Caller) =>
  (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;

describe("wallet top-ups through the sandbox gateway", () => {
  const confirm = async (caller: Caller, number: string, amount = 500) => {
    const intent = await caller.api("POST", "/api/wallet/payment-intents/", {
      body: { amount, currency: "usd" },
    });
    return caller.api("POST", "/api/billing/sandbox/confirm/", {
      body: {
        client_secret: intent.body.client_secret,
        card: { number, exp_month: 1, exp_year: 2099, cvc: "123" },
      },
    });
  };

  it("credits a successful payment once, and never a declined or unauthenticated one", async () => {
    const buyer = await createCaller(server.baseUrl, "Buyer");
    const ok = await confirm(buyer, "4242424242424242", 1500);
    expect(ok.body).toMatchObject({ status: "succeeded", amount: 1500, balance_micros: 15_000_000 });
    expect((await confirm(buyer, "4000000000000002")).body).toMatchObject({
      status: "failed",
      message: "Your card was declined.",
      balance_micros: 15_000_000,
    });
    expect((await confirm(buyer, "4000002500003155")).body).toMatchObject({
      status: "requires_action",
      message: "Payment was not completed successfully",
      balance_micros: 15_000_000,
    });
    expect((await confirm(buyer, "4242424242424241")).body.message).toBe("Your card number is invalid.");

    const intent = await buyer.api("POST", "/api/wallet/payment-intents/", { body: { amount: 700 } });
    const card = { number: "4242424242424242", exp_month: 1, exp_year: 2099, cvc: "123" };
    const replays = await Promise.all(
      Array.from({ length: 10 }, () =>
        buyer.api("POST", "/api/billing/sandbox/confirm/", {
          body: { client_secret: intent.body.client_secret, card },
        }),
      ),
    );
    expect(replays.filter((r) => r.status === 200 && r.body.status === "succeeded")).toHaveLength(1);
    expect(replays.filter((r) => r.status === 409)).toHaveLength(9);
    const wallet = await buyer.api("GET", "/api/wallet/");
    expect(wallet.body).toMatchObject({ balance_micros: 22_000_000, held_micros: 0, gateway: "sandbox" });
    expect(wallet.body.transactions.filter((t: { kind: string }) => t.kind === "top_up")).toHaveLength(2);
  });

  it("pays through a device wallet (Apple Pay, Google Pay: SPEC §5), named on the ledger, and refuses a wallet combined with a card by name", async () => {
    const buyer = await createCaller(server.baseUrl, "Wallet buyer");
    const payWith = async (wallet: string, extra: Record<string, unknown> = {}) => {
      const intent = await buyer.api("POST", "/api/wallet/payment-intents/", { body: { amount: 800 } });
      return buyer.api("POST", "/api/billing/sandbox/confirm/", {
        body: { client_secret: intent.body.client_secret, wallet, ...extra },
      });
    };
    expect((await payWith("apple_pay")).body).toMatchObject({
      status: "succeeded",
      balance_micros: 8_000_000,
    });
    expect((await payWith("google_pay")).body).toMatchObject({
      status: "succeeded",
      balance_micros: 16_000_000,
    });
    const both = await payWith("apple_pay", {
      card: { number: "4242424242424242", exp_month: 1, exp_year: 2099, cvc: "123" },
    });
    expect(both.status).toBe(400);
    expect(both.body.fields).toEqual({ wallet: "cannot be combined with card" });
    const unknown = await payWith("samsung_pay");
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain("wallet");
    const wallet = await buyer.api("GET", "/api/wallet/");
    expect(wallet.body.balance_micros).toBe(16_000_000);
    const descriptions = wallet.body.transactions.map((t: { description: string }) => t.description);
    expect(descriptions).toEqual(
      expect.arrayContaining(["Wallet top-up (Apple Pay)", "Wallet top-up (Google Pay)"]),
    );
  });

  it("30 confirmations of one payment at once, good and declined cards mixed: one success, the rest 409 or declined, the wallet credited once", async () => {
    const buyer = await createCaller(server.baseUrl, "Double Clicker");
    const good = { number: "4242424242424242", exp_month: 1, exp_year: 2099, cvc: "123" };
    const declined = { ...good, number: "4000000000000002" };
    for (let round = 0; round < 3; round++) {
      const intent = await buyer.api("POST", "/api/wallet/payment-intents/", { body: { amount: 300 } });
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          buyer.api("POST", "/api/billing/sandbox/confirm/", {
            body: { client_secret: intent.body.client_secret, card: i % 2 === 0 ? declined : good },
          }),
        ),
      );
      const statuses = answers.map((a) => a.status);
      expect(
        statuses.filter((s) => s >= 500),
        JSON.stringify(statuses),
      ).toEqual([]);
      const succeeded = answers.filter((a) => a.status === 200 && a.body.status === "succeeded");
      expect(succeeded).toHaveLength(1);
      // Before the success a declined card is told so (the SPA's answer); after it, everything is 409.
      for (const answer of answers) {
        if (answer === succeeded[0]) continue;
        if (answer.status === 200)
          expect(answer.body).toMatchObject({ status: "failed", message: "Your card was declined." });
        else {
          expect(answer.status).toBe(409);
          expect(answer.body.message).toMatch(/already succeeded/);
        }
      }
      const later = await buyer.api("POST", "/api/billing/sandbox/confirm/", {
        body: { client_secret: intent.body.client_secret, card: declined },
      });
      expect(later.status).toBe(409);
    }
    const wallet = await buyer.api("GET", "/api/wallet/");
    expect(wallet.body.balance_micros).toBe(9_000_000);
    expect(wallet.body.transactions.filter((t: { kind: string }) => t.kind === "top_up")).toHaveLength(3);
  });

  it("refuses amounts out of range and someone else's payment", async () => {
    const buyer = await createCaller(server.baseUrl);
    expect(
      (await buyer.api("POST", "/api/wallet/payment-intents/", { body: { amount: 50 } })).body.fields,
    ).toEqual({ amount: "must be at least 100 cents ($1.00)" });
    expect(
      (await buyer.api("POST", "/api/wallet/payment-intents/", { body: { amount: 10_000_000 } })).status,
    ).toBe(400);
    expect(
      (await buyer.api("POST", "/api/wallet/payment-intents/", { body: { amount: 500, currency: "eur" } }))
        .body.fields,
    ).toEqual({ currency: "only usd is supported" });
    const intent = await buyer.api("POST", "/api/wallet/payment-intents/", { body: { amount: 500 } });
    const thief = await createCaller(server.baseUrl);
    const stolen = await thief.api("POST", "/api/billing/sandbox/confirm/", {
      body: {
        client_secret: intent.body.client_secret,
        card: { number: "4242424242424242", exp_month: 1, exp_year: 2099, cvc: "123" },
      },
    });
    expect(stolen.status).toBe(404);
  });

  it("refuses an empty package_id with a 400 naming it, rather than failing on it (found by fuzzing)", async () => {
    const buyer = await createCaller(server.baseUrl);
    const intent = await buyer.api("POST", "/api/wallet/payment-intents/", {
      body: { amount: 500, package_id: "" },
    });
    expect(intent.status).toBe(400);
    expect(intent.body.fields).toEqual({ package_id: "must be a UUID (8-4-4-4-12 hex digits)" });
  });
});

describe("paid calls", () => {
  it("charges the price, pays the creator minus the 10% fee, and charges the owner's calls no price", async () => {
    const app = await paidApp(250);
    const buyer = await createCaller(server.baseUrl, "Payer");
    await fundWallet(buyer, 1000);
    // The owner's own call holds its model cost from the owner's wallet (decision 062).
    await fundWallet(creator, 100);
    const creatorId = await userIdOf(creator);
    const before = await walletBalances(server.database.db, creatorId);
    const costBefore = await modelCostTaken(server.database.db, creatorId);
    expect((await call(buyer, app.slug)).status).toBe(200);
    expect((await call(creator, app.slug)).status).toBe(200);
    expect((await buyer.api("GET", "/api/wallet/")).body).toMatchObject({
      balance_micros: 7_500_000,
      held_micros: 0,
    });
    const after = await walletBalances(server.database.db, creatorId);
    const cost = (await modelCostTaken(server.database.db, creatorId)) - costBefore;
    expect(cost).toBeGreaterThan(0);
    // The buyer's call's model cost from its share, the owner's from the owner's wallet.
    expect(after.earnings - before.earnings + (after.wallet - before.wallet)).toBe(centsToMicros(225) - cost);
    expect(after.wallet).toBeLessThan(before.wallet);
    const usage = await creator.api("GET", `/api/app/${app.slug}/analytics/usage/`);
    expect(usage.body).toMatchObject({ total_invocations: 2, total_revenue: 2.5 });
    // The ledger posts the call when its hold closes, just after the answer (decision 020).
    await expect
      .poll(async () =>
        (await creator.api("GET", "/api/wallet/")).body.transactions.find(
          (transaction: { kind: string }) => transaction.kind === "earning",
        ),
      )
      .toMatchObject({
        kind: "earning",
        amount_micros: after.earnings - before.earnings,
        account: "earnings",
        description: "Earned from 1 paid call",
      });
    // The earnings history groups by UTC day: a day of one paid call still reads naturally.
    const history = (await creator.api("GET", "/api/wallet/earnings/")).body;
    expect(history.lines[0]).toMatchObject({
      kind: "calls",
      description: "Earned from 1 paid call",
      calls: 1,
      x402_calls: 0,
      day: new Date().toISOString().slice(0, 10),
    });
  });

  it("answers 402 with the price, the balance and where to top up, without calling the model", async () => {
    const app = await paidApp(300);
    const buyer = await createCaller(server.baseUrl);
    await fundWallet(buyer, 200);
    const before = vendor.requests.length;
    const refused = await call(buyer, app.slug);
    expect(refused.status).toBe(402);
    expect(refused.body.message).toBe(
      `Insufficient balance: this call costs $3.00 and your wallet has $2.00 available. Top up at ${server.baseUrl}/wallet`,
    );
    expect(vendor.requests.length).toBe(before);
  });

  it("never charges a failed upstream call", async () => {
    const app = await paidApp(100);
    const buyer = await createCaller(server.baseUrl);
    await fundWallet(buyer, 500);
    vendor.set({ kind: "status", status: 500, message: "down" });
    expect((await call(buyer, app.slug)).status).toBe(502);
    const wallet = await buyer.api("GET", "/api/wallet/");
    expect(wallet.body).toMatchObject({ balance_micros: 5_000_000, held_micros: 0 });
    const [hold] = await server.database.db
      .select()
      .from(holds)
      .where(eq(holds.payerId, await userIdOf(buyer)));
    expect(hold?.status).toBe("released");
    const [row] = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.callerUserId, await userIdOf(buyer)));
    expect(row).toMatchObject({ status: "error", chargedCents: 0 });
  });

  it("charges once for 100 retries with one Idempotency-Key", async () => {
    const app = await paidApp(100);
    const buyer = await createCaller(server.baseUrl);
    await fundWallet(buyer, 1000);
    const first = await call(buyer, app.slug, { "idempotency-key": "order-77" });
    const retries = await Promise.all(
      Array.from({ length: 100 }, () => call(buyer, app.slug, { "idempotency-key": "order-77" })),
    );
    expect(retries.every((r) => r.status === 200 && r.body.id === first.body.id)).toBe(true);
    expect((await buyer.api("GET", "/api/wallet/")).body.balance_micros / 10_000).toBe(900);
  });

  it("lets exactly k of N concurrent calls through when the wallet covers k", async () => {
    const n = process.env.TEST_DB === "postgres" ? 500 : 120;
    const k = 37;
    const price = 40;
    const app = await paidApp(price);
    const buyer = await createCaller(server.baseUrl, "Crowd");
    await fundWallet(buyer, k * price);
    const creatorId = await userIdOf(creator);
    const creatorBefore = (await walletBalances(server.database.db, creatorId)).earnings;
    const costBefore = await modelCostTaken(server.database.db, creatorId);
    const results = await Promise.all(Array.from({ length: n }, () => call(buyer, app.slug)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(k);
    expect(statuses.filter((s) => s === 402)).toHaveLength(n - k);
    expect(await walletBalances(server.database.db, await userIdOf(buyer))).toMatchObject({
      wallet: 0,
      held: 0,
    });
    const creatorAfter = (await walletBalances(server.database.db, creatorId)).earnings;
    const cost = (await modelCostTaken(server.database.db, creatorId)) - costBefore;
    expect(creatorAfter - creatorBefore).toBe(centsToMicros(k * (price - 4)) - cost);
    const charged = await server.database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(invocations)
      .where(
        sql`${invocations.callerUserId} = ${await userIdOf(buyer)} and ${invocations.chargedCents} = ${price}`,
      );
    expect(charged[0]?.n).toBe(k);
  }, 120_000);
});

describe("the ledger", () => {
  it("releases holds a crash left behind once they expire", async () => {
    const app = await paidApp(100);
    const buyer = await createCaller(server.baseUrl);
    await fundWallet(buyer, 300);
    const buyerId = await userIdOf(buyer);
    await placeHold(server.database.db, {
      payerId: buyerId,
      applicationId: app.id,
      creatorId: await userIdOf(creator),
      amountCents: 100,
      ttlSeconds: 60,
      topUpUrl: "",
    });
    expect(await walletBalances(server.database.db, buyerId)).toMatchObject({
      wallet: centsToMicros(200),
      held: centsToMicros(100),
    });
    expect(await sweepExpiredHolds(server.database.db)).toBe(0);
    expect(await sweepExpiredHolds(server.database.db, new Date(Date.now() + 61_000))).toBe(1);
    expect(await walletBalances(server.database.db, buyerId)).toMatchObject({
      wallet: centsToMicros(300),
      held: 0,
    });
  });

  it("refuses to change or delete a posted entry", async () => {
    await expect(server.database.db.update(ledgerEntries).set({ amountMicros: 1 })).rejects.toThrow();
    await expect(server.database.db.delete(ledgerEntries)).rejects.toThrow();
  });
});
