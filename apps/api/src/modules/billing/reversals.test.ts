import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { type Caller, callerAt, createCaller } from "../../test/caller.ts";
import { startFakeOpenAi } from "../../test/fake-openai.ts";
import { type StripeTestServer, startStripeTestServer } from "../../test/fake-stripe.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { verifyEmailThroughOutbox } from "../../test/mail.ts";
import { signUp } from "../../test/oidc-client.ts";
import { reconcile } from "./reconcile.ts";

/**
 * Refunds and disputes against a loopback Stripe (docs/decisions/028): events signed as Stripe
 * signs them (the official SDK's generateTestHeaderString), delivered again and out of order.
 */
const ADMIN_EMAIL = `ops-${Date.now()}@example.test`;
let stripe: StripeTestServer;
let vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
let admin: Caller;
let creator: Caller;
let events = 0;

beforeAll(async () => {
  vendor = await startFakeOpenAi();
  vendor.set({ kind: "echo" });
  stripe = await startStripeTestServer({
    OPENAI_API_KEY: "sk-vendor-test",
    OPENAI_BASE_URL: vendor.baseUrl,
    ADMIN_EMAILS: ADMIN_EMAIL,
    PAYOUT_HOLD_DAYS: "7",
  });
  const tokens = await signUp(stripe.server.baseUrl, { email: ADMIN_EMAIL });
  admin = callerAt(stripe.server.baseUrl, { email: ADMIN_EMAIL, token: tokens.access_token });
  await admin.api("POST", "/api/auth/register/");
  // Operator rights follow a verified address (decision 041): the mailed link, from the outbox.
  await verifyEmailThroughOutbox(stripe.server.baseUrl, ADMIN_EMAIL);
  creator = await createCaller(stripe.server.baseUrl, "Creator");
});
afterEach(async () => {
  const report = await reconcile(stripe.server.database.db);
  expect(report.ledgerTotal).toBe(0);
  expect(report.ok).toBe(true);
});
afterAll(async () => {
  await stripe?.stop();
  await vendor?.stop();
});

const wallet = async (caller: Caller) => (await caller.api("GET", "/api/wallet/")).body;
const deliver = async (event: object) => {
  const answer = await stripe.deliver(event);
  expect(answer.body).not.toHaveProperty("code");
  expect(answer.status).toBe(200);
  return answer.body as { duplicate: boolean };
};
const event = (type: string, object: object, id = `evt_${++events}`) => ({
  id,
  object: "event",
  type,
  data: { object },
});

/** A card top-up, credited by its signed payment_intent.succeeded. */
async function topUp(caller: Caller, cents: number): Promise<string> {
  const intent = await caller.api("POST", "/api/wallet/payment-intents/", {
    body: { amount: cents, currency: "usd" },
  });
  expect(intent.status).toBe(200);
  const pi = intent.body.id as string;
  await deliver(
    event("payment_intent.succeeded", {
      id: pi,
      object: "payment_intent",
      amount: cents,
      amount_received: cents,
      status: "succeeded",
    }),
  );
  return pi;
}

const refunded = (pi: string, charge: string, total: number, refunds: string[]) =>
  event("charge.refunded", {
    id: charge,
    object: "charge",
    amount: 0,
    amount_refunded: total,
    refunded: true,
    payment_intent: pi,
    refunds: { object: "list", data: refunds.map((id) => ({ id, object: "refund" })) },
  });
const dispute = (type: string, pi: string, id: string, amount: number, status: string) =>
  event(type, {
    id,
    object: "dispute",
    amount,
    charge: `ch_${pi}`,
    payment_intent: pi,
    status,
    reason: "fraudulent",
  });

describe("a refund of a top-up", () => {
  it("debits the wallet by the refunded increase, once per event id and once per refund id", async () => {
    const buyer = await createCaller(stripe.server.baseUrl, "Refunded");
    const pi = await topUp(buyer, 1_000);
    expect((await wallet(buyer)).balance_micros).toBe(10_000_000);
    const first = refunded(pi, "ch_1", 300, ["re_1"]);
    expect(await deliver(first)).toMatchObject({ duplicate: false });
    expect((await wallet(buyer)).balance_micros).toBe(7_000_000);
    // The same event again, and the same refund in another event: nothing more.
    expect(await deliver(first)).toMatchObject({ duplicate: true });
    await deliver(refunded(pi, "ch_1", 300, ["re_1"]));
    expect((await wallet(buyer)).balance_micros).toBe(7_000_000);
    // A second, partial refund: the charge's total rises to 500, so 200 more.
    await deliver(refunded(pi, "ch_1", 500, ["re_2", "re_1"]));
    expect((await wallet(buyer)).balance_micros).toBe(5_000_000);
    // An older event arriving late (total 300) moves nothing back or forth.
    await deliver(refunded(pi, "ch_1", 300, ["re_1"]));
    // A refund event for a payment that is not ours is acknowledged and ignored.
    await deliver(refunded("pi_unknown", "ch_x", 300, ["re_x"]));
    const after = await wallet(buyer);
    expect(after.balance_micros).toBe(5_000_000);
    expect(after.debt_micros).toBe(0);
    const rows = await queryRows<{ external_id: string; amount_cents: string }>(
      stripe.server.database.db,
      sql`select r.external_id, r.amount_cents::text from payment_reversals r join payments p on p.id = r.payment_id
          where p.external_id = ${pi} order by r.created_at`,
    );
    expect(rows).toEqual([
      { external_id: "re_1", amount_cents: "300" },
      { external_id: "re_2", amount_cents: "200" },
    ]);
    const audit = await admin.api("GET", "/api/admin/audit?limit=200");
    const refunds = audit.body.entries.filter(
      (row: { action: string; details: { payment_intent?: string } }) =>
        row.action === "payment.refund" && row.details.payment_intent === pi,
    );
    expect(refunds).toHaveLength(2);
    expect(refunds[0].actor_email).toBe("stripe (webhook)");
  });
});

describe("a dispute of a top-up", () => {
  it("takes back what a refund did not, never twice, and gives it back when won", async () => {
    const buyer = await createCaller(stripe.server.baseUrl, "Disputed");
    const pi = await topUp(buyer, 1_000);
    await deliver(refunded(pi, `ch_${pi}`, 400, ["re_d1"]));
    expect((await wallet(buyer)).balance_micros).toBe(6_000_000);
    // The dispute names the whole charge: together with the refund it can take only the rest.
    const created = dispute("charge.dispute.created", pi, "dp_1", 1_000, "needs_response");
    await deliver(created);
    expect((await wallet(buyer)).balance_micros).toBe(0);
    expect((await deliver(created)).duplicate).toBe(true);
    await deliver(dispute("charge.dispute.updated", pi, "dp_1", 1_000, "under_review"));
    expect((await wallet(buyer)).balance_micros).toBe(0);
    const overview = await admin.api("GET", "/api/admin/overview");
    expect(overview.body.disputes.find((row: { id: string }) => row.id)).toBeDefined();
    expect(overview.body.disputes.map((row: { payment_intent: string }) => row.payment_intent)).toContain(pi);
    // Won: the dispute gives back what it took (600); the refund stays refunded.
    await deliver(dispute("charge.dispute.closed", pi, "dp_1", 1_000, "won"));
    expect((await wallet(buyer)).balance_micros).toBe(6_000_000);
    await deliver(dispute("charge.dispute.closed", pi, "dp_1", 1_000, "won"));
    // A late `created` after the close changes nothing: a closed dispute stays closed.
    await deliver(dispute("charge.dispute.created", pi, "dp_1", 1_000, "needs_response"));
    expect((await wallet(buyer)).balance_micros).toBe(6_000_000);
  });

  it("an inquiry takes nothing; a lost dispute keeps what it took", async () => {
    const buyer = await createCaller(stripe.server.baseUrl, "Inquired");
    const pi = await topUp(buyer, 500);
    await deliver(dispute("charge.dispute.created", pi, "dp_inq", 500, "warning_needs_response"));
    expect((await wallet(buyer)).balance_micros).toBe(5_000_000);
    await deliver(dispute("charge.dispute.closed", pi, "dp_inq", 500, "warning_closed"));
    expect((await wallet(buyer)).balance_micros).toBe(5_000_000);
    await deliver(dispute("charge.dispute.created", pi, "dp_lost", 200, "needs_response"));
    await deliver(dispute("charge.dispute.closed", pi, "dp_lost", 200, "lost"));
    expect((await wallet(buyer)).balance_micros).toBe(3_000_000);
  });
});

describe("debt", () => {
  it("a refund of money already spent is taken back from the creator its calls paid (decision 045), not left as the payer's debt", async () => {
    const buyer = await createCaller(stripe.server.baseUrl, "Debtor");
    const key = (await buyer.api("POST", "/api/keys/", { body: { name: "sdk" } })).body.key as string;
    const app = await createPromptApp(
      creator,
      { name: `Paid ${events}`, visibility: "public", price_cents: 5 },
      { model: "gpt-4-turbo", max_tokens: 64 },
    );
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    const call = () =>
      buyer.api("POST", `/api/app/${app.slug}/completion-messages`, {
        auth: key,
        body: { inputs: { query: "hi" }, response_mode: "blocking" },
      });
    const pi = await topUp(buyer, 100);
    for (let i = 0; i < 4; i++) expect((await call()).status).toBe(200);
    // The leases close once idle: then the wallet holds what the 4 calls did not spend.
    for (let i = 0; i < 60 && (await wallet(buyer)).held_micros !== 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await wallet(buyer)).toMatchObject({ balance_micros: 800_000, held_micros: 0 });
    const earned = (await wallet(creator)).earnings_micros as number;

    await deliver(refunded(pi, `ch_${pi}`, 100, [`re_${pi}`]));
    expect(await wallet(buyer)).toMatchObject({ balance_micros: 0, debt_micros: 0 });
    const parts = await queryRows<{ party: string; amount: string; earnings: string; fee: string }>(
      stripe.server.database.db,
      sql`select c.party, c.amount_micros::text as amount, c.earnings_micros::text as earnings, c.fee_micros::text as fee
          from chargeback_parts c join payments p on p.id = c.payment_id where p.external_id = ${pi} order by c.party`,
    );
    expect(parts.map((part) => [part.party, Number(part.amount)])).toEqual([
      ["creator", 200_000],
      ["payer", 800_000],
    ]);
    // 4 calls of 5 cents at 10%: the platform's fee on them is 20,000 micros; the creator gives back the rest of what they got.
    expect(Number(parts[0]?.fee)).toBe(20_000);
    expect(earned - ((await wallet(creator)).earnings_micros as number)).toBe(Number(parts[0]?.earnings));
    await topUp(buyer, 100);
    expect(await wallet(buyer)).toMatchObject({ balance_micros: 1_000_000, debt_micros: 0 });
    expect((await call()).status).toBe(200);
  });
});

describe("a refunded plan payment", () => {
  async function paidPlan(name: string) {
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name, visibility: "public", price_cents: 20 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    const { body: plan } = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
      body: { name: "Pro", price_cents: 500, included_calls: 2 },
    });
    const subscriber = await createCaller(stripe.server.baseUrl, "Subscriber");
    const intent = await subscriber.api("POST", `/api/app/${app.slug}/create-payment-intent/`, {
      body: { amount: 500, currency: "usd", package_id: plan.id },
    });
    const pi = intent.body.id as string;
    await deliver(
      event("payment_intent.succeeded", {
        id: pi,
        object: "payment_intent",
        amount: 500,
        amount_received: 500,
        status: "succeeded",
      }),
    );
    const subscribed = await subscriber.api("POST", `/api/app/${app.slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_intent_id: pi },
    });
    expect(subscribed.status).toBe(201);
    return { pi, subscriptionId: subscribed.body.id as string };
  }
  const status = async (id: string) =>
    (
      await queryRows<{ status: string }>(
        stripe.server.database.db,
        sql`select status from subscriptions where id = ${id}`,
      )
    )[0]?.status;

  it("inside the payout hold: the subscription ends and the creator's earnings from it are reversed", async () => {
    const before = (await wallet(creator)).earnings_micros as number;
    const { pi, subscriptionId } = await paidPlan(`Plan refund ${events}`);
    // $5.00 at a 10% fee: the creator earned $4.50.
    expect((await wallet(creator)).earnings_micros).toBe(before + 4_500_000);
    await deliver(refunded(pi, `ch_${pi}`, 500, [`re_${pi}`]));
    expect((await wallet(creator)).earnings_micros).toBe(before);
    expect(await status(subscriptionId)).toBe("canceled");
    await deliver(refunded(pi, `ch_${pi}`, 500, [`re_${pi}`]));
    expect((await wallet(creator)).earnings_micros).toBe(before);
  });

  it("past the payout hold: the creator keeps their earnings and the loss is the platform's, shown as its debt", async () => {
    const { pi, subscriptionId } = await paidPlan(`Plan late refund ${events}`);
    const earned = (await wallet(creator)).earnings_micros as number;
    await stripe.server.database.db.execute(
      sql`update ledger_transactions set created_at = now() - interval '8 days'
          where kind = 'subscription' and reference = (select id::text from payments where external_id = ${pi})`,
    );
    await deliver(dispute("charge.dispute.created", pi, `dp_${pi}`, 500, "needs_response"));
    expect((await wallet(creator)).earnings_micros).toBe(earned);
    expect(await status(subscriptionId)).toBe("canceled");
    const overview = await admin.api("GET", "/api/admin/overview");
    const platform = overview.body.debts.find((row: { user_id: string | null }) => row.user_id === null);
    expect(platform?.owed_micros).toBeGreaterThanOrEqual(4_500_000);
    // Won: the platform's loss is made good first (the creator's share, then the fee's 500,000,
    // which settles what earlier tests' chargebacks left the platform owing: decision 045).
    await deliver(dispute("charge.dispute.closed", pi, `dp_${pi}`, 500, "won"));
    const after = await admin.api("GET", "/api/admin/overview");
    const left = after.body.debts.find((row: { user_id: string | null }) => row.user_id === null);
    expect(left?.owed_micros ?? 0).toBe(Math.max(0, (platform?.owed_micros ?? 0) - 5_000_000));
  });
});
