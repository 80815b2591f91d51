import { randomUUID } from "node:crypto";
import { eq, inArray, sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, queryRows } from "../../db/client.ts";
import { holds, invocations } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";
import { balancesOf } from "../billing/balances.ts";
import { closeHold, sweepExpiredHolds, takeCallPayment } from "../billing/holds.ts";
import { centsToMicros } from "../billing/money.ts";
import { cachedAccountFor } from "../billing/postings.ts";
import { reconcile } from "../billing/reconcile.ts";
import {
  type CallIntent,
  submitCompletion,
  submitFinish,
  submitIntent,
  submitVoid,
  sweepCallIntents,
} from "./call-intent.ts";

// Decision 037: a wallet-paid call's record in three steps against a real database (PGlite and
// PostgreSQL): intent (price spent, row pending), completion (charged), finish (rollups); a void
// gives the price back; the sweeper voids what a crash left pending and finishes what it left
// unfinished.

const PRICE = 10;
const FEE_PERCENT = 10;
const FUNDS = 2_000;

let testDb: TestDatabase;
let server: TestServer;
let db: Database;
let consumerId: string;
let creatorId: string;
let appId: string;
let accounts: { wallet: string; held: string };

beforeAll(async () => {
  testDb = await createTestDatabase();
  server = await startTestServer(testDb);
  db = server.database.db;
  const creator = await createCaller(server.baseUrl, "Intent Seller");
  const consumer = await createCaller(server.baseUrl, "Intent Buyer");
  await fundWallet(consumer, FUNDS);
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Intended", interaction_mode: "completion", visibility: "public", price_cents: PRICE },
  });
  appId = app.id;
  const users = await queryRows<{ id: string; email: string }>(
    db,
    sql`select id, email from users where email in (${creator.email}, ${consumer.email})`,
  );
  creatorId = users.find((u) => u.email === creator.email)?.id ?? "";
  consumerId = users.find((u) => u.email === consumer.email)?.id ?? "";
  accounts = {
    wallet: await cachedAccountFor(db, "wallet", consumerId),
    held: await cachedAccountFor(db, "held", consumerId),
  };
});
afterAll(async () => {
  await server?.stop();
  await testDb?.destroy();
});

/** A hold of `calls` prices (a lease), open for a minute. */
const hold = async (calls = 1) => {
  const payment = await takeCallPayment(db, {
    payerId: consumerId,
    applicationId: appId,
    creatorId,
    amountCents: PRICE,
    leaseCents: PRICE * calls,
    ttlSeconds: 60,
    topUpUrl: "http://example.test/wallet",
    tryIncluded: true,
    accounts,
  });
  if (!payment.holdId) throw new Error("expected a hold");
  return payment.holdId;
};

/** Each intent's row `created_at`, as its intent answered (later steps name the row by it). */
const rowAt = new Map<string, Date>();
const at = (intent: CallIntent) => {
  const createdAt = rowAt.get(intent.id);
  if (!createdAt) throw new Error("no row for this intent");
  return createdAt;
};
const intend = async (intent: CallIntent) => {
  const outcome = await submitIntent(db, intent);
  if (outcome.createdAt) rowAt.set(intent.id, outcome.createdAt);
  return outcome;
};

const intentOf = (holdId: string, overrides: Partial<CallIntent> = {}): CallIntent => {
  return {
    id: randomUUID(),
    applicationId: appId,
    callerUserId: consumerId,
    endUser: "intent-user",
    mode: "completion",
    model: "gpt-4o-mini",
    voidAfter: new Date(Date.now() + 60_000),
    holdId,
    amountCents: PRICE,
    feePercent: FEE_PERCENT,
    ...overrides,
  };
};

const completionOf = (intent: CallIntent) => ({
  id: intent.id,
  createdAt: at(intent),
  chargedCents: PRICE,
  feePercent: FEE_PERCENT,
  model: "gpt-4o-mini",
  latencyMs: 200,
  inputTokens: 3,
  outputTokens: 5,
});

const rowOf = async (id: string) => {
  const [row] = await db.select().from(invocations).where(eq(invocations.id, id));
  return row;
};

const holdOf = async (id: string) => {
  const [row] = await db.select().from(holds).where(eq(holds.id, id));
  if (!row) throw new Error("no hold");
  return row;
};

const rollups = async () => {
  const [row] = await queryRows<Record<string, string>>(
    db,
    sql`select coalesce(sum(invocations), 0)::text as invocations, coalesce(sum(successes), 0)::text as successes,
          coalesce(sum(revenue_cents), 0)::text as revenue, coalesce(sum(input_tokens), 0)::text as input_tokens,
          coalesce(sum(output_tokens), 0)::text as output_tokens, coalesce(sum(model_cost_micros), 0)::text as model_cost,
          (select coalesce(sum(invocations), 0) from owner_daily_stats where owner_id = ${creatorId})::text as owner_invocations
        from app_daily_stats where application_id = ${appId}`,
  );
  return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
};

const minus = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.keys(a).map((k) => [k, (a[k] ?? 0) - (b[k] ?? 0)]));

it("charges a call once: the intent spends its price and leaves it pending, the completion charges it, the finish adds it up", async () => {
  const before = { wallet: (await balancesOf(db, consumerId)).wallet, rollups: await rollups() };
  const earningsBefore = (await balancesOf(db, creatorId)).earnings;
  const holdId = await hold();
  const intent = intentOf(holdId);
  expect(await intend(intent)).toMatchObject({ outcome: "hold", cents: PRICE });

  // Pending: the hold counts it, the row charges nothing yet and is no success.
  expect(await rowOf(intent.id)).toMatchObject({
    status: "pending",
    chargedCents: 0,
    holdId,
    spentMicros: centsToMicros(PRICE),
    feeMicros: centsToMicros(1),
    unfinished: true,
  });
  expect(await holdOf(holdId)).toMatchObject({ settledMicros: centsToMicros(PRICE), calls: 1 });
  expect((await reconcile(db)).ok).toBe(true);

  expect(await submitCompletion(db, completionOf(intent))).toBe(PRICE);
  expect(await rowOf(intent.id)).toMatchObject({ status: "success", chargedCents: PRICE, unfinished: true });
  // Completed twice (a retry): the second finds nothing pending and charges nothing more.
  expect(await submitCompletion(db, completionOf(intent))).toBeUndefined();
  expect(minus(await rollups(), before.rollups)).toMatchObject({ invocations: 0, revenue: 0 });

  expect(await submitFinish(db, { id: intent.id, createdAt: at(intent), modelCostMicros: 700 })).toBe(true);
  expect(await submitFinish(db, { id: intent.id, createdAt: at(intent), modelCostMicros: 700 })).toBe(false);
  expect(await rowOf(intent.id)).toMatchObject({
    unfinished: false,
    modelCostMicros: 700,
    modelCostDeductedMicros: 700,
  });
  expect(await holdOf(holdId)).toMatchObject({ modelCostMicros: 700, calls: 1 });
  expect(minus(await rollups(), before.rollups)).toEqual({
    invocations: 1,
    successes: 1,
    revenue: PRICE,
    input_tokens: 3,
    output_tokens: 5,
    model_cost: 700,
    owner_invocations: 1,
  });

  expect(await closeHold(db, holdId)).toBe(true);
  expect((await balancesOf(db, consumerId)).wallet).toBe(before.wallet - centsToMicros(PRICE));
  expect((await balancesOf(db, creatorId)).earnings).toBe(earningsBefore + centsToMicros(PRICE - 1) - 700);
  expect((await reconcile(db)).ok).toBe(true);
});

it("gives a voided call's price back to its hold, and a void of a completed call changes nothing", async () => {
  const before = (await balancesOf(db, consumerId)).wallet;
  const holdId = await hold(2);
  const failed = intentOf(holdId);
  const answered = intentOf(holdId);
  expect(await Promise.all([intend(failed), intend(answered)])).toMatchObject([
    { outcome: "hold", cents: PRICE },
    { outcome: "hold", cents: PRICE },
  ]);
  expect(await holdOf(holdId)).toMatchObject({ settledMicros: centsToMicros(2 * PRICE), calls: 2 });
  expect(await submitCompletion(db, completionOf(answered))).toBe(PRICE);

  expect(await submitVoid(db, { id: failed.id, createdAt: at(failed) })).toBe(true);
  expect(await submitVoid(db, { id: answered.id, createdAt: at(answered) })).toBe(false);
  expect(await rowOf(failed.id)).toBeUndefined();
  expect(await holdOf(holdId)).toMatchObject({
    settledMicros: centsToMicros(PRICE),
    feeMicros: centsToMicros(1),
    calls: 1,
  });
  // A completion after the void finds nothing to charge: the call must not be answered.
  expect(await submitCompletion(db, completionOf(failed))).toBeUndefined();

  await submitFinish(db, { id: answered.id, createdAt: at(answered) });
  expect(await closeHold(db, holdId)).toBe(true);
  expect((await balancesOf(db, consumerId)).wallet).toBe(before - centsToMicros(PRICE));
  expect((await reconcile(db)).ok).toBe(true);
});

it("voids a call a crash left pending (its void lost) once past its deadline, and the hold then closes exactly", async () => {
  const before = (await balancesOf(db, consumerId)).wallet;
  const holdId = await hold(3);
  const lost = intentOf(holdId);
  const charged = intentOf(holdId);
  await Promise.all([intend(lost), intend(charged)]);
  expect(await submitCompletion(db, completionOf(charged))).toBe(PRICE);
  await submitFinish(db, { id: charged.id, createdAt: at(charged) });

  // Before its deadline a pending call is left alone: it may still be completed.
  expect(await sweepCallIntents(db)).toEqual({ voided: 0, finished: 0 });
  expect((await rowOf(lost.id))?.status).toBe("pending");
  // Past it: never answered (a completion always precedes the answer), so voided.
  expect(await sweepCallIntents(db, new Date(Date.now() + 61_000))).toEqual({ voided: 1, finished: 0 });
  expect(await rowOf(lost.id)).toBeUndefined();
  expect(await holdOf(holdId)).toMatchObject({ settledMicros: centsToMicros(PRICE), calls: 1 });

  expect(await closeHold(db, holdId)).toBe(true);
  expect(await holdOf(holdId)).toMatchObject({ status: "released", settledMicros: centsToMicros(PRICE) });
  expect((await balancesOf(db, consumerId)).wallet).toBe(before - centsToMicros(PRICE));
  expect((await reconcile(db)).ok).toBe(true);
});

it("voids a hold's pending calls in the statement that closes it, posting only the completed ones", async () => {
  const before = (await balancesOf(db, consumerId)).wallet;
  const holdId = await hold(3);
  const calls = [intentOf(holdId), intentOf(holdId), intentOf(holdId)];
  await Promise.all(calls.map((call) => intend(call)));
  const [first, second, third] = calls as [CallIntent, CallIntent, CallIntent];
  expect(await submitCompletion(db, completionOf(first))).toBe(PRICE);
  expect(await holdOf(holdId)).toMatchObject({ settledMicros: centsToMicros(3 * PRICE), status: "held" });

  // The hold is fully spent while two calls are pending: its close must not settle them.
  expect(await closeHold(db, holdId)).toBe(true);
  expect(await holdOf(holdId)).toMatchObject({
    status: "released",
    settledMicros: centsToMicros(PRICE),
    calls: 1,
  });
  expect(await rowOf(second.id)).toBeUndefined();
  expect(await submitCompletion(db, completionOf(third))).toBeUndefined();
  await submitFinish(db, { id: first.id, createdAt: at(first) });
  expect((await balancesOf(db, consumerId)).wallet).toBe(before - centsToMicros(PRICE));
  expect((await reconcile(db)).ok).toBe(true);
});

it("finishes a call a crash left completed but unfinished, once, with exact rollups", async () => {
  const before = await rollups();
  const holdId = await hold(4);
  const calls = Array.from({ length: 4 }, () => intentOf(holdId));
  await Promise.all(calls.map((call) => intend(call)));
  const completed = await Promise.all(calls.map((call) => submitCompletion(db, completionOf(call))));
  expect(completed).toEqual([PRICE, PRICE, PRICE, PRICE]);
  // The process "crashed" before any finish: nothing is in the rollups yet.
  expect(minus(await rollups(), before)).toMatchObject({ invocations: 0, successes: 0, revenue: 0 });

  expect(await sweepCallIntents(db)).toEqual({ voided: 0, finished: 0 });
  expect(await sweepCallIntents(db, new Date(Date.now() + 61_000))).toEqual({ voided: 0, finished: 4 });
  expect(await sweepCallIntents(db, new Date(Date.now() + 61_000))).toEqual({ voided: 0, finished: 0 });
  expect(minus(await rollups(), before)).toEqual({
    invocations: 4,
    successes: 4,
    revenue: 4 * PRICE,
    input_tokens: 12,
    output_tokens: 20,
    model_cost: 0,
    owner_invocations: 4,
  });
  const rows = await db
    .select({ unfinished: invocations.unfinished })
    .from(invocations)
    .where(
      inArray(
        invocations.id,
        calls.map((c) => c.id),
      ),
    );
  expect(rows.every((row) => !row.unfinished)).toBe(true);
  expect(await closeHold(db, holdId)).toBe(true);
  expect((await reconcile(db)).ok).toBe(true);
});

it("the expired-hold sweep voids and finishes what a crash left, then closes the hold: no money lost or created", async () => {
  const before = (await balancesOf(db, consumerId)).wallet;
  const holdId = await hold(3);
  const [answered, unanswered] = [intentOf(holdId), intentOf(holdId)];
  await Promise.all([intend(answered), intend(unanswered)]);
  expect(await submitCompletion(db, completionOf(answered))).toBe(PRICE);
  // Crash: no finish, no void. An hour later the hold has expired and the sweeper runs.
  expect(await sweepExpiredHolds(db, new Date(Date.now() + 3_600_000))).toBeGreaterThanOrEqual(1);
  expect(await holdOf(holdId)).toMatchObject({
    status: "released",
    settledMicros: centsToMicros(PRICE),
    calls: 1,
  });
  expect(await rowOf(unanswered.id)).toBeUndefined();
  expect(await rowOf(answered.id)).toMatchObject({
    status: "success",
    chargedCents: PRICE,
    unfinished: false,
  });
  expect((await balancesOf(db, consumerId)).wallet).toBe(before - centsToMicros(PRICE));
  expect((await reconcile(db)).ok).toBe(true);
});

it("refuses an intent whose hold is closed (recorded as failed, never pending) and batches intents made together", async () => {
  const closed = await hold();
  expect(await closeHold(db, closed)).toBe(true);
  const refused = intentOf(closed);
  const open = await hold(20);
  const many = Array.from({ length: 20 }, () => intentOf(open));
  const outcomes = await Promise.all([intend(refused), ...many.map((call) => intend(call))]);
  expect(outcomes[0]).toMatchObject({ outcome: "refused", cents: 0 });
  expect(outcomes.slice(1).every((o) => o.outcome === "hold" && o.cents === PRICE)).toBe(true);
  expect(await rowOf(refused.id)).toMatchObject({
    status: "error",
    errorType: "payment_failed",
    holdId: null,
  });
  expect(await submitCompletion(db, completionOf(refused))).toBeUndefined();
  const done = await Promise.all(many.map((call) => submitCompletion(db, completionOf(call))));
  expect(done.every((cents) => cents === PRICE)).toBe(true);
  await Promise.all([refused, ...many].map((call) => submitFinish(db, { id: call.id, createdAt: at(call) })));
  expect(await holdOf(open)).toMatchObject({ settledMicros: centsToMicros(20 * PRICE), calls: 20 });
  expect(await closeHold(db, open)).toBe(true);
  expect((await reconcile(db)).ok).toBe(true);
});
