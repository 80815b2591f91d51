import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ledgerTransactions, subscriptionPeriods, subscriptions } from "../../db/schema/index.ts";
import { type Caller, createCaller } from "../../test/caller.ts";
import {
  BILLING_ADDRESS,
  DECLINED_CARD,
  type StripeTestServer,
  startStripeTestServer,
} from "../../test/fake-stripe.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import type { TestServer } from "../../test/server.ts";
import { walletBalances } from "./balances.ts";
import { centsToMicros } from "./money.ts";
import { renewDueSubscriptions } from "./subscriptions.ts";

let stripe: StripeTestServer;
let server: TestServer;
let creator: Caller;

beforeAll(async () => {
  stripe = await startStripeTestServer();
  server = stripe.server;
  creator = await createCaller(server.baseUrl, "Plan Seller");
});
afterEach(async () => {
  await expectReconciled(server.database.db);
});
afterAll(() => stripe?.stop());

const DAY_S = 86_400;
const nowSeconds = () => Math.floor(Date.now() / 1000);
const userIdOf = async (caller: Caller) =>
  (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;
const earningsOf = async (caller: Caller) =>
  (await walletBalances(server.database.db, await userIdOf(caller))).earnings;
const walletOf = async (caller: Caller) =>
  ((await caller.api("GET", "/api/wallet/")).body.balance_micros / 10_000) as number;

async function appWithPlan() {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Carded", visibility: "public", price_cents: 20 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  const { body: plan } = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
    body: { name: "Pro", price_cents: 500, included_calls: 2 },
  });
  return { slug: app.slug as string, plan };
}

/** The Elements flow: a SetupIntent, confirmed in the browser, then the card saved with its address. */
async function saveCard(caller: Caller, slug: string, stripeCard = "pm_card_visa"): Promise<string> {
  const setup = await caller.api("POST", `/api/app/${slug}/create-payment-intent/`, {
    body: { amount: 0, currency: "usd" },
  });
  stripe.fake.confirmSetup(setup.body.client_secret, stripeCard);
  const saved = await caller.api("POST", `/api/app/${slug}/payment-methods/`, {
    body: { billing_address: BILLING_ADDRESS, stripe_payment_method_id: stripeCard },
  });
  expect(saved.status).toBe(201);
  return saved.body.id;
}

async function subscribedWithCard(slug: string, planId: string) {
  const consumer = await createCaller(server.baseUrl);
  const cardId = await saveCard(consumer, slug);
  const subscribed = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
    body: { package_id: planId, payment_method_id: cardId },
  });
  expect(subscribed.status).toBe(201);
  const [row] = await server.database.db
    .select()
    .from(subscriptions)
    .where(eq(subscriptions.id, subscribed.body.id));
  return { consumer, cardId, subscription: subscribed.body, stripeId: row?.stripeSubscriptionId ?? "" };
}

/** A Stripe top-up, credited by its signed webhook. */
async function topUpWallet(consumer: Caller, cents: number) {
  const intent = await consumer.api("POST", "/api/wallet/payment-intents/", {
    body: { amount: cents, currency: "usd" },
  });
  const { id } = intent.body;
  await stripe.deliver({
    id: `evt_topup_${id}`,
    object: "event",
    type: "payment_intent.succeeded",
    data: { object: { id, object: "payment_intent", amount: cents, amount_received: cents } },
  });
}
const subscriptionOf = async (consumer: Caller, slug: string) =>
  (await consumer.api("GET", `/api/app/${slug}/subscriptions/`)).body[0];
const callApp = (caller: Caller, slug: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, { body: { inputs: { query: "hi" } } });
/** A paid first period, as Stripe reports it right after the subscription is created. */
const firstInvoicePaid = (stripeId: string, rowId?: string) =>
  invoiceEvent("invoice.paid", stripeId, {
    id: `in_first_${stripeId}`,
    amountPaid: 500,
    start: nowSeconds(),
    end: nowSeconds() + 30 * DAY_S,
    rowId,
  });

let eventCounter = 0;
function invoiceEvent(
  type: "invoice.paid" | "invoice.payment_failed",
  stripeSubscriptionId: string,
  invoice: { id: string; amountPaid: number; start: number; end: number; rowId?: string },
) {
  const line = { id: `il_${invoice.id}`, period: { start: invoice.start, end: invoice.end } };
  return {
    id: `evt_${type}_${++eventCounter}`,
    object: "event",
    type,
    data: {
      object: {
        id: invoice.id,
        object: "invoice",
        amount_paid: invoice.amountPaid,
        parent: {
          type: "subscription_details",
          subscription_details: {
            subscription: stripeSubscriptionId,
            metadata: invoice.rowId ? { promptmint_subscription_id: invoice.rowId } : {},
          },
        },
        lines: { object: "list", data: [line] as [typeof line] },
      },
    },
  };
}
function subscriptionEvent(
  type: "customer.subscription.updated" | "customer.subscription.deleted",
  stripeSubscriptionId: string,
  state: { status: string; cancel_at_period_end: boolean },
) {
  return {
    id: `evt_${type}_${++eventCounter}`,
    object: "event",
    type,
    data: { object: { id: stripeSubscriptionId, object: "subscription", metadata: {}, ...state } },
  };
}

describe("card subscriptions through Stripe Billing", () => {
  it("creates a Stripe subscription at the plan's price on the saved card, and waits for its invoice", async () => {
    const { slug, plan } = await appWithPlan();
    const { consumer, subscription, stripeId } = await subscribedWithCard(slug, plan.id);
    expect(subscription).toMatchObject({ status: "incomplete", renews_from: "card", calls_included: 2 });
    expect(stripeId).toMatch(/^sub_\d+$/);
    const created = stripe.fake.seen.findLast((r) => r.method === "POST" && r.path === "/v1/subscriptions");
    const customer = stripe.fake.seen.findLast((r) => r.path === "/v1/setup_intents")?.form.get("customer");
    expect(Object.fromEntries(created?.form ?? [])).toMatchObject({
      customer,
      default_payment_method: "pm_card_visa",
      "items[0][price_data][unit_amount]": "500",
      "items[0][price_data][currency]": "usd",
      "items[0][price_data][recurring][interval]": "day",
      "items[0][price_data][recurring][interval_count]": "30",
      payment_behavior: "error_if_incomplete",
      "metadata[promptmint_subscription_id]": subscription.id,
    });
    expect(created?.form.get("items[0][price_data][product]")).toMatch(/^prod_/);
    expect(created?.headers["idempotency-key"]).toBe(`subscription-${subscription.id}`);
    // Not paid yet: no included calls, and a second subscription is refused.
    expect((await callApp(consumer, slug)).status).toBe(402);
    const again = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id },
    });
    expect(again.status).toBe(409);
    // The plan's product is created once, however many subscribe.
    await subscribedWithCard(slug, plan.id);
    expect(stripe.fake.seen.filter((r) => r.path === "/v1/products")).toHaveLength(1);
  });

  it("activates on invoice.paid and pays the creator once per invoice, however often it is delivered", async () => {
    const { slug, plan } = await appWithPlan();
    const { consumer, subscription, stripeId } = await subscribedWithCard(slug, plan.id);
    const earningsBefore = await earningsOf(creator);
    const paid = firstInvoicePaid(stripeId, subscription.id);
    expect(await stripe.deliver(paid)).toEqual({ status: 200, body: { received: true, duplicate: false } });
    expect(await stripe.deliver(paid)).toEqual({ status: 200, body: { received: true, duplicate: true } });
    // Stripe may report the same invoice under another event: the money still moves once.
    expect((await stripe.deliver({ ...paid, id: `${paid.id}_again` })).body.duplicate).toBe(false);
    expect((await earningsOf(creator)) - earningsBefore).toBe(centsToMicros(450));
    const postings = await server.database.db
      .select()
      .from(ledgerTransactions)
      .where(eq(ledgerTransactions.reference, paid.data.object.id));
    expect(postings).toHaveLength(1);
    expect(await subscriptionOf(consumer, slug)).toMatchObject({
      status: "active",
      days_remaining: 30,
      current_period_end: new Date(paid.data.object.lines.data[0].period.end * 1000).toISOString(),
    });
    for (let i = 0; i < 2; i++) expect((await callApp(consumer, slug)).status).toBe(200);
    expect((await subscriptionOf(consumer, slug)).calls_used).toBe(2);
    expect(await walletOf(consumer)).toBe(0);
  });

  it("renews on Stripe's renewal invoice, never from the wallet: the quota resets and the period moves on", async () => {
    const { slug, plan } = await appWithPlan();
    const { consumer, subscription, stripeId } = await subscribedWithCard(slug, plan.id);
    const first = firstInvoicePaid(stripeId, subscription.id);
    await stripe.deliver(first);
    await callApp(consumer, slug);
    await topUpWallet(consumer, 1000);
    const periodEnd = first.data.object.lines.data[0].period.end;
    // Our own renewal runs past the period end and leaves the card subscription to Stripe.
    await renewDueSubscriptions(server.database.db, 10, new Date((periodEnd + DAY_S) * 1000));
    expect(await walletOf(consumer)).toBe(1000);
    expect((await subscriptionOf(consumer, slug)).status).toBe("active");

    const earningsBefore = await earningsOf(creator);
    const renewal = invoiceEvent("invoice.paid", stripeId, {
      id: `in_renewal_${stripeId}`,
      amountPaid: 500,
      start: periodEnd,
      end: periodEnd + 30 * DAY_S,
    });
    expect((await stripe.deliver(renewal)).status).toBe(200);
    expect(await subscriptionOf(consumer, slug)).toMatchObject({
      status: "active",
      calls_used: 0,
      current_period_start: new Date(periodEnd * 1000).toISOString(),
      current_period_end: new Date((periodEnd + 30 * DAY_S) * 1000).toISOString(),
    });
    expect((await earningsOf(creator)) - earningsBefore).toBe(centsToMicros(450));
    // A late redelivery of the first invoice neither pays again nor moves the period back.
    await stripe.deliver({ ...first, id: `${first.id}_late` });
    expect((await subscriptionOf(consumer, slug)).current_period_start).toBe(
      new Date(periodEnd * 1000).toISOString(),
    );
    expect((await earningsOf(creator)) - earningsBefore).toBe(centsToMicros(450));
  });

  it("renews under the terms it was subscribed at: a creator's cut and raise change neither the charge nor the calls", async () => {
    const { slug, plan } = await appWithPlan();
    const { consumer, subscription, stripeId } = await subscribedWithCard(slug, plan.id);
    const first = firstInvoicePaid(stripeId, subscription.id);
    await stripe.deliver(first);
    await callApp(consumer, slug);
    await callApp(consumer, slug);
    const cut = await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, {
      body: { included_calls: 1, price_cents: 900 },
    });
    expect(cut.body).toMatchObject({
      included_calls: 2,
      pending_terms: { included_calls: 1, price_cents: 900 },
    });
    // Stripe charges the price it was given at subscribe, forever: nothing is changed on Stripe.
    expect(stripe.fake.seen.filter((r) => r.path === `/v1/subscriptions/${stripeId}`)).toHaveLength(0);

    const periodEnd = first.data.object.lines.data[0].period.end;
    const earningsBefore = await earningsOf(creator);
    await stripe.deliver(
      invoiceEvent("invoice.paid", stripeId, {
        id: `in_renewal_terms_${stripeId}`,
        amountPaid: 500,
        start: periodEnd,
        end: periodEnd + 30 * DAY_S,
      }),
    );
    expect(await subscriptionOf(consumer, slug)).toMatchObject({
      calls_used: 0,
      calls_included: 2,
      terms: { version: 1, price_cents: 500, included_calls: 2 },
      next_terms: null,
    });
    expect((await earningsOf(creator)) - earningsBefore).toBe(centsToMicros(450));
    for (let i = 0; i < 2; i++) expect((await callApp(consumer, slug)).status).toBe(200);
    expect((await subscriptionOf(consumer, slug)).calls_used).toBe(2);
    const periods = await server.database.db
      .select()
      .from(subscriptionPeriods)
      .where(eq(subscriptionPeriods.subscriptionId, subscription.id));
    expect(periods.filter((p) => p.priceCents !== null).map((p) => [p.callsIncluded, p.priceCents])).toEqual([
      [2, 500],
      [2, 500],
    ]);
  });

  it("falls past due when a renewal fails, and calls are paid from the wallet until an invoice is paid", async () => {
    const { slug, plan } = await appWithPlan();
    const { consumer, subscription, stripeId } = await subscribedWithCard(slug, plan.id);
    const first = firstInvoicePaid(stripeId, subscription.id);
    await stripe.deliver(first);
    await topUpWallet(consumer, 100);
    const { start, end } = first.data.object.lines.data[0].period;
    const failed = invoiceEvent("invoice.payment_failed", stripeId, {
      id: `in_retry_${stripeId}`,
      amountPaid: 0,
      start,
      end,
    });
    expect((await stripe.deliver(failed)).status).toBe(200);
    expect((await subscriptionOf(consumer, slug)).status).toBe("past_due");
    expect((await callApp(consumer, slug)).status).toBe(200);
    expect(await walletOf(consumer)).toBe(80);
    expect((await subscriptionOf(consumer, slug)).calls_used).toBe(0);

    await stripe.deliver(
      invoiceEvent("invoice.paid", stripeId, { id: `in_retry_${stripeId}`, amountPaid: 500, start, end }),
    );
    expect((await subscriptionOf(consumer, slug)).status).toBe("active");
    expect((await callApp(consumer, slug)).status).toBe(200);
    expect(await walletOf(consumer)).toBe(80);
  });

  it("cancels at period end on Stripe; Stripe's deleted event ends it", async () => {
    const { slug, plan } = await appWithPlan();
    const { consumer, subscription, stripeId } = await subscribedWithCard(slug, plan.id);
    await stripe.deliver(firstInvoicePaid(stripeId, subscription.id));
    const canceled = await consumer.api("POST", `/api/app/${slug}/subscriptions/${subscription.id}/cancel/`);
    expect(canceled.body).toMatchObject({ status: "active", cancel_at_period_end: true });
    const update = stripe.fake.seen.findLast((r) => r.path === `/v1/subscriptions/${stripeId}`);
    expect(update?.form.get("cancel_at_period_end")).toBe("true");
    await stripe.deliver(
      subscriptionEvent("customer.subscription.updated", stripeId, {
        status: "active",
        cancel_at_period_end: true,
      }),
    );
    expect(await subscriptionOf(consumer, slug)).toMatchObject({
      status: "active",
      cancel_at_period_end: true,
    });
    await stripe.deliver(
      subscriptionEvent("customer.subscription.deleted", stripeId, {
        status: "canceled",
        cancel_at_period_end: true,
      }),
    );
    expect((await subscriptionOf(consumer, slug)).status).toBe("canceled");
    expect((await callApp(consumer, slug)).status).toBe(402);
    const again = await consumer.api("POST", `/api/app/${slug}/subscriptions/${subscription.id}/cancel/`);
    expect(again.status).toBe(409);
  });

  it("has Stripe cancel its card subscriptions at period end when the creator withdraws the plan", async () => {
    const { slug, plan } = await appWithPlan();
    const { consumer, subscription, stripeId } = await subscribedWithCard(slug, plan.id);
    await stripe.deliver(firstInvoicePaid(stripeId, subscription.id));
    expect((await creator.api("DELETE", `/api/app/${slug}/packages/${plan.id}/`)).status).toBe(204);
    const update = stripe.fake.seen.findLast((r) => r.path === `/v1/subscriptions/${stripeId}`);
    expect(update?.form.get("cancel_at_period_end")).toBe("true");
    expect(await subscriptionOf(consumer, slug)).toMatchObject({
      status: "active",
      cancel_at_period_end: true,
    });
  });

  it("charges nothing and keeps nothing when Stripe declines the card", async () => {
    const { slug, plan } = await appWithPlan();
    const consumer = await createCaller(server.baseUrl);
    const cardId = await saveCard(consumer, slug, DECLINED_CARD);
    const earningsBefore = await earningsOf(creator);
    const declined = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_method_id: cardId },
    });
    expect(declined.status).toBe(402);
    expect(declined.body.message).toBe("Your card was declined.");
    expect((await consumer.api("GET", `/api/app/${slug}/subscriptions/`)).body).toEqual([]);
    expect(await earningsOf(creator)).toBe(earningsBefore);
    const retried = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_method_id: await saveCard(consumer, slug, "pm_card_mastercard") },
    });
    expect(retried.status).toBe(201);
  });

  it("activates a subscription whose paid invoice arrives before Stripe's answer to its creation", async () => {
    const { slug, plan } = await appWithPlan();
    const consumer = await createCaller(server.baseUrl);
    const cardId = await saveCard(consumer, slug);
    const deliveries: { status: number }[] = [];
    stripe.fake.beforeSubscriptionAnswer = async (created) => {
      deliveries.push(
        await stripe.deliver(firstInvoicePaid(created.id, created.metadata.promptmint_subscription_id)),
      );
      return "answer";
    };
    try {
      const subscribed = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
        body: { package_id: plan.id, payment_method_id: cardId },
      });
      expect(deliveries).toEqual([expect.objectContaining({ status: 200 })]);
      expect(subscribed.body).toMatchObject({ status: "active", renews_from: "card", days_remaining: 30 });
    } finally {
      stripe.fake.beforeSubscriptionAnswer = undefined;
    }
  });

  it("never loses a charge whose answer was lost: Stripe's paid invoice still activates the subscription", async () => {
    const { slug, plan } = await appWithPlan();
    const consumer = await createCaller(server.baseUrl);
    const cardId = await saveCard(consumer, slug);
    let created: { id: string; metadata: Record<string, string> } | undefined;
    stripe.fake.beforeSubscriptionAnswer = async (subscription) => {
      created = subscription;
      return "lose-answer";
    };
    try {
      const failed = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
        body: { package_id: plan.id, payment_method_id: cardId },
      });
      expect(failed.status).toBe(502);
    } finally {
      stripe.fake.beforeSubscriptionAnswer = undefined;
    }
    expect((await subscriptionOf(consumer, slug)).status).toBe("canceled");
    const earningsBefore = await earningsOf(creator);
    await stripe.deliver(firstInvoicePaid(created?.id ?? "", created?.metadata.promptmint_subscription_id));
    expect(await subscriptionOf(consumer, slug)).toMatchObject({ status: "active", renews_from: "card" });
    expect((await earningsOf(creator)) - earningsBefore).toBe(centsToMicros(450));
  });

  it("refuses a forged webhook, another app's plan and another person's card", async () => {
    const { slug, plan } = await appWithPlan();
    const { consumer, cardId, subscription, stripeId } = await subscribedWithCard(slug, plan.id);
    const forged = await stripe.deliver(firstInvoicePaid(stripeId, subscription.id), {
      secret: "whsec_attacker",
    });
    expect(forged.status).toBe(400);
    expect((await subscriptionOf(consumer, slug)).status).toBe("incomplete");

    const other = await appWithPlan();
    const wrongPlan = await consumer.api("POST", `/api/app/${other.slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_method_id: cardId },
    });
    expect(wrongPlan.status).toBe(404);
    const stranger = await createCaller(server.baseUrl);
    const theirCard = await stranger.api("POST", `/api/app/${other.slug}/subscriptions/`, {
      body: { package_id: other.plan.id, payment_method_id: cardId },
    });
    expect(theirCard.status).toBe(404);
    expect(theirCard.body.message).toBe("Payment method not found");
    const both = await consumer.api("POST", `/api/app/${other.slug}/subscriptions/`, {
      body: { package_id: other.plan.id, payment_method_id: cardId, payment_intent_id: "pi_1" },
    });
    expect(both.status).toBe(400);
  });
});
