import { eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { subscriptionPeriods, subscriptions } from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";
import { renewDueSubscriptions } from "./subscriptions.ts";

// Decision 044: a plan's terms are versions; a period keeps the terms it started under.

const DAY_MS = 86_400_000;

const server = useTestServer({
  env: { PRICE_INCREASE_NOTICE_DAYS: "7", GATEWAY_RATE_LIMIT_PER_MINUTE: "100000" },
});
const creator = useCaller(server, "Plan Cutter");
afterEach(async () => {
  await expectReconciled(server.database.db);
});

async function appWithPlan(plan: { price_cents: number; included_calls: number }) {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Termed", visibility: "public", price_cents: 10 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  const created = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
    body: { name: "Pro", ...plan },
  });
  expect(created.status).toBe(201);
  return { slug: app.slug as string, plan: created.body };
}

const walletOf = async (caller: Caller) =>
  ((await caller.api("GET", "/api/wallet/")).body.balance_micros / 10_000) as number;
const callApp = (caller: Caller, slug: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, { body: { inputs: { query: "hi" } } });
const subscriptionOf = async (caller: Caller, slug: string) =>
  (await caller.api("GET", `/api/app/${slug}/subscriptions/`)).body[0];
const periodsOf = (subscriptionId: string) =>
  server.database.db
    .select()
    .from(subscriptionPeriods)
    .where(eq(subscriptionPeriods.subscriptionId, subscriptionId))
    .orderBy(subscriptionPeriods.periodStart);

/** Makes the subscription's current period end at `end` (time passing, without waiting). */
const endPeriodAt = (id: string, end: Date) =>
  server.database.db.update(subscriptions).set({ currentPeriodEnd: end }).where(eq(subscriptions.id, id));

async function includedCalls(caller: Caller, slug: string, n: number) {
  for (let i = 0; i < n; i++) {
    const answer = await callApp(caller, slug);
    expect(answer.status).toBe(200);
  }
}

/** A new caller with $100 in their wallet, subscribed from it to plan `planId` of app `slug`. */
async function newSubscriber(slug: string, planId: string) {
  const subscriber = await createCaller(server.baseUrl);
  await fundWallet(subscriber, 10_000);
  const sub = (
    await subscriber.api("POST", `/api/app/${slug}/subscriptions/`, { body: { package_id: planId } })
  ).body;
  return { subscriber, sub };
}

describe("a plan cut from 100 included calls to 1", () => {
  it("is announced; renewals inside the notice keep 100 calls at the old price, the first one after it gets 1", async () => {
    const { slug, plan } = await appWithPlan({ price_cents: 1000, included_calls: 100 });
    const { subscriber, sub } = await newSubscriber(slug, plan.id);
    expect(sub).toMatchObject({ calls_included: 100, terms: { version: 1, included_calls: 100 } });
    await includedCalls(subscriber, slug, 3);

    const cut = await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, {
      body: { included_calls: 1 },
    });
    expect(cut.status).toBe(200);
    // The edit answers what still holds and when the cut takes effect.
    expect(cut.body).toMatchObject({
      included_calls: 100,
      price_cents: 1000,
      terms_version: 1,
      pending_terms: { version: 2, included_calls: 1, price_cents: 1000 },
    });
    const takesEffect = Date.parse(cut.body.pending_terms.effective_from);
    expect(Math.abs(takesEffect - (Date.now() + 7 * DAY_MS))).toBeLessThan(60_000);
    // Saving the form again (the editor prefills the announced terms) changes nothing.
    const again = await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, {
      body: { name: "Pro", included_calls: 1, price_cents: 1000 },
    });
    expect(again.body.pending_terms).toMatchObject({
      version: 2,
      effective_from: cut.body.pending_terms.effective_from,
    });

    // The period ends a day from now, inside the notice: the subscriber is told from when it applies.
    const firstEnd = new Date(Date.now() + DAY_MS);
    await endPeriodAt(sub.id, firstEnd);
    const notified = await subscriptionOf(subscriber, slug);
    expect(notified.next_terms).toMatchObject({
      version: 2,
      included_calls: 1,
      price_cents: 1000,
      applies_from: new Date(firstEnd.getTime() + 30 * DAY_MS).toISOString(),
    });
    // Anyone looking at the plan sees the announced change too.
    const listed = (await subscriber.api("GET", `/api/app/${slug}/packages/`)).body[0];
    expect(listed).toMatchObject({ included_calls: 100, pending_terms: { included_calls: 1 } });

    // Renewal inside the notice window, even run late (after the cut took effect): 100 calls, $10.
    await renewDueSubscriptions(server.database.db, 10, new Date(takesEffect + DAY_MS));
    expect(await walletOf(subscriber)).toBe(10_000 - 2000);
    expect(await subscriptionOf(subscriber, slug)).toMatchObject({
      calls_included: 100,
      calls_used: 0,
      terms: { version: 1 },
    });
    await includedCalls(subscriber, slug, 3);
    await expectReconciled(server.database.db, "inside the notice");

    // The first renewal after the notice: the new terms, at the price they name.
    const secondEnd = new Date(firstEnd.getTime() + 30 * DAY_MS);
    await renewDueSubscriptions(server.database.db, 10, new Date(secondEnd.getTime() + 1000));
    expect(await walletOf(subscriber)).toBe(10_000 - 3000);
    const renewed = await subscriptionOf(subscriber, slug);
    expect(renewed).toMatchObject({
      calls_included: 1,
      calls_used: 0,
      terms: { version: 2 },
      next_terms: null,
    });
    await includedCalls(subscriber, slug, 1);
    // The next call is beyond the period's one call: paid from the wallet.
    await callApp(subscriber, slug);
    expect((await subscriptionOf(subscriber, slug)).calls_used).toBe(1);

    // Each period is judged by its own terms: two past periods used 3 calls, more than 1.
    const periods = await periodsOf(sub.id);
    expect(periods.map((p) => [p.callsIncluded, p.priceCents])).toEqual([
      [100, 1000],
      [100, 1000],
      [1, 1000],
    ]);
  });

  it("gives at once a change at least as good, and announces a mixed one (cheaper, but fewer calls)", async () => {
    const { slug, plan } = await appWithPlan({ price_cents: 2000, included_calls: 100 });
    const { subscriber, sub } = await newSubscriber(slug, plan.id);

    const more = await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, {
      body: { included_calls: 200 },
    });
    expect(more.body).toMatchObject({ included_calls: 200, terms_version: 2, pending_terms: null });
    expect(Math.abs(Date.parse(more.body.terms_effective_from) - Date.now())).toBeLessThan(60_000);
    // The running period keeps what it was paid for; the next renewal gets the better terms.
    expect(await subscriptionOf(subscriber, slug)).toMatchObject({
      calls_included: 100,
      next_terms: { version: 2, included_calls: 200 },
    });

    const mixed = await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, {
      body: { price_cents: 1900, included_calls: 10 },
    });
    expect(mixed.body).toMatchObject({
      price_cents: 2000,
      included_calls: 200,
      // Not a price increase, so no "rises to": the change is in pending_terms.
      pending_price_cents: null,
      pending_terms: { version: 3, price_cents: 1900, included_calls: 10 },
    });
    // The period ends tomorrow, inside the mixed change's notice: renewed under version 2.
    await endPeriodAt(sub.id, new Date(Date.now() + DAY_MS));
    await renewDueSubscriptions(server.database.db, 10, new Date(Date.now() + 2 * DAY_MS));
    expect(await walletOf(subscriber)).toBe(10_000 - 4000);
    expect(await subscriptionOf(subscriber, slug)).toMatchObject({
      calls_included: 200,
      terms: { version: 2 },
    });

    // A new subscriber is sold the terms in force, and sees the change announced.
    const newcomer = await createCaller(server.baseUrl);
    await fundWallet(newcomer, 10_000);
    const joined = await newcomer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id },
    });
    expect(joined.body).toMatchObject({
      calls_included: 200,
      terms: { version: 2 },
      next_terms: { version: 3 },
    });
    expect(sub.id).not.toBe(joined.body.id);
  });

  it("keeps plan terms immutable in the database", async () => {
    const { plan } = await appWithPlan({ price_cents: 500, included_calls: 5 });
    const error = await queryRows(
      server.database.db,
      sql`update plan_terms set included_calls = 1 where package_id = ${plan.id}`,
    ).catch((caught: Error) => caught);
    expect(String((error as Error).cause ?? error)).toMatch(/immutable/);
  });
});

describe("a plan withdrawn from sale", () => {
  it("tells its wallet subscribers their subscription ends with the period, and then ends it unrenewed", async () => {
    const { slug, plan } = await appWithPlan({ price_cents: 700, included_calls: 20 });
    const { subscriber, sub } = await newSubscriber(slug, plan.id);
    expect(sub.cancel_at_period_end).toBe(false);

    const withdrawn = await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, {
      body: { is_active: false },
    });
    expect(withdrawn.status).toBe(200);
    // What the subscriber reads is what the renewal will do: no renewal, no next terms.
    expect(await subscriptionOf(subscriber, slug)).toMatchObject({
      status: "active",
      cancel_at_period_end: true,
      next_terms: null,
    });

    await endPeriodAt(sub.id, new Date(Date.now() - 1000));
    await renewDueSubscriptions(server.database.db, 10, new Date());
    expect(await subscriptionOf(subscriber, slug)).toMatchObject({ status: "canceled" });
    expect(await walletOf(subscriber)).toBe(10_000 - 700);
  });
});
