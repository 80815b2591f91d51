import { and, eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { payments, subscriptions } from "../../db/schema/index.ts";
import { type Caller, callOn, createCaller, fundWallet } from "../../test/caller.ts";
import type { TestServer } from "../../test/server.ts";
import { useTestServers } from "../../test/use-test-server.ts";
import { walletBalances } from "./balances.ts";
import { centsToMicros } from "./money.ts";
import { reconcile } from "./reconcile.ts";

// Issue 16 items 4 and 6 (docs/decisions/023): concurrent subscribes take the price once, and
// every plan payment ends in a subscription or the payer's wallet. On PostgreSQL the requests
// are spread over two servers on one database, as two API processes would be.

const { servers, urls } = useTestServers();
let creator: Caller;
const PLAN_CENTS = 300;
const card = { number: "4242 4242 4242 4242", exp_month: 12, exp_year: 2099, cvc: "123" };

beforeAll(async () => {
  creator = await createCaller(servers[0]?.baseUrl ?? "", "Plan Seller");
});
afterEach(async () => {
  expect((await reconcile(db())).ok).toBe(true);
});

const db = () => (servers[0] as TestServer).database.db;
/** The i-th of concurrent requests, sent to the servers in turn. */
const on = (caller: Caller, i: number) => (method: string, path: string, body?: unknown) =>
  callOn(caller, urls[i % urls.length] ?? "", method, path, body);
const userIdOf = async (caller: Caller) =>
  (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;

async function appWithPlan() {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Raced", visibility: "public", price_cents: 10 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  const { body: plan } = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
    body: { name: "Basic", price_cents: PLAN_CENTS, included_calls: 5 },
  });
  return { slug: app.slug as string, plan };
}

async function paidPlanIntent(consumer: Caller, slug: string, planId: string): Promise<string> {
  const intent = await consumer.api("POST", `/api/app/${slug}/create-payment-intent/`, {
    body: { amount: PLAN_CENTS, currency: "usd", package_id: planId },
  });
  const confirmed = await consumer.api("POST", "/api/billing/sandbox/confirm/", {
    body: { client_secret: intent.body.client_secret, card },
  });
  expect(confirmed.body.status).toBe("succeeded");
  return intent.body.id;
}

const liveSubscriptions = async (subscriberId: string) =>
  db()
    .select()
    .from(subscriptions)
    .where(and(eq(subscriptions.subscriberId, subscriberId), eq(subscriptions.status, "active")));

describe("concurrent subscribes", () => {
  it("create one subscription and take the price once when 20 arrive at once from the wallet", async () => {
    const { slug, plan } = await appWithPlan();
    const consumer = await createCaller(servers[0]?.baseUrl ?? "");
    await fundWallet(consumer, 10 * PLAN_CENTS);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        on(consumer, i)("POST", `/api/app/${slug}/subscriptions/`, { package_id: plan.id }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.every((a) => a.status === 409)).toBe(true);
    expect(refused[0]?.body.message).toContain("You already have an active subscription to this app");
    const consumerId = await userIdOf(consumer);
    expect(await liveSubscriptions(consumerId)).toHaveLength(1);
    expect((await walletBalances(db(), consumerId)).wallet).toBe(centsToMicros(9 * PLAN_CENTS));
  });

  it("let one payment pay once: its twins answer the same subscription, other payments go to the wallet", async () => {
    const { slug, plan } = await appWithPlan();
    const consumer = await createCaller(servers[0]?.baseUrl ?? "");
    const first = await paidPlanIntent(consumer, slug, plan.id);
    const second = await paidPlanIntent(consumer, slug, plan.id);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        on(consumer, i)("POST", `/api/app/${slug}/subscriptions/`, {
          package_id: plan.id,
          payment_intent_id: i % 2 === 0 ? first : second,
        }),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    // Every answer paid by the winning payment names the same subscription; the other payment's
    // answers are 409s saying the money went to the wallet.
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    const conflicts = answers.filter((a) => a.status === 409);
    expect(created.length + conflicts.length).toBe(12);
    expect(conflicts[0]?.body.message).toMatch(/added to your wallet/);
    const consumerId = await userIdOf(consumer);
    expect(await liveSubscriptions(consumerId)).toHaveLength(1);
    expect((await walletBalances(db(), consumerId)).wallet).toBe(centsToMicros(PLAN_CENTS));
    const rows = await db().select().from(payments).where(eq(payments.userId, consumerId));
    expect(rows.map((row) => row.consumedKind).sort()).toEqual(["subscription", "wallet"]);
  });
});

describe("a plan payment the plan no longer matches", () => {
  it("goes to the wallet with a 409 when the price changed between payment and subscribe", async () => {
    const { slug, plan } = await appWithPlan();
    const consumer = await createCaller(servers[0]?.baseUrl ?? "");
    const intent = await paidPlanIntent(consumer, slug, plan.id);
    // A decrease applies at once (an increase waits out its notice, decision 021).
    await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, { body: { price_cents: 200 } });
    const answer = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_intent_id: intent },
    });
    expect(answer.status).toBe(409);
    expect(answer.body.message).toBe(
      "The plan's price changed to $2.00 after you paid: your payment of $3.00 was added to your wallet instead",
    );
    const consumerId = await userIdOf(consumer);
    expect((await walletBalances(db(), consumerId)).wallet).toBe(centsToMicros(PLAN_CENTS));
    // Sent again, the payment is not credited twice.
    const again = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_intent_id: intent },
    });
    expect(again.status).toBe(409);
    expect((await walletBalances(db(), consumerId)).wallet).toBe(centsToMicros(PLAN_CENTS));
  });

  it("goes to the wallet with a 409 when the plan was withdrawn between payment and subscribe", async () => {
    const { slug, plan } = await appWithPlan();
    const consumer = await createCaller(servers[0]?.baseUrl ?? "");
    const intent = await paidPlanIntent(consumer, slug, plan.id);
    expect((await creator.api("DELETE", `/api/app/${slug}/packages/${plan.id}/`)).status).toBe(204);
    const answer = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id, payment_intent_id: intent },
    });
    expect(answer.status).toBe(409);
    expect(answer.body.message).toContain("withdrawn from sale after you paid");
    const consumerId = await userIdOf(consumer);
    expect((await walletBalances(db(), consumerId)).wallet).toBe(centsToMicros(PLAN_CENTS));
    const [row] = await db().select().from(payments).where(eq(payments.externalId, intent));
    expect(row?.consumedKind).toBe("wallet");
  });
});
