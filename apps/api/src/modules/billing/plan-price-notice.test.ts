import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { subscriptions } from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";
import { reconcile } from "./reconcile.ts";
import { renewDueSubscriptions } from "./subscriptions.ts";

// Decision 021: a plan renews at a raised price only once the increase's notice has run.

const DAY_MS = 86_400_000;

const server = useTestServer({ env: { PRICE_INCREASE_NOTICE_DAYS: "7" } });
const creator = useCaller(server, "Plan Pricer");
afterEach(async () => {
  expect((await reconcile(server.database.db)).ok).toBe(true);
});

async function appWithPlan(planPriceCents: number) {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Renewed", visibility: "public", price_cents: 10 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  const { body: plan } = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
    body: { name: "Pro", price_cents: planPriceCents, included_calls: 5 },
  });
  return { slug: app.slug as string, plan };
}

const balanceOf = async (caller: Caller) =>
  ((await caller.api("GET", "/api/wallet/")).body.balance_micros / 10_000) as number;

describe("a plan's price increase", () => {
  it("is announced, sold at the old price until it applies, and renews at the old price for periods ending before it", async () => {
    const { slug, plan } = await appWithPlan(500);
    const raised = await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, {
      body: { price_cents: 250_00 },
    });
    expect(raised.body).toMatchObject({ price: 5, price_cents: 500, pending_price_cents: 250_00 });
    const takesEffect = Date.parse(raised.body.pending_price_at);
    expect(Math.abs(takesEffect - (Date.now() + 7 * DAY_MS))).toBeLessThan(60_000);

    const subscriber = await createCaller(server.baseUrl);
    await fundWallet(subscriber, 100_000);
    const listed = (await subscriber.api("GET", `/api/app/${slug}/packages/`)).body[0];
    expect(listed).toMatchObject({ price_cents: 500, pending_price_cents: 250_00 });
    const sub = (
      await subscriber.api("POST", `/api/app/${slug}/subscriptions/`, { body: { package_id: plan.id } })
    ).body;
    expect(sub.status).toBe("active");
    expect(await balanceOf(subscriber)).toBe(100_000 - 500);

    // A period ending a day from now, before the increase applies; renewed late, after it applied.
    const periodEnd = new Date(Date.now() + DAY_MS);
    await server.database.db
      .update(subscriptions)
      .set({ currentPeriodEnd: periodEnd })
      .where(eq(subscriptions.id, sub.id));
    await renewDueSubscriptions(server.database.db, 10, new Date(takesEffect + DAY_MS));
    expect(await balanceOf(subscriber)).toBe(100_000 - 500 - 500);

    // The next period ends after the increase applied: it renews at the announced price.
    await renewDueSubscriptions(server.database.db, 10, new Date(periodEnd.getTime() + 31 * DAY_MS));
    expect(await balanceOf(subscriber)).toBe(100_000 - 500 - 500 - 250_00);
  });

  it("a decrease applies to the next renewal at once and withdraws an announced increase", async () => {
    const { slug, plan } = await appWithPlan(1000);
    await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, { body: { price_cents: 5000 } });
    const subscriber = await createCaller(server.baseUrl);
    await fundWallet(subscriber, 10_000);
    await subscriber.api("POST", `/api/app/${slug}/subscriptions/`, { body: { package_id: plan.id } });
    expect(await balanceOf(subscriber)).toBe(9000);
    const lowered = await creator.api("PATCH", `/api/app/${slug}/packages/${plan.id}/`, {
      body: { price_cents: 300 },
    });
    expect(lowered.body).toMatchObject({
      price_cents: 300,
      pending_price_cents: null,
      pending_price_at: null,
    });
    await renewDueSubscriptions(server.database.db, 10, new Date(Date.now() + 31 * DAY_MS));
    expect(await balanceOf(subscriber)).toBe(8700);
  });
});
