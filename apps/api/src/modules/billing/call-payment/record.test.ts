import { randomUUID } from "node:crypto";
import { eq, inArray, sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, queryRows } from "../../../db/client.ts";
import { holds, invocations } from "../../../db/schema/index.ts";
import { createTestDatabase, type TestDatabase } from "../../../test/database.ts";
import { sellerAndBuyer } from "../../../test/seller-and-buyer.ts";
import { startTestServer, type TestServer } from "../../../test/server.ts";
import type { InvocationRecord } from "../../analytics/call-records.ts";
import { balancesOf } from "../balances.ts";
import { centsToMicros } from "../money.ts";
import { reconcile } from "../reconcile.ts";
import { closeHold, takeCallPayment } from "./holds.ts";
import { CallRecorder, type Settlement } from "./record.ts";

// The batched recorder against a real database: calls finishing together share one statement and
// one commit, and every figure (balances, invocations, rollups) is what call-by-call writing gives.

const PRICE = 10;
const FEE_PERCENT = 10;
const FUNDS = 2_000;

let testDb: TestDatabase;
let server: TestServer;
let db: Database;
/** Records through a recorder of this test's own (the server's is built in app.ts). */
let recorder: CallRecorder;
const recordCall = (record: InvocationRecord, settlement?: Settlement) =>
  recorder.record(record, settlement).then((recorded) => recorded.outcome);
let consumerId: string;
let creatorId: string;
let appId: string;
let accounts: { wallet: string; held: string };

beforeAll(async () => {
  testDb = await createTestDatabase();
  server = await startTestServer(testDb);
  db = server.database.db;
  recorder = new CallRecorder(db);
  ({ appId, creatorId, consumerId, accounts } = await sellerAndBuyer(server, db, {
    name: "Batched",
    priceCents: PRICE,
    fundsCents: FUNDS,
  }));
});
afterAll(async () => {
  await server?.stop();
  await testDb?.destroy();
});

const hold = async () => {
  const payment = await takeCallPayment(db, {
    payerId: consumerId,
    applicationId: appId,
    creatorId,
    amountCents: PRICE,
    ttlSeconds: 60,
    topUpUrl: "http://example.test/wallet",
    tryIncluded: true,
    accounts,
  });
  if (!payment.holdId) throw new Error("expected a hold");
  return payment.holdId;
};

const call = (overrides: Partial<InvocationRecord> = {}): InvocationRecord => ({
  id: randomUUID(),
  applicationId: appId,
  callerUserId: consumerId,
  apiKeyId: null,
  endUser: "batch-user",
  mode: "completion",
  model: "gpt-4o-mini",
  status: "success",
  latencyMs: 12,
  inputTokens: 3,
  outputTokens: 5,
  chargedCents: PRICE,
  ...overrides,
});

const settlementOf = (holdId: string) => ({ holdId, amountCents: PRICE, feePercent: FEE_PERCENT });

const closeAll = async (holdIds: string[]) => {
  for (const holdId of holdIds) expect(await closeHold(db, holdId)).toBe(true);
};

const ROLLUP_FIGURES = [
  "invocations",
  "successes",
  "errors",
  "revenue",
  "input_tokens",
  "owner_invocations",
  "app_errors",
  "owner_errors",
] as const;

const appStats = async (): Promise<Record<(typeof ROLLUP_FIGURES)[number], number>> => {
  const [row] = await queryRows<Record<string, string>>(
    db,
    sql`select coalesce(sum(invocations), 0)::text as invocations, coalesce(sum(successes), 0)::text as successes,
          coalesce(sum(errors), 0)::text as errors, coalesce(sum(revenue_cents), 0)::text as revenue,
          coalesce(sum(input_tokens), 0)::text as input_tokens,
          (select coalesce(sum(invocations), 0) from owner_daily_stats where owner_id = ${creatorId})::text as owner_invocations,
          (select coalesce(sum(count), 0) from app_daily_errors where application_id = ${appId})::text as app_errors,
          (select coalesce(sum(count), 0) from owner_daily_errors where owner_id = ${creatorId})::text as owner_errors
        from app_daily_stats where application_id = ${appId}`,
  );
  return Object.fromEntries(ROLLUP_FIGURES.map((k) => [k, Number(row?.[k] ?? 0)])) as Record<
    (typeof ROLLUP_FIGURES)[number],
    number
  >;
};

it("writes calls that finish together in one batch, each charged once, with exact balances and rollups", async () => {
  const before = {
    stats: recorder.stats(),
    balances: await balancesOf(db, consumerId),
    rollups: await appStats(),
  };
  const holdIds = await Promise.all(Array.from({ length: 40 }, hold));
  const successes = holdIds.map((holdId) => ({ record: call(), holdId }));
  const failures = Array.from({ length: 5 }, () =>
    call({
      status: "error",
      errorType: "upstream_failed",
      errorMessage: "boom",
      chargedCents: 0,
      outputTokens: 0,
    }),
  );
  // All submitted at once: the first starts a batch on its own, the other 44 wait for it and
  // share the next.
  const results = await Promise.all([
    ...successes.map(({ record, holdId }) => recordCall(record, settlementOf(holdId))),
    ...failures.map((record) => recordCall(record)),
  ]);

  expect(results).toEqual([...Array(40).fill("hold"), ...Array(5).fill("none")]);
  const stats = recorder.stats();
  expect(stats.batches - before.stats.batches).toBe(2);
  expect(stats.calls - before.stats.calls).toBe(45);
  expect(stats.fallbacks).toBe(before.stats.fallbacks);

  // Recorded: each price is spent from its hold, durably, and no ledger row moved yet.
  const recordedBalances = await balancesOf(db, consumerId);
  expect(recordedBalances.wallet).toBe(before.balances.wallet - centsToMicros(40 * PRICE));
  expect(recordedBalances.held).toBe(before.balances.held + centsToMicros(40 * PRICE));
  const earningsBefore = (await balancesOf(db, creatorId)).earnings;
  const recorded = await db
    .select({ charged: invocations.chargedCents, status: invocations.status, holdId: invocations.holdId })
    .from(invocations)
    .where(inArray(invocations.id, [...successes.map((s) => s.record.id), ...failures.map((f) => f.id)]));
  expect(recorded.filter((r) => r.status === "success" && r.charged === PRICE)).toHaveLength(40);
  expect(new Set(recorded.map((r) => r.holdId).filter(Boolean))).toEqual(new Set(holdIds));
  expect(recorded.filter((r) => r.status === "error" && r.charged === 0 && !r.holdId)).toHaveLength(5);
  const spent = await db.select().from(holds).where(inArray(holds.id, holdIds));
  expect(
    spent.every(
      (h) =>
        h.status === "held" &&
        h.settledMicros === centsToMicros(PRICE) &&
        h.feeMicros === centsToMicros(1) &&
        h.calls === 1,
    ),
  ).toBe(true);
  expect((await reconcile(db)).ok).toBe(true);

  // Closed: the ledger posts what each hold's call spent.
  await closeAll(holdIds);
  const after = await balancesOf(db, consumerId);
  expect(after.wallet).toBe(before.balances.wallet - centsToMicros(40 * PRICE));
  expect(after.held).toBe(before.balances.held);
  expect((await balancesOf(db, creatorId)).earnings).toBe(earningsBefore + centsToMicros(40 * (PRICE - 1)));
  const closed = await db.select().from(holds).where(inArray(holds.id, holdIds));
  expect(closed.every((h) => h.status === "settled" && h.settledMicros === h.amountMicros)).toBe(true);
  expect(await closeHold(db, holdIds[0] ?? "")).toBe(false);

  const rollups = await appStats();
  expect(rollups.invocations - before.rollups.invocations).toBe(45);
  expect(rollups.successes - before.rollups.successes).toBe(40);
  expect(rollups.errors - before.rollups.errors).toBe(5);
  expect(rollups.revenue - before.rollups.revenue).toBe(40 * PRICE);
  expect(rollups.input_tokens - before.rollups.input_tokens).toBe(45 * 3);
  expect(rollups.owner_invocations - before.rollups.owner_invocations).toBe(45);
  expect(rollups.app_errors - before.rollups.app_errors).toBe(5);
  expect(rollups.owner_errors - before.rollups.owner_errors).toBe(5);
  expect((await reconcile(db)).ok).toBe(true);
});

it("records a call whose hold was already closed as failed and not charged, and charges the rest of its batch", async () => {
  const before = await balancesOf(db, consumerId);
  const [first, swept, last] = await Promise.all([hold(), hold(), hold()]);
  if (!first || !swept || !last) throw new Error("expected three holds");
  expect(await closeHold(db, swept)).toBe(true);
  const records = [call(), call(), call()];
  const results = await Promise.all(
    [first, swept, last].map((holdId, i) => recordCall(records[i] as InvocationRecord, settlementOf(holdId))),
  );

  expect(results).toEqual(["hold", "refused", "hold"]);
  const [uncharged] = await db
    .select({
      charged: invocations.chargedCents,
      holdId: invocations.holdId,
      status: invocations.status,
      errorType: invocations.errorType,
    })
    .from(invocations)
    .where(eq(invocations.id, records[1]?.id ?? ""));
  // Refused: the caller is told the call failed (paid-call.ts), so it is recorded as failed.
  expect(uncharged).toEqual({ charged: 0, holdId: null, status: "error", errorType: "payment_failed" });
  await closeAll([first, last]);
  const after = await balancesOf(db, consumerId);
  expect(after.wallet).toBe(before.wallet - centsToMicros(2 * PRICE));
  expect(after.held).toBe(before.held);
  expect((await reconcile(db)).ok).toBe(true);
});

it("writes the others of a batch when one call cannot be recorded, and never charges that one", async () => {
  const before = { stats: recorder.stats(), balances: await balancesOf(db, consumerId) };
  const [good, bad, alsoGood] = await Promise.all([hold(), hold(), hold()]);
  if (!good || !bad || !alsoGood) throw new Error("expected three holds");
  // Occupy the recorder so the three share one batch.
  // Occupies the recorder; a failed call, so nothing is owed for it.
  const blocker = recordCall(call({ status: "error", chargedCents: 0 }));
  const outcomes = await Promise.allSettled([
    recordCall(call(), settlementOf(good)),
    // An app that no longer exists: its invocation cannot be written (foreign key).
    recordCall(call({ applicationId: randomUUID() }), settlementOf(bad)),
    recordCall(call(), settlementOf(alsoGood)),
  ]);
  await blocker;

  expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(recorder.stats().fallbacks - before.stats.fallbacks).toBe(1);
  const [badHold] = await db.select({ status: holds.status }).from(holds).where(eq(holds.id, bad));
  expect(badHold?.status).toBe("held");
  await closeAll([good, bad, alsoGood]);
  const after = await balancesOf(db, consumerId);
  expect(after.wallet).toBe(before.balances.wallet - centsToMicros(2 * PRICE));
  expect(after.held).toBe(before.balances.held);
  expect((await reconcile(db)).ok).toBe(true);
});

it("answers a call whose batch committed but whose answer was lost with its recorded outcome, charged once", async () => {
  // A batch that committed and then lost its connection fails in the recorder, which writes its
  // calls again one by one; those find the calls already recorded. Submitting a recorded call
  // again takes the same path.
  const before = { stats: recorder.stats(), balances: await balancesOf(db, consumerId) };
  const holdId = await hold();
  const record = call();
  expect(await recordCall(record, settlementOf(holdId))).toBe("hold");
  // Occupies the recorder; a failed call, so nothing is owed for it.
  const blocker = recordCall(call({ status: "error", chargedCents: 0 }));
  const again = await Promise.all([
    recordCall(record, settlementOf(holdId)),
    recordCall(call({ status: "error", chargedCents: 0 })),
  ]);
  await blocker;

  expect(again).toEqual(["hold", "none"]);
  expect(recorder.stats().fallbacks - before.stats.fallbacks).toBe(1);
  const [spent] = await db.select().from(holds).where(eq(holds.id, holdId));
  expect(spent).toMatchObject({ settledMicros: centsToMicros(PRICE), calls: 1 });
  await closeAll([holdId]);
  const after = await balancesOf(db, consumerId);
  expect(after.wallet).toBe(before.balances.wallet - centsToMicros(PRICE));
  expect((await reconcile(db)).ok).toBe(true);
});
