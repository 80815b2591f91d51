import { eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { invocations, subscriptions } from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";
import { walletBalances } from "./balances.ts";
import { centsToMicros } from "./money.ts";
import { renewDueSubscriptions } from "./subscriptions.ts";

const server = useTestServer({ env: { GATEWAY_RATE_LIMIT_PER_MINUTE: "100000" } });
const creator = useCaller(server, "Plan Seller");
afterEach(async () => {
  await expectReconciled(server.database.db);
});

const card = { number: "4242 4242 4242 4242", exp_month: 12, exp_year: 2099, cvc: "123" };
const address = {
  name: "Ada Lovelace",
  line1: "1 Analytical Way",
  city: "London",
  postal_code: "N1 9GU",
  country: "GB",
};
const userIdOf = async (caller: Caller) =>
  (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;

async function appWithPlan(priceCents = 20, plan: Record<string, unknown> = {}) {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Planned", visibility: "public", price_cents: priceCents },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  const created = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
    body: {
      name: "Pro",
      price_cents: 500,
      description: "For regulars",
      features: { support: "Email", calls: "2 per month" },
      included_calls: 2,
      ...plan,
    },
  });
  expect(created.status).toBe(201);
  return { slug: app.slug as string, plan: created.body };
}
const callApp = (caller: Caller, slug: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, { body: { inputs: { query: "hi" } } });

describe("plans", () => {
  it("lets the owner create, change and withdraw plans, and anyone who may call the app list them", async () => {
    const { slug, plan } = await appWithPlan();
    expect(plan).toMatchObject({
      name: "Pro",
      price: 5,
      price_cents: 500,
      currency: "usd",
      included_calls: 2,
      is_active: true,
      features: { support: "Email" },
    });
    const consumer = await createCaller(server.baseUrl);
    expect((await consumer.api("GET", `/api/app/${slug}/packages/`)).body).toHaveLength(1);
    expect(
      (
        await consumer.api("POST", `/api/app/${slug}/packages/`, {
          body: { name: "Mine", price_cents: 100, included_calls: 1 },
        })
      ).status,
    ).toBe(404);
    const cheap = await creator.api("POST", `/api/app/${slug}/packages/`, {
      body: { name: "Cheap", price_cents: 50, included_calls: 1 },
    });
    expect(cheap.body.fields).toEqual({ price_cents: "must be at least 100 cents ($1.00)" });
    const renamed = await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, {
      body: { name: "Pro Plus" },
    });
    expect(renamed.body.name).toBe("Pro Plus");
    expect((await creator.api("DELETE", `/api/app/${slug}/packages/${plan.id}/`)).status).toBe(204);
    expect((await consumer.api("GET", `/api/app/${slug}/packages/`)).body[0].is_active).toBe(false);
  });
});

describe("subscriptions", () => {
  it("covers the included calls, then charges the wallet, and pays the creator for the plan", async () => {
    const { slug, plan } = await appWithPlan(20);
    const consumer = await createCaller(server.baseUrl, "Subscriber");
    await fundWallet(consumer, 1000);
    const creatorBefore = (await walletBalances(server.database.db, await userIdOf(creator))).earnings;

    const subscribed = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id },
    });
    expect(subscribed.status).toBe(201);
    expect(subscribed.body).toMatchObject({
      package_name: "Pro",
      status: "active",
      cancel_at_period_end: false,
      calls_used: 0,
      calls_included: 2,
      days_remaining: 30,
    });
    expect((await consumer.api("GET", "/api/wallet/")).body.balance_micros / 10_000).toBe(500);

    for (let i = 0; i < 3; i++) expect((await callApp(consumer, slug)).status).toBe(200);
    expect((await consumer.api("GET", "/api/wallet/")).body.balance_micros / 10_000).toBe(480);
    const [sub] = (await consumer.api("GET", `/api/app/${slug}/subscriptions/`)).body;
    expect(sub.calls_used).toBe(2);
    const creatorAfter = (await walletBalances(server.database.db, await userIdOf(creator))).earnings;
    expect(creatorAfter - creatorBefore).toBe(centsToMicros(450 + 18));

    const again = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id },
    });
    expect(again.status).toBe(409);
  });

  it("never lets concurrent calls use more than the included calls", async () => {
    const { slug, plan } = await appWithPlan(10, { included_calls: 5 });
    const consumer = await createCaller(server.baseUrl);
    await fundWallet(consumer, 500 + 15 * 10);
    await consumer.api("POST", `/api/app/${slug}/subscriptions/`, { body: { package_id: plan.id } });
    const results = await Promise.all(Array.from({ length: 30 }, () => callApp(consumer, slug)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(20);
    expect(results.filter((r) => r.status === 402)).toHaveLength(10);
    const consumerId = await userIdOf(consumer);
    const covered = await server.database.db
      .select({ n: sql<number>`count(*)::int` })
      .from(invocations)
      .where(
        sql`${invocations.callerUserId} = ${consumerId} and ${invocations.status} = 'success' and ${invocations.chargedCents} = 0`,
      );
    expect(covered[0]?.n).toBe(5);
    expect(await walletBalances(server.database.db, consumerId)).toMatchObject({ wallet: 0, held: 0 });
  });

  it("is paid by a card payment made for the plan, which cannot be used twice or top up the wallet", async () => {
    const { slug, plan } = await appWithPlan();
    const consumer = await createCaller(server.baseUrl);
    const wrongAmount = await consumer.api("POST", `/api/app/${slug}/create-payment-intent/`, {
      body: { amount: 499, currency: "usd", package_id: plan.id },
    });
    expect(wrongAmount.body.fields).toEqual({ amount: "must equal the plan's price, 500 cents" });
    const intent = await consumer.api("POST", `/api/app/${slug}/create-payment-intent/`, {
      body: { amount: 500, currency: "usd", package_id: plan.id },
    });
    const confirmed = await consumer.api("POST", "/api/billing/sandbox/confirm/", {
      body: { client_secret: intent.body.client_secret, card },
    });
    expect(confirmed.body).toMatchObject({ status: "succeeded", balance_micros: 0 });
    const subscribed = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_intent_id: intent.body.id },
    });
    expect(subscribed.status).toBe(201);
    await consumer.api("POST", `/api/app/${slug}/subscriptions/${subscribed.body.id}/cancel/`);
    await renewDueSubscriptions(server.database.db, 10, new Date(Date.now() + 31 * 86_400_000));
    const reuse = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_intent_id: intent.body.id },
    });
    expect(reuse.status).toBe(400);
    expect(reuse.body.fields).toEqual({ payment_intent_id: "is not a completed payment for this plan" });
  });

  it("cancels at period end, then ends; renews from the wallet or falls past due", async () => {
    const { slug, plan } = await appWithPlan();
    const canceling = await createCaller(server.baseUrl);
    await fundWallet(canceling, 500);
    const sub = (
      await canceling.api("POST", `/api/app/${slug}/subscriptions/`, { body: { package_id: plan.id } })
    ).body;
    const canceled = await canceling.api("POST", `/api/app/${slug}/subscriptions/${sub.id}/cancel/`);
    expect(canceled.body).toMatchObject({ status: "active", cancel_at_period_end: true });
    const kept = await canceling.api("PATCH", `/api/app/${slug}/subscriptions/${sub.id}/`, {
      body: { cancel_at_period_end: false },
    });
    expect(kept.body.cancel_at_period_end).toBe(false);
    await canceling.api("POST", `/api/app/${slug}/subscriptions/${sub.id}/cancel/`);

    const renewing = await createCaller(server.baseUrl);
    await fundWallet(renewing, 1000);
    const renewingSub = (
      await renewing.api("POST", `/api/app/${slug}/subscriptions/`, { body: { package_id: plan.id } })
    ).body;
    const broke = await createCaller(server.baseUrl);
    await fundWallet(broke, 500);
    const brokeSub = (
      await broke.api("POST", `/api/app/${slug}/subscriptions/`, { body: { package_id: plan.id } })
    ).body;

    await renewDueSubscriptions(server.database.db, 10, new Date(Date.now() + 31 * 86_400_000));
    const status = async (id: string) =>
      (await server.database.db.select().from(subscriptions).where(eq(subscriptions.id, id)))[0]?.status;
    expect(await status(sub.id)).toBe("canceled");
    expect(await status(renewingSub.id)).toBe("active");
    expect(await status(brokeSub.id)).toBe("past_due");
    expect((await renewing.api("GET", "/api/wallet/")).body.balance_micros / 10_000).toBe(0);
    expect((await renewing.api("GET", `/api/app/${slug}/subscriptions/`)).body[0].calls_used).toBe(0);
  });

  it("answers 402 when the wallet cannot pay for the plan, and takes no saved card without Stripe", async () => {
    const { slug, plan } = await appWithPlan();
    const consumer = await createCaller(server.baseUrl);
    const saved = await consumer.api("POST", `/api/app/${slug}/payment-methods/`, {
      body: { billing_address: address, card },
    });
    const byCard = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_method_id: saved.body.id },
    });
    expect(byCard.status).toBe(400);
    expect(byCard.body.fields).toEqual({
      payment_method_id: "is only accepted when payments go through Stripe",
    });
    const response = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id },
    });
    expect(response.status).toBe(402);
    expect(response.body.message).toContain("the plan costs $5.00 and your wallet has $0.00 available");
  });
});

describe("payment methods", () => {
  it("pays a plan and a top-up with a card saved earlier, without typing it again (sandbox)", async () => {
    const { slug, plan } = await appWithPlan();
    const consumer = await createCaller(server.baseUrl);
    const saved = await consumer.api("POST", `/api/app/${slug}/payment-methods/`, {
      body: { billing_address: address, card: { ...card, number: "5555 5555 5555 4444" } },
    });
    expect(saved.status).toBe(201);
    // The wallet page has no app: its own list offers the same cards.
    expect((await consumer.api("GET", "/api/wallet/payment-methods/")).body).toEqual([
      expect.objectContaining({ id: saved.body.id, card_last4: "4444", is_default: true }),
    ]);
    const confirmSaved = async (body: object) => {
      const intent = await consumer.api("POST", `/api/app/${slug}/create-payment-intent/`, { body });
      return {
        intent: intent.body,
        result: await consumer.api("POST", "/api/billing/sandbox/confirm/", {
          body: { client_secret: intent.body.client_secret, payment_method_id: saved.body.id },
        }),
      };
    };

    const paid = await confirmSaved({ amount: 500, package_id: plan.id });
    expect(paid.result.body).toMatchObject({ status: "succeeded", amount: 500, balance_micros: 0 });
    const subscribed = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_intent_id: paid.intent.id },
    });
    expect(subscribed.status).toBe(201);
    expect(subscribed.body).toMatchObject({ status: "active", package_name: "Pro" });

    const topUp = await consumer.api("POST", "/api/wallet/payment-intents/", { body: { amount: 1200 } });
    const credited = await consumer.api("POST", "/api/billing/sandbox/confirm/", {
      body: { client_secret: topUp.body.client_secret, payment_method_id: saved.body.id },
    });
    expect(credited.body).toMatchObject({ status: "succeeded", amount: 1200, balance_micros: 12_000_000 });
    const wallet = (await consumer.api("GET", "/api/wallet/")).body;
    expect(wallet.transactions[0]).toMatchObject({
      kind: "top_up",
      description: "Wallet top-up (card •••• 4444)",
      amount_micros: 12_000_000,
    });
  });

  it("charges only the caller's own saved card, and asks for exactly one card", async () => {
    const { slug } = await appWithPlan();
    const owner = await createCaller(server.baseUrl);
    const saved = await owner.api("POST", `/api/app/${slug}/payment-methods/`, {
      body: { billing_address: address, card },
    });
    const thief = await createCaller(server.baseUrl);
    const confirm = async (extra: object) => {
      const intent = await thief.api("POST", "/api/wallet/payment-intents/", { body: { amount: 500 } });
      return thief.api("POST", "/api/billing/sandbox/confirm/", {
        body: { client_secret: intent.body.client_secret, ...extra },
      });
    };
    const stolen = await confirm({ payment_method_id: saved.body.id });
    expect(stolen.status).toBe(404);
    expect(stolen.body.message).toBe("Payment method not found");
    const both = await confirm({ payment_method_id: saved.body.id, card });
    expect(both.status).toBe(400);
    expect(both.body.fields).toEqual({ payment_method_id: "cannot be combined with card" });
    const neither = await confirm({});
    expect(neither.status).toBe(400);
    expect(Object.keys(neither.body.fields)).toEqual(["card"]);
    expect((await thief.api("GET", "/api/wallet/")).body.balance_micros).toBe(0);
  });

  it("saves brand, last 4 and expiry only, keeps one default, and refuses bad cards and addresses", async () => {
    const { slug } = await appWithPlan();
    const consumer = await createCaller(server.baseUrl);
    const add = (body: object) => consumer.api("POST", `/api/app/${slug}/payment-methods/`, { body });
    const first = await add({ billing_address: address, card });
    expect(first.body).toMatchObject({
      card_brand: "visa",
      card_last4: "4242",
      card_exp_month: 12,
      card_exp_year: 2099,
      is_default: true,
    });
    const second = await add({ billing_address: address, card: { ...card, number: "5555 5555 5555 4444" } });
    expect(second.body).toMatchObject({ card_brand: "mastercard", is_default: false });
    expect(
      (await add({ billing_address: address, card: { ...card, number: "4000 0000 0000 0002" } })).body
        .message,
    ).toBe("Your card was declined.");
    expect(Object.keys((await add({ card })).body.fields)).toEqual(["billing_address"]);
    expect(
      (await add({ billing_address: { ...address, country: "BR" } as object, card })).body.fields,
    ).toEqual({
      "billing_address.country": "must be one of US, CA, GB, AU, DE, FR, ES, IT, NL",
    });

    expect(
      (
        await consumer.api("PATCH", `/api/app/${slug}/payment-methods/${second.body.id}/`, {
          body: { is_default: true },
        })
      ).body.is_default,
    ).toBe(true);
    expect((await consumer.api("DELETE", `/api/app/${slug}/payment-methods/${second.body.id}/`)).status).toBe(
      204,
    );
    const left = (await consumer.api("GET", `/api/app/${slug}/payment-methods/`)).body;
    expect(left).toEqual([expect.objectContaining({ id: first.body.id, is_default: true })]);
    const stranger = await createCaller(server.baseUrl);
    expect((await stranger.api("GET", `/api/app/${slug}/payment-methods/`)).body).toEqual([]);
    expect((await stranger.api("DELETE", `/api/app/${slug}/payment-methods/${first.body.id}/`)).status).toBe(
      404,
    );
  });
});
