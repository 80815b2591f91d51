import { eq } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  applications,
  holds,
  invocations,
  ledgerTransactions,
  payments,
  subscriptions,
} from "../../db/schema/index.ts";
import { centsToMicros } from "../../lib/money.ts";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";
import { walletBalances } from "../billing/balances.ts";
import { reconcile } from "../billing/reconcile.ts";
import { APP_NOT_CALLABLE } from "./callable-app.ts";

// Issue 16 item 5 (docs/decisions/023): deleting an app with money history archives it; its
// subscribers get the unused part of their period back; an app without money history is erased.

const server = useTestServer();
const creator = useCaller(server, "Archiving Creator");
const DAY_MS = 86_400_000;
const card = { number: "4242 4242 4242 4242", exp_month: 12, exp_year: 2099, cvc: "123" };

beforeAll(async () => {});
afterEach(async () => {
  expect((await reconcile(server.database.db)).ok).toBe(true);
});

const db = () => server.database.db;
const userIdOf = async (caller: Caller) =>
  (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;

async function liveApp(name: string) {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name, visibility: "public", price_cents: 10 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  return app.slug as string;
}
const callApp = (caller: Caller, slug: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, { body: { inputs: { query: "hi" } } });

describe("deleting an app with money history", () => {
  it("archives it: subscribers refunded pro rata, pending plan payments credited, rows kept, app gone", async () => {
    const slug = await liveApp("Paid For");
    const { body: plan } = await creator.api("POST", `/api/app/${slug}/packages/`, {
      body: { name: "Monthly", price_cents: 300, included_calls: 5 },
    });
    const subscriber = await createCaller(server.baseUrl, "Subscriber");
    await fundWallet(subscriber, 300);
    const subscribed = await subscriber.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.id },
    });
    expect(subscribed.status).toBe(201);
    // Two thirds of the period are used: a third of what it paid comes back.
    const now = Date.now();
    await db()
      .update(subscriptions)
      .set({ currentPeriodStart: new Date(now - 20 * DAY_MS), currentPeriodEnd: new Date(now + 10 * DAY_MS) })
      .where(eq(subscriptions.id, subscribed.body.id));
    const caller = await createCaller(server.baseUrl, "Wallet Caller");
    await fundWallet(caller, 100);
    expect((await callApp(caller, slug)).status).toBe(200);
    await settledWallet(caller);
    const payer = await createCaller(server.baseUrl, "Paid, never subscribed");
    const intent = await payer.api("POST", `/api/app/${slug}/create-payment-intent/`, {
      body: { amount: 300, currency: "usd", package_id: plan.id },
    });
    await payer.api("POST", "/api/billing/sandbox/confirm/", {
      body: { client_secret: intent.body.client_secret, card },
    });
    const creatorId = await userIdOf(creator);
    const earningsBefore = (await walletBalances(db(), creatorId)).earnings;

    expect((await creator.api("DELETE", `/api/app/${slug}/`)).status).toBe(204);

    const subscriberId = await userIdOf(subscriber);
    // 270 of the 300 went to the creator and 30 to the platform; a bit under a third of each
    // (the period's unused part, to the millisecond) comes back, exact to the micro-dollar.
    const refunded = (await walletBalances(db(), subscriberId)).wallet;
    const fromEarnings = earningsBefore - (await walletBalances(db(), creatorId)).earnings;
    expect(fromEarnings).toBeGreaterThan(centsToMicros(90) - 1_000);
    expect(fromEarnings).toBeLessThanOrEqual(centsToMicros(90));
    expect(refunded - fromEarnings).toBeGreaterThan(centsToMicros(10) - 1_000);
    expect(refunded - fromEarnings).toBeLessThanOrEqual(centsToMicros(10));
    const [sub] = await db().select().from(subscriptions).where(eq(subscriptions.id, subscribed.body.id));
    expect(sub?.status).toBe("canceled");
    expect((await walletBalances(db(), await userIdOf(payer))).wallet).toBe(centsToMicros(300));
    const [payment] = await db().select().from(payments).where(eq(payments.externalId, intent.body.id));
    expect(payment?.consumedKind).toBe("wallet");
    const [row] = await db().select().from(applications).where(eq(applications.slug, slug));
    expect(row?.archivedAt).toBeInstanceOf(Date);
    expect(
      await db()
        .select()
        .from(holds)
        .where(eq(holds.applicationId, row?.id ?? "")),
    ).not.toHaveLength(0);
    expect(
      await db()
        .select()
        .from(invocations)
        .where(eq(invocations.applicationId, row?.id ?? "")),
    ).toHaveLength(1);

    // Gone for everyone: the owner's list and detail, Explore, and calls.
    expect((await creator.api("GET", `/api/app/${slug}/`)).status).toBe(404);
    expect((await creator.api("GET", "/api/app/")).body.map((a: { slug: string }) => a.slug)).not.toContain(
      slug,
    );
    expect((await caller.api("GET", `/api/explore/apps/${slug}`)).status).toBe(404);
    const refused = await callApp(caller, slug);
    expect(refused.status).toBe(404);
    expect(refused.body.message).toBe(APP_NOT_CALLABLE);
    expect((await subscriber.api("GET", `/api/app/${slug}/subscriptions/`)).status).toBe(404);
    // Its slug stays taken: old clients never reach, and pay, a different app.
    expect((await creator.api("POST", "/api/app/", { body: { name: "New", slug } })).status).toBe(409);
    const refunds = await db()
      .select()
      .from(ledgerTransactions)
      .where(eq(ledgerTransactions.reference, `archived-app-refund:${subscribed.body.id}`));
    expect(refunds).toHaveLength(1);
  });

  it("archives an app with only wallet-paid calls (was a 500), and erases one with none", async () => {
    const paid = await liveApp("Called");
    const caller = await createCaller(server.baseUrl, "Caller");
    await fundWallet(caller, 100);
    expect((await callApp(caller, paid)).status).toBe(200);
    await settledWallet(caller);
    expect((await creator.api("DELETE", `/api/app/${paid}/`)).status).toBe(204);
    const [kept] = await db().select().from(applications).where(eq(applications.slug, paid));
    expect(kept?.archivedAt).toBeInstanceOf(Date);

    const free = await liveApp("Only Tried");
    expect((await callApp(creator, free)).status).toBe(200);
    expect((await creator.api("DELETE", `/api/app/${free}/`)).status).toBe(204);
    expect(await db().select().from(applications).where(eq(applications.slug, free))).toHaveLength(0);
  });
});
