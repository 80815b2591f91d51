import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database, DatabaseHandle } from "../../db/client.ts";
import {
  applications,
  holds,
  invocations,
  packages,
  payments,
  subscriptionPeriods,
  subscriptions,
  users,
} from "../../db/schema/index.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { type InvocationRecord, recordInvocation } from "../analytics/call-records.ts";
import { closeHold, placeHold, spendFromHold } from "./call-payment/holds.ts";
import { creditTopUp } from "./postings.ts";
import { reconcile } from "./reconcile.ts";

/**
 * The reconcile's call checks (call-checks.ts) on rows written directly: good data written the
 * way the paid path writes it reconciles; each kind of bad row is named by its own list.
 */

const PRICE = 25;
let testDb: TestDatabase;
let handle: DatabaseHandle;
let db: Database;
let owner: string;
let consumer: string;
let appId: string;
let subscriptionId: string;
let periodStart: Date;
/** Rows a test adds on top of the good data, removed after it. */
const added: { invocations: string[]; holds: string[] } = { invocations: [], holds: [] };

async function user(name: string): Promise<string> {
  const [row] = await db
    .insert(users)
    .values({ issuer: "test", subject: name, username: name, email: `${name}@example.com` })
    .returning({ id: users.id });
  return row?.id ?? "";
}

function call(overrides: Partial<InvocationRecord> = {}): InvocationRecord {
  return {
    id: randomUUID(),
    applicationId: appId,
    callerUserId: consumer,
    apiKeyId: null,
    endUser: null,
    mode: "completion",
    model: "gpt-4-turbo",
    status: "success",
    latencyMs: 5,
    inputTokens: 1,
    outputTokens: 1,
    ...overrides,
  };
}

/** A call paid from a hold of its own, the way the paid path records and closes it. */
async function paidCall(payer: string, overrides: Partial<InvocationRecord> = {}): Promise<string> {
  const holdId = await placeHold(db, {
    payerId: payer,
    applicationId: appId,
    creatorId: owner,
    amountCents: PRICE,
    ttlSeconds: 60,
    topUpUrl: "",
  });
  const record = call({
    callerUserId: payer,
    chargedCents: PRICE,
    holdId,
    settle: async (tx) =>
      (await spendFromHold(tx, holdId, { amountCents: PRICE, feePercent: 10 })) ?? "refused",
    ...overrides,
  });
  await recordInvocation(db, record);
  await closeHold(db, holdId);
  return record.id;
}

/** An invocation row as-is, bypassing the paid path: the bad data the checks must catch. */
async function insertInvocation(values: Partial<typeof invocations.$inferInsert>): Promise<string> {
  const id = randomUUID();
  await db.insert(invocations).values({ ...call(), id, ...values });
  added.invocations.push(id);
  return id;
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  handle = await testDb.open();
  db = handle.db;
  owner = await user("owner");
  consumer = await user("consumer");
  const [app] = await db
    .insert(applications)
    .values({ ownerId: owner, name: "Checked", slug: "checked", type: "prompt", priceCents: PRICE })
    .returning({ id: applications.id });
  appId = app?.id ?? "";
  const [plan] = await db
    .insert(packages)
    .values({ applicationId: appId, name: "Pro", priceCents: 500, includedCalls: 2 })
    .returning({ id: packages.id });
  periodStart = new Date(Date.now() - 60_000);
  const [subscription] = await db
    .insert(subscriptions)
    .values({
      packageId: plan?.id ?? "",
      applicationId: appId,
      subscriberId: consumer,
      currentPeriodStart: periodStart,
      currentPeriodEnd: new Date(periodStart.getTime() + 30 * 86_400_000),
      callsIncluded: 2,
      callsUsed: 1,
    })
    .returning({ id: subscriptions.id });
  subscriptionId = subscription?.id ?? "";

  // Good data: a wallet-paid call, an included call, the owner's own free call, an embedded call
  // (the owner pays, recording 0), a failed call, and a hold that expired moments ago.
  await creditTopUp(db, { userId: consumer, amountCents: 1000, reference: "top-up-1", description: "" });
  await creditTopUp(db, { userId: owner, amountCents: 1000, reference: "top-up-2", description: "" });
  await paidCall(consumer);
  const included = call();
  await recordInvocation(db, included);
  await db
    .update(invocations)
    .set({ subscriptionId, planPeriodStart: periodStart })
    .where(eq(invocations.id, included.id));
  await recordInvocation(db, call({ callerUserId: owner }));
  await paidCall(owner, { endUser: "embed:visitor-1", chargedCents: 0 });
  await recordInvocation(db, call({ status: "error", errorType: "upstream_failed" }));
  const recent = await placeHold(db, {
    payerId: consumer,
    applicationId: appId,
    creatorId: owner,
    amountCents: PRICE,
    ttlSeconds: 60,
    topUpUrl: "",
  });
  await db
    .update(holds)
    .set({ expiresAt: new Date(Date.now() - 10_000) })
    .where(eq(holds.id, recent));
});

afterEach(async () => {
  for (const id of added.invocations.splice(0)) await db.delete(invocations).where(eq(invocations.id, id));
  for (const id of added.holds.splice(0))
    await db
      .update(holds)
      .set({ expiresAt: new Date(Date.now() + 60_000) })
      .where(eq(holds.id, id));
  await db.update(subscriptions).set({ callsUsed: 1 }).where(eq(subscriptions.id, subscriptionId));
});

afterAll(async () => {
  await handle?.close();
  await testDb?.destroy();
});

describe("reconcile's call checks", () => {
  it("finds nothing wrong with calls paid by a hold, a plan, the owner's embed wallet, or free", async () => {
    const report = await expectReconciled(db);
    expect(report.unchargedSuccesses).toEqual([]);
  });

  it("names a successful paid call nothing paid for, including an embedded one without a hold", async () => {
    const consumerCall = await insertInvocation({ chargedCents: 0 });
    const embeddedCall = await insertInvocation({ callerUserId: owner, endUser: "embed:visitor-2" });
    const priced = await insertInvocation({ chargedCents: PRICE });
    const report = await reconcile(db);
    expect(new Set(report.unchargedSuccesses)).toEqual(new Set([consumerCall, embeddedCall, priced]));
    expect(report.ok).toBe(false);
  });

  it("names a call paid by both a hold and a plan, a hold without a price, or a plan with a price", async () => {
    const [hold] = await db.select({ id: holds.id }).from(holds).limit(1);
    const both = await insertInvocation({
      holdId: hold?.id,
      subscriptionId,
      planPeriodStart: new Date(0),
      chargedCents: PRICE,
    });
    const holdNoPrice = await insertInvocation({ holdId: hold?.id, chargedCents: 0 });
    const planWithPrice = await insertInvocation({
      subscriptionId,
      planPeriodStart: new Date(0),
      chargedCents: PRICE,
    });
    const report = await reconcile(db);
    expect(new Set(report.doubleCovered)).toEqual(new Set([both, holdNoPrice, planWithPrice]));
    expect(report.ok).toBe(false);
  });

  it("names a plan period that covered more calls than its own terms allow", async () => {
    const earlier = new Date(periodStart.getTime() - 30 * 86_400_000);
    await db.insert(subscriptionPeriods).values({
      subscriptionId,
      periodStart: earlier,
      periodEnd: periodStart,
      callsIncluded: 2,
    });
    for (let i = 0; i < 3; i++) await insertInvocation({ subscriptionId, planPeriodStart: earlier });
    const report = await reconcile(db);
    expect(report.overusedPeriods).toEqual([
      { subscriptionId, periodStart: expect.any(String), counted: 3, expected: 2 },
    ]);
    expect(new Date(report.overusedPeriods[0]?.periodStart ?? "").getTime()).toBe(earlier.getTime());
    expect(report.miscountedPeriods).toEqual([]);
    expect(report.ok).toBe(false);
  });

  it("names a subscription whose calls_used differs from the calls counted in its current period", async () => {
    await db.update(subscriptions).set({ callsUsed: 2 }).where(eq(subscriptions.id, subscriptionId));
    const report = await reconcile(db);
    expect(report.miscountedPeriods).toEqual([
      { subscriptionId, periodStart: expect.any(String), counted: 1, expected: 2 },
    ]);
    expect(report.ok).toBe(false);
  });

  it("names a hold still open more than a sweep interval after it expired", async () => {
    const [hold] = await db.select({ id: holds.id }).from(holds).where(eq(holds.status, "held")).limit(1);
    if (!hold) throw new Error("no open hold");
    await db
      .update(holds)
      .set({ expiresAt: new Date(Date.now() - 31_000) })
      .where(eq(holds.id, hold.id));
    added.holds.push(hold.id);
    const report = await reconcile(db);
    expect(report.overdueHolds).toEqual([hold.id]);
    expect(report.ok).toBe(false);
  });

  it("names a succeeded payment no wallet credit or subscription consumed, or one consumed by nothing", async () => {
    const paid = (externalId: string, values: Partial<typeof payments.$inferInsert>) =>
      db
        .insert(payments)
        .values({
          userId: consumer,
          gateway: "sandbox",
          externalId,
          amountCents: 500,
          status: "succeeded",
          purpose: "top_up",
          ...values,
        })
        .returning({ id: payments.id });
    const [uncredited] = await paid("pi_uncredited", {});
    const [phantom] = await paid("pi_phantom", {
      consumedKind: "wallet",
      consumedRef: randomUUID(),
      consumedAt: new Date(),
    });
    // A plan payment still within its wait for the subscribe call is not (yet) a difference.
    const [waiting] = await paid("pi_waiting", { purpose: "subscription" });
    try {
      const report = await reconcile(db);
      expect(new Set(report.unconsumedPayments)).toEqual(new Set([uncredited?.id, phantom?.id]));
      expect(report.ok).toBe(false);
    } finally {
      for (const row of [uncredited, phantom, waiting])
        if (row) await db.delete(payments).where(eq(payments.id, row.id));
    }
  });
});
