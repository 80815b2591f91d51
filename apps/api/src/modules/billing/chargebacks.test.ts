import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { type Caller, createCaller } from "../../test/caller.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { reconcile } from "./reconcile.ts";

/**
 * Decision 045: a refunded or disputed card top-up reaches the creators its money paid, through
 * the sandbox gateway's payments, refunds, disputes and payouts (the same applyReversal as
 * Stripe's webhooks). PAYOUT_HOLD_DAYS=0, so earnings can be paid out before the dispute lands.
 */
const ADMIN_EMAIL = `ops-cb-${Date.now()}@example.test`;
let apps = 0;

const { server } = useVendorServer({
  ADMIN_EMAILS: ADMIN_EMAIL,
  PAYOUT_HOLD_DAYS: "0",
  PAYOUT_MINIMUM_CENTS: "100",
});
// An operator's address must be verified (decision 041).
const admin = useCaller(server, "Chargeback operator", { email: ADMIN_EMAIL, verified: true });
afterEach(async () => {
  const report = await reconcile(server.database.db);
  expect(report.mismatchedChargebacks).toEqual([]);
  expect(report.ledgerTotal).toBe(0);
  expect(report.ok).toBe(true);
});

const db = () => server.database.db;
const wallet = async (caller: Caller) => (await caller.api("GET", "/api/wallet/")).body;
const idOf = async (caller: Caller) =>
  (await queryRows<{ id: string }>(db(), sql`select id::text from users where email = ${caller.email}`))[0]
    ?.id as string;
const balance = async (kind: string, ownerId: string | null) =>
  Number(
    (
      await queryRows<{ b: string }>(
        db(),
        ownerId
          ? sql`select balance_micros::text as b from ledger_accounts where kind = ${kind} and owner_id = ${ownerId}::uuid`
          : sql`select balance_micros::text as b from ledger_accounts where kind = ${kind} and owner_id is null`,
      )
    )[0]?.b ?? 0,
  );

async function topUp(caller: Caller, cents: number): Promise<string> {
  const intent = await caller.api("POST", "/api/wallet/payment-intents/", {
    body: { amount: cents, currency: "usd" },
  });
  expect(intent.status).toBe(200);
  const paid = await caller.api("POST", "/api/billing/sandbox/confirm/", {
    body: {
      client_secret: intent.body.client_secret,
      card: { number: "4242424242424242", exp_month: 1, exp_year: 2099, cvc: "123" },
    },
  });
  expect(paid.status).toBe(200);
  return intent.body.id as string;
}

async function paidApp(creator: Caller, priceCents: number): Promise<string> {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: `Chargeback app ${++apps}`, visibility: "public", price_cents: priceCents },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
    body: { model: "gpt-4-turbo", max_tokens: 64 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  return app.slug as string;
}

const call = (caller: Caller, key: string, slug: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, {
    auth: key,
    body: { inputs: { query: "hi" }, response_mode: "blocking" },
  });

/** Waits until the buyer's leases closed (their calls posted to the creators' earnings). */
/** The buyer's leases are over: nothing held, and no hold of theirs still open (its close posted). */
async function leasesClosed(buyer: Caller) {
  const open = async () => {
    const [row] = await queryRows<{ n: number }>(
      db(),
      sql`select count(*)::int as n from holds h join users u on u.id = h.payer_id
          where u.email = ${buyer.email} and h.status = 'held'`,
    );
    return (row?.n ?? 0) > 0 || (await wallet(buyer)).held_micros !== 0;
  };
  for (let i = 0; i < 200 && (await open()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await open()).toBe(false);
}

/** What the buyer's closed holds paid each creator: price, fee, model cost, and the creator's earnings. */
async function spentOn(payerId: string, creatorId: string) {
  const [row] = await queryRows<{ settled: string; fee: string; model: string }>(
    db(),
    sql`select coalesce(sum(settled_micros), 0)::text as settled, coalesce(sum(fee_micros), 0)::text as fee,
          coalesce(sum(model_cost_micros), 0)::text as model
        from holds where payer_id = ${payerId}::uuid and creator_id = ${creatorId}::uuid and status <> 'held'`,
  );
  const settled = Number(row?.settled);
  const fee = Number(row?.fee);
  const model = Number(row?.model);
  return { settled, fee, model, earnings: settled - fee - model };
}

async function onboard(caller: Caller) {
  const link = await caller.api("POST", "/api/payouts/onboarding");
  const done = await fetch(link.body.url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "bank=succeeds",
    redirect: "manual",
  });
  expect(done.status).toBeLessThan(400);
}

const refund = (pi: string, cents?: number) =>
  admin.api("POST", "/api/admin/sandbox/refunds", {
    body: cents === undefined ? { payment_intent_id: pi } : { payment_intent_id: pi, amount_cents: cents },
  });
const openDispute = (pi: string) =>
  admin.api("POST", "/api/admin/sandbox/disputes", { body: { payment_intent_id: pi, reason: "fraudulent" } });
const closeDispute = (id: string, status: "won" | "lost") =>
  admin.api("POST", `/api/admin/sandbox/disputes/${id}/close`, { body: { status } });

describe("a disputed top-up spent on two creators' apps, one of them paid out", () => {
  it("takes back the unspent rest, each creator's exact earnings from it (the paid-out one as debt), the platform's fee; won gives it all back", async () => {
    const buyer = await createCaller(server.baseUrl, "Chargeback buyer");
    const paidOut = await createCaller(server.baseUrl, "Paid-out creator", { verified: true });
    const pending = await createCaller(server.baseUrl, "Pending creator");
    const [buyerId, paidOutId, pendingId] = [await idOf(buyer), await idOf(paidOut), await idOf(pending)];
    const key = (await buyer.api("POST", "/api/keys/", { body: { name: "sdk" } })).body.key as string;
    const appA = await paidApp(paidOut, 33);
    const appB = await paidApp(pending, 17);
    const pi = await topUp(buyer, 10_000);
    for (let i = 0; i < 7; i++) expect((await call(buyer, key, appA)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await call(buyer, key, appB)).status).toBe(200);
    await leasesClosed(buyer);
    const a = await spentOn(buyerId, paidOutId);
    const b = await spentOn(buyerId, pendingId);
    expect(a.settled).toBe(7 * 330_000);
    expect(b.settled).toBe(5 * 170_000);
    const unspent = 100_000_000 - a.settled - b.settled;
    expect((await wallet(buyer)).balance_micros).toBe(unspent);

    // The first creator is paid out everything available (whole cents; a sub-cent rest stays).
    await onboard(paidOut);
    const payout = await paidOut.api("POST", "/api/payouts/", {
      body: {},
      headers: { "idempotency-key": "cb-payout-1" },
    });
    expect(payout.body).not.toHaveProperty("code");
    expect(payout.status).toBeLessThan(300);
    const rest = a.earnings % 10_000;
    expect(await balance("earnings", paidOutId)).toBe(rest);
    const pendingEarned = await balance("earnings", pendingId);
    expect(pendingEarned).toBe(b.earnings);
    const feeBefore = await balance("platform_fee", null);
    const platformDebtBefore = await balance("debt", null);

    const disputed = await openDispute(pi);
    expect(disputed.status).toBe(200);
    expect(disputed.body.moved_cents).toBe(10_000);
    // The wallet's unspent rest is taken; the payer owes nothing (what they spent is taken from whom it paid).
    expect(await wallet(buyer)).toMatchObject({ balance_micros: 0, debt_micros: 0 });
    // The paid-out creator: the sub-cent rest from earnings, the rest of their earnings from the lot as debt.
    expect(await balance("earnings", paidOutId)).toBe(0);
    expect(await balance("debt", paidOutId)).toBe(-(a.earnings - rest));
    expect((await wallet(paidOut)).debt_micros).toBe(a.earnings - rest);
    // The other creator's pending earnings lose exactly what the lot paid them.
    expect(await balance("earnings", pendingId)).toBe(pendingEarned - b.earnings);
    expect(await balance("debt", pendingId)).toBe(0);
    // The platform's fee on those calls is its loss, and so is the model cost it paid the vendor.
    expect(feeBefore - (await balance("platform_fee", null))).toBe(a.fee + b.fee);
    expect(platformDebtBefore - (await balance("debt", null))).toBe(a.model + b.model);
    const parts = await queryRows<{
      party: string;
      creator: string | null;
      amount: string;
      earnings: string;
    }>(
      db(),
      sql`select party, creator_id::text as creator, amount_micros::text as amount, earnings_micros::text as earnings
          from chargeback_parts where payment_id = ${disputed.body.payment_id}::uuid order by id`,
    );
    expect(parts.reduce((sum, part) => sum + Number(part.amount), 0)).toBe(100_000_000);
    expect(parts.find((part) => part.creator === paidOutId)?.earnings).toBe(String(a.earnings));
    expect(parts.find((part) => part.creator === pendingId)?.earnings).toBe(String(b.earnings));

    // A creator in debt pays for no call until it is settled (decision 028's 402 names it).
    const creatorKey = (await paidOut.api("POST", "/api/keys/", { body: { name: "own" } })).body
      .key as string;
    const refused = await call(paidOut, creatorKey, appB);
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe("account_in_debt");

    // The operator's exposure shows the debt and the platform's loss.
    const exposure = await admin.api("GET", "/api/admin/exposure");
    expect(exposure.status).toBe(200);
    expect(exposure.body.creator_debts.owed_micros).toBeGreaterThanOrEqual(a.earnings - rest);
    expect(exposure.body.open_disputes).toMatchObject({ count: 1, amount_micros: 100_000_000 });

    // Won: everything comes back; the debt is cancelled first.
    const won = await closeDispute(disputed.body.id, "won");
    expect(won.body.moved_cents).toBe(-10_000);
    expect(await balance("debt", paidOutId)).toBe(0);
    expect(await balance("earnings", paidOutId)).toBe(rest);
    expect(await balance("earnings", pendingId)).toBe(pendingEarned);
    expect(await balance("platform_fee", null)).toBe(feeBefore);
    expect(await balance("debt", null)).toBe(platformDebtBefore);
    expect(await wallet(buyer)).toMatchObject({ balance_micros: unspent, debt_micros: 0 });
    // Closing it again (a replayed event) moves nothing.
    const again = await closeDispute(disputed.body.id, "won");
    expect(again.body.moved_cents).toBe(0);
    expect((await wallet(buyer)).balance_micros).toBe(unspent);
  });
});

describe("a partial refund of a top-up", () => {
  it("comes from the unspent rest first, then the creators in proportion; a creator's debt is paid from their next earnings before a payout", async () => {
    const buyer = await createCaller(server.baseUrl, "Partial buyer");
    const creator = await createCaller(server.baseUrl, "Partial creator", { verified: true });
    const [buyerId, creatorId] = [await idOf(buyer), await idOf(creator)];
    const key = (await buyer.api("POST", "/api/keys/", { body: { name: "sdk" } })).body.key as string;
    const slug = await paidApp(creator, 50);
    const pi = await topUp(buyer, 500);
    for (let i = 0; i < 6; i++) expect((await call(buyer, key, slug)).status).toBe(200);
    await leasesClosed(buyer);
    const spent = await spentOn(buyerId, creatorId);
    expect(spent.settled).toBe(3_000_000);
    expect((await wallet(buyer)).balance_micros).toBe(2_000_000);
    const earned = await balance("earnings", creatorId);

    // $1.50 refunded: $1.50 of the $2.00 left in the wallet; the creator keeps everything.
    const first = await refund(pi, 150);
    expect(first.body.moved_cents).toBe(150);
    expect((await wallet(buyer)).balance_micros).toBe(500_000);
    expect(await balance("earnings", creatorId)).toBe(earned);
    // More than the $3.50 left to refund is refused as Stripe's API refuses it, and moves nothing.
    const over = await refund(pi, 351);
    expect(over.status).toBe(400);
    expect(over.body.fields.amount_cents).toMatch(/\$3\.50 left to refund/);
    expect((await wallet(buyer)).balance_micros).toBe(500_000);
    // $2.00 more: the last $0.50 of the wallet, then $1.50 of the $3.00 the creator's calls got.
    const second = await refund(pi, 200);
    expect(second.body.moved_cents).toBe(200);
    expect((await wallet(buyer)).balance_micros).toBe(0);
    const [creatorPart] = await queryRows<{ amount: string; earnings: string; fee: string; model: string }>(
      db(),
      sql`select sum(amount_micros)::text as amount, sum(earnings_micros)::text as earnings,
            sum(fee_micros)::text as fee, sum(model_cost_micros)::text as model
          from chargeback_parts where party = 'creator' and creator_id = ${creatorId}::uuid`,
    );
    expect(Number(creatorPart?.amount)).toBe(1_500_000);
    expect(Number(creatorPart?.fee)).toBe(150_000);
    expect(Number(creatorPart?.earnings) + Number(creatorPart?.model)).toBe(1_350_000);
    expect(earned - (await balance("earnings", creatorId))).toBe(Number(creatorPart?.earnings));

    // Pay the creator out, then refund the rest: what earnings lack is their debt.
    await onboard(creator);
    expect(
      (await creator.api("POST", "/api/payouts/", { body: {}, headers: { "idempotency-key": "partial-1" } }))
        .status,
    ).toBeLessThan(300);
    const left = await balance("earnings", creatorId);
    const third = await refund(pi);
    expect(third.body.moved_cents).toBe(150);
    const owed = -(await balance("debt", creatorId));
    expect(owed + left).toBe(spent.earnings - Number(creatorPart?.earnings));
    expect(await balance("earnings", creatorId)).toBe(0);
    expect(await balance("debt", buyerId)).toBe(0);
    // Nothing is left to refund: a clear 400, not a 200 that changed nothing.
    const again = await refund(pi);
    expect(again.status).toBe(400);
    expect(again.body.fields.payment_intent_id).toMatch(/refunded in full/);

    // New earnings pay the debt before anything is paid out.
    const buyer2 = await createCaller(server.baseUrl, "Second buyer");
    const key2 = (await buyer2.api("POST", "/api/keys/", { body: { name: "sdk" } })).body.key as string;
    await topUp(buyer2, 10_000);
    const calls = Math.ceil(owed / 450_000) + 4;
    for (let i = 0; i < calls; i++) expect((await call(buyer2, key2, slug)).status).toBe(200);
    await leasesClosed(buyer2);
    const earnedAgain = await balance("earnings", creatorId);
    const paid = await creator.api("POST", "/api/payouts/", {
      body: {},
      headers: { "idempotency-key": "partial-2" },
    });
    expect(paid.status).toBeLessThan(300);
    expect(await balance("debt", creatorId)).toBe(0);
    expect(paid.body.amount_cents).toBe(Math.floor((earnedAgain - owed) / 10_000));
  });
});
