import { randomUUID } from "node:crypto";
import { eq, inArray, sql } from "drizzle-orm";
import { beforeAll, expect, it } from "vitest";
import { type Database, queryRows } from "../../db/client.ts";
import { applications, droppedHoldCalls, invocations } from "../../db/schema/index.ts";
import { sellerAndBuyer } from "../../test/seller-and-buyer.ts";
import { useTestServer } from "../../test/use-test-server.ts";
import { checkCalls } from "../billing/call-checks.ts";
import { closeHold, takeCallPayment } from "../billing/call-payment/holds.ts";
import { CallRecorder, type Settlement } from "../billing/call-payment/record.ts";
import { postOutstandingModelCosts } from "../billing/model-costs.ts";
import { reconcile } from "../billing/reconcile.ts";
import { walletStatement } from "../billing/statement.ts";
import { getAppUsage, getDashboard } from "./analytics.service.ts";
import type { InvocationRecord } from "./call-records.ts";
import {
  invocationPartitions,
  maintainInvocationPartitions,
  PARTITION_DAYS_AHEAD,
} from "./invocation-partitions.ts";

// Invocations partitioned by UTC day (migration 0028, docs/decisions/038): partitions made ahead,
// calls at the edges of days in their own days, strays in the default partition moved out, and
// days past the retention dropped while dashboards, statements and reconcile keep their figures.

const PRICE = 10;
const DAY_MS = 86_400_000;

const server = useTestServer();
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
  db = server.database.db;
  recorder = new CallRecorder(db);
  ({ appId, creatorId, consumerId, accounts } = await sellerAndBuyer(server, db, {
    name: "Partitioned",
    priceCents: PRICE,
    fundsCents: 1_000,
  }));
});

const dayOf = (at: Date) => at.toISOString().slice(0, 10);
const midnight = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));

const call = (overrides: Partial<InvocationRecord> = {}): InvocationRecord => ({
  id: randomUUID(),
  applicationId: appId,
  callerUserId: consumerId,
  apiKeyId: null,
  endUser: "partition-user",
  mode: "completion",
  model: "gpt-4o-mini",
  status: "success",
  latencyMs: 40,
  inputTokens: 3,
  outputTokens: 5,
  chargedCents: PRICE,
  ...overrides,
});

/** A call nothing is owed for (it failed). */
const free = (overrides: Partial<InvocationRecord> = {}) =>
  call({ status: "error", errorType: "upstream_error", chargedCents: 0, ...overrides });

async function paidCall(at: Date): Promise<string> {
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
  const outcome = await recordCall(call({ createdAt: at }), {
    holdId: payment.holdId,
    amountCents: PRICE,
    feePercent: 10,
  });
  expect(outcome).toBe("hold");
  await closeHold(db, payment.holdId);
  return payment.holdId;
}

/** The partition each of these calls is stored in. */
async function partitionsOf(ids: string[]): Promise<Map<string, string>> {
  const rows = await queryRows<{ id: string; part: string }>(
    db,
    sql`select id, tableoid::regclass::text as part from invocations where id in ${ids}`,
  );
  return new Map(rows.map((row) => [row.id, row.part]));
}

const partitionName = (day: string) => `invocations_p${day.replaceAll("-", "")}`;

it("has the partitions of today and the next days, and stores calls at the edges of a day in their own days", async () => {
  await maintainInvocationPartitions(db, { retentionDays: 0 });
  const today = midnight(new Date());
  const days = (await invocationPartitions(db)).map((p) => p.day);
  for (let ahead = 0; ahead <= PARTITION_DAYS_AHEAD; ahead += 1)
    expect(days).toContain(dayOf(new Date(today.getTime() + ahead * DAY_MS)));

  const tomorrow = new Date(today.getTime() + DAY_MS);
  const lastOfToday = free({ createdAt: new Date(tomorrow.getTime() - 1) });
  const firstOfTomorrow = free({ createdAt: tomorrow });
  await Promise.all([recordCall(lastOfToday), recordCall(firstOfTomorrow)]);
  const parts = await partitionsOf([lastOfToday.id, firstOfTomorrow.id]);
  expect(parts.get(lastOfToday.id)).toBe(partitionName(dayOf(today)));
  expect(parts.get(firstOfTomorrow.id)).toBe(partitionName(dayOf(tomorrow)));
});

it("keeps a call of a day without a partition in the default one, and moves it to its day's partition when made", async () => {
  const far = new Date(midnight(new Date()).getTime() + 30 * DAY_MS + 5_000);
  const stray = free({ createdAt: far });
  expect(await recordCall(stray)).toBe("none");
  expect((await partitionsOf([stray.id])).get(stray.id)).toBe("invocations_default");

  const done = await maintainInvocationPartitions(db, { retentionDays: 0 });
  expect(done.created).toContain(dayOf(far));
  expect((await partitionsOf([stray.id])).get(stray.id)).toBe(partitionName(dayOf(far)));
  const [left] = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from invocations_default`);
  expect(left?.n).toBe(0);
  // The same call recorded again meets its own row (its key is its id and its time) and is
  // answered with its recorded outcome, not written twice.
  expect(await recordCall(stray)).toBe("none");
  const copies = await db.select().from(invocations).where(eq(invocations.id, stray.id));
  expect(copies).toHaveLength(1);
});

it("drops the days past the retention, keeping the dashboards, the statement and reconcile exact", async () => {
  const today = midnight(new Date());
  const old = new Date(today.getTime() - 10 * DAY_MS + 3_600_000);
  const holdIds = [await paidCall(old), await paidCall(new Date(old.getTime() + 60_000))];
  const recent = await paidCall(new Date());
  // A call a plan did not pay whose model cost its creator still owes: its day waits for the sweep.
  const owed = call({ createdAt: old, callerUserId: creatorId, chargedCents: 0, modelCostMicros: 5_000 });
  expect(await recordCall(owed)).toBe("none");

  const [app] = await db.select().from(applications).where(eq(applications.id, appId));
  if (!app) throw new Error("expected the app");
  const before = {
    dashboard: await getDashboard(db, creatorId, 30),
    usage: await getAppUsage(db, app, 30),
    statement: await walletStatement(db, consumerId, { limit: 50 }),
  };
  expect(before.usage.total_invocations).toBeGreaterThanOrEqual(4);
  expect((await reconcile(db)).ok).toBe(true);

  const waiting = await maintainInvocationPartitions(db, { retentionDays: 5 });
  expect(waiting.deferred).toContain(dayOf(old));
  expect(waiting.dropped).not.toContain(dayOf(old));
  expect(await postOutstandingModelCosts(db)).toBe(1);

  const done = await maintainInvocationPartitions(db, { retentionDays: 5 });
  expect(done.dropped).toContain(dayOf(old));
  expect((await invocationPartitions(db)).map((p) => p.day)).not.toContain(dayOf(old));
  const [gone] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from invocations where created_at < ${today.toISOString()}::timestamptz - interval '5 days'`,
  );
  expect(gone?.n).toBe(0);
  expect(await db.select().from(invocations).where(eq(invocations.holdId, recent))).toHaveLength(1);
  const folded = await db.select().from(droppedHoldCalls).where(inArray(droppedHoldCalls.holdId, holdIds));
  expect(folded.map((row) => row.calls)).toEqual([1, 1]);

  // Rollups are never dropped: the dashboards read the same; so does the wallet statement.
  expect(await getDashboard(db, creatorId, 30)).toEqual(before.dashboard);
  expect(await getAppUsage(db, app, 30)).toEqual(before.usage);
  expect(await walletStatement(db, consumerId, { limit: 50 })).toEqual(before.statement);
  const report = await reconcile(db);
  expect(report.mismatchedHolds).toEqual([]);
  expect(report.ok).toBe(true);

  // A later run has nothing more to drop; a day inside the retention is kept.
  const again = await maintainInvocationPartitions(db, { retentionDays: 5 });
  expect(again.dropped).toEqual([]);
  expect((await invocationPartitions(db)).map((p) => p.day)).toContain(dayOf(today));
});

it("counts a plan period's covered calls of a dropped day as folded, so the period still adds up", async () => {
  const today = midnight(new Date());
  const periodStart = new Date(today.getTime() - 20 * DAY_MS);
  const [plan] = await queryRows<{ id: string }>(
    db,
    sql`insert into packages (application_id, name, price_cents, included_calls)
        values (${appId}, 'Monthly', 500, 10) returning id`,
  );
  // A period that began 20 days ago with 3 calls used: 2 recorded 15 days ago, 1 today.
  const [subscription] = await queryRows<{ id: string }>(
    db,
    sql`insert into subscriptions (package_id, application_id, subscriber_id, status, current_period_start,
          current_period_end, calls_included, calls_used)
        values (${plan?.id}, ${appId}, ${consumerId}, 'active', ${periodStart.toISOString()}::timestamptz,
          ${periodStart.toISOString()}::timestamptz + interval '30 days', 10, 3) returning id`,
  );
  const covered = (at: Date) =>
    call({
      createdAt: at,
      chargedCents: 0,
      coveredBy: { subscriptionId: subscription?.id as string, periodStart: periodStart.toISOString() },
    });
  const old = new Date(today.getTime() - 15 * DAY_MS + 7_200_000);
  for (const record of [covered(old), covered(old), covered(new Date())])
    expect(await recordCall(record)).toBe("none");
  const periodChecks = async () => {
    const checks = await checkCalls(db);
    return { miscounted: checks.miscountedPeriods, overused: checks.overusedPeriods };
  };
  expect(await periodChecks()).toEqual({ miscounted: [], overused: [] });

  const done = await maintainInvocationPartitions(db, { retentionDays: 10 });
  expect(done.dropped).toContain(dayOf(old));
  const [folded] = await queryRows<{ calls: number }>(
    db,
    sql`select calls from dropped_plan_calls where subscription_id = ${subscription?.id}::uuid`,
  );
  expect(folded?.calls).toBe(2);
  expect(await periodChecks()).toEqual({ miscounted: [], overused: [] });
  // A miscount is still seen: one more call used than recorded.
  await queryRows(db, sql`update subscriptions set calls_used = 4 where id = ${subscription?.id}::uuid`);
  expect((await periodChecks()).miscounted).toHaveLength(1);
  await queryRows(db, sql`update subscriptions set calls_used = 3 where id = ${subscription?.id}::uuid`);
});
