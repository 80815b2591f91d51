import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type {
  AppUsageAnalytics,
  MoneyFigures,
  OwnerVersionFigures,
  VersionFigures,
} from "@promptmint/contracts";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, queryRows } from "../../db/client.ts";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";
import { closeHold, takeCallPayment } from "../billing/call-payment/holds.ts";
import { CallRecorder, recordOne } from "../billing/call-payment/record.ts";
import { accountFor } from "../billing/postings.ts";
import type { InvocationRecord } from "./call-records.ts";
import { compactRollups, utcDay } from "./rollups.ts";

// Issue 31 part 4: every figure of an app's analytics and of the creator's statement, broken down by
// the prompt version that answered, from the per-version rollup kept by the same statement as the
// app's; the breakdown adds up exactly to the app's totals, through the batch recorder and the
// single-call record alike.

const PRICE = 7;
const FEE_PERCENT = 15;

let testDb: TestDatabase;
let server: TestServer;
let db: Database;
let creator: Caller;
let creatorId: string;
let consumerId: string;
let appId: string;
let slug: string;
let accounts: { wallet: string; held: string };

beforeAll(async () => {
  testDb = await createTestDatabase();
  server = await startTestServer(testDb);
  db = server.database.db;
  creator = await createCaller(server.baseUrl, "Version Seller");
  const consumer = await createCaller(server.baseUrl, "Version Buyer");
  await fundWallet(consumer, 5_000);
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Versioned", interaction_mode: "completion", visibility: "public", price_cents: PRICE },
  });
  appId = app.id;
  slug = app.slug;
  const users = await queryRows<{ id: string; email: string }>(
    db,
    sql`select id, email from users where email in (${creator.email}, ${consumer.email})`,
  );
  creatorId = users.find((u) => u.email === creator.email)?.id ?? "";
  consumerId = users.find((u) => u.email === consumer.email)?.id ?? "";
  accounts = {
    wallet: await accountFor(db, "wallet", consumerId),
    held: await accountFor(db, "held", consumerId),
  };
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

const call = (appVersion: number | null, overrides: Partial<InvocationRecord> = {}): InvocationRecord => ({
  id: randomUUID(),
  applicationId: appId,
  callerUserId: consumerId,
  apiKeyId: null,
  endUser: `user-${appVersion}`,
  mode: "completion",
  model: "gpt-4o-mini",
  appVersion,
  status: "success",
  latencyMs: 100 + (appVersion ?? 0) * 10,
  inputTokens: 11,
  outputTokens: 13,
  chargedCents: PRICE,
  // Model costs that do not divide evenly: micro-dollar sums must stay exact.
  modelCostMicros: 1_234 + (appVersion ?? 0),
  ...overrides,
});

const settlementOf = (holdId: string) => ({ holdId, amountCents: PRICE, feePercent: FEE_PERCENT });

/** The raw invocations summed per version as the rollups keep them: what the breakdown must equal. */
async function rawByVersion() {
  const rows = await queryRows<Record<string, string | null>>(
    db,
    sql`select app_version as version, count(*)::text as invocations,
          count(*) filter (where status = 'success')::text as successes,
          sum(latency_ms)::text as latency, sum(input_tokens)::text as input_tokens,
          coalesce(sum(charged_cents) filter (where status = 'success'), 0)::text as cents,
          coalesce(sum(fee_micros) filter (where status = 'success' and charged_cents > 0), 0)::text as fee,
          sum(model_cost_micros)::text as model_cost,
          sum(model_cost_deducted_micros)::text as deducted
        from invocations where application_id = ${appId} group by 1`,
  );
  return new Map(rows.map((row) => [row.version === null ? null : Number(row.version), row]));
}

const sumOf = (rows: VersionFigures[], key: keyof VersionFigures) =>
  rows.reduce((acc, row) => acc + Number(row[key] ?? 0), 0);

function expectAddsUp(rows: VersionFigures[], figures: MoneyFigures, invocations: number) {
  expect(sumOf(rows, "invocations")).toBe(invocations);
  expect(sumOf(rows, "gross_micros")).toBe(figures.gross_micros);
  expect(sumOf(rows, "fee_micros")).toBe(figures.fee_micros);
  expect(sumOf(rows, "model_cost_micros")).toBe(figures.model_cost_micros);
  expect(sumOf(rows, "net_micros")).toBe(figures.net_micros);
}

let recorded = 0;

it("breaks an app's figures down by version exactly, from both the batch and the single record", async () => {
  const recorder = new CallRecorder(db);
  const holdIds: string[] = [];
  // The batch path: calls of versions 1 and 2 finishing together, paid from holds, plus failures
  // and an unversioned call (recorded before versions, or a workflow's).
  const batch = await Promise.all(
    [1, 1, 2, 2, 2].map(async (version) => {
      const holdId = await hold();
      holdIds.push(holdId);
      return recorder.record(call(version), settlementOf(holdId));
    }),
  );
  expect(batch.map((r) => r.outcome)).toEqual(["hold", "hold", "hold", "hold", "hold"]);
  await Promise.all([
    recorder.record(call(2, { status: "error", errorType: "upstream_failed", chargedCents: 0 })),
    recorder.record(call(null, { chargedCents: 0, modelCostMicros: 0 })),
  ]);
  expect(recorder.stats().batches).toBeGreaterThan(0);
  // The single path: one transaction per call (with its settle), and the one-statement record of
  // a call with nothing to settle.
  for (const version of [1, 3]) {
    const holdId = await hold();
    holdIds.push(holdId);
    expect((await recordOne(db, { record: call(version), settlement: settlementOf(holdId) })).outcome).toBe(
      "hold",
    );
  }
  await recordOne(db, { record: call(3, { chargedCents: 0, status: "error", errorType: "timeout" }) });
  recorded = 10;
  for (const holdId of holdIds) expect(await closeHold(db, holdId)).toBe(true);

  const { status, body } = await creator.api<AppUsageAnalytics>(
    "GET",
    `/api/app/${slug}/analytics/usage/?days=7`,
  );
  expect(status).toBe(200);
  expect(body.total_invocations).toBe(recorded);
  // Newest version first, the calls that name none last; the app's first version is production.
  expect(body.production_version).toBe(1);
  expect(body.by_version.map((v) => v.version)).toEqual([3, 2, 1, null]);
  expectAddsUp(body.by_version, body.figures, recorded);

  // Each version's figures are exactly its calls' (the raw invocations summed per version).
  const raw = await rawByVersion();
  for (const row of body.by_version) {
    const r = raw.get(row.version);
    expect(r, `version ${row.version}`).toBeDefined();
    expect(row.invocations).toBe(Number(r?.invocations));
    expect(row.success_count).toBe(Number(r?.successes));
    expect(row.input_tokens).toBe(Number(r?.input_tokens));
    expect(row.gross_micros).toBe(Number(r?.cents) * 10_000);
    expect(row.fee_micros).toBe(Number(r?.fee));
    expect(row.model_cost_micros).toBe(Number(r?.model_cost));
    expect(row.net_micros).toBe(row.gross_micros - row.fee_micros - row.model_cost_micros);
    expect(row.avg_response_time).toBeCloseTo(Number(r?.latency) / Number(r?.invocations) / 1000, 9);
    if (row.version === null) expect(row.model_cost_deducted_micros).toBeNull();
    else expect(row.model_cost_deducted_micros).toBe(Number(r?.deducted));
  }
  const v2 = body.by_version.find((v) => v.version === 2);
  expect(v2).toMatchObject({ invocations: 4, success_count: 3, error_count: 1, success_rate: 75 });
  expect(v2?.fee_micros).toBeGreaterThan(0);
  const v3 = body.by_version.find((v) => v.version === 3);
  // Version 3's two calls came by the single path: one charged, one failed.
  expect(v3).toMatchObject({ invocations: 2, success_count: 1, gross_micros: PRICE * 10_000 });
  expect(body.by_version.filter((v) => v.production).map((v) => v.version)).toEqual(
    body.production_version === null ? [] : [body.production_version],
  );
});

it("shows the version in the recent invocations", async () => {
  const { status, body } = await creator.api("GET", `/api/app/${slug}/analytics/invocations/?limit=50`);
  expect(status).toBe(200);
  const versions = (body.recent_invocations as { version: number | null }[]).map((r) => r.version);
  expect(versions).toHaveLength(recorded);
  expect(versions.filter((v) => v === 2)).toHaveLength(4);
  expect(versions.filter((v) => v === null)).toHaveLength(1);
  expect(versions.filter((v) => v === 3)).toHaveLength(2);
});

it("gives the creator's statement by app and version, its totals exactly the figures'", async () => {
  const [{ body: byVersion, status }, { body: figures }] = await Promise.all([
    creator.api<OwnerVersionFigures>("GET", "/api/analytics/figures/versions/?days=30"),
    creator.api<MoneyFigures>("GET", "/api/analytics/figures/?days=30"),
  ]);
  expect(status).toBe(200);
  expect(byVersion.figures).toEqual(figures);
  const [app] = byVersion.applications;
  expect(byVersion.applications).toHaveLength(1);
  expect(app?.application_slug).toBe(slug);
  expectAddsUp(app?.versions ?? [], figures, recorded);
  expect((await creator.api("GET", "/api/analytics/figures/versions/?days=12")).status).toBe(400);
});

it("keeps the breakdown through the fold of finished days' shards", async () => {
  const before = (await creator.api<AppUsageAnalytics>("GET", `/api/app/${slug}/analytics/usage/?days=7`))
    .body;
  // Folding as if today were over: every shard row of the per-version rollup goes to shard 0.
  const tomorrow = utcDay(new Date(Date.now() + 86_400_000));
  expect(await compactRollups(db, tomorrow)).toBeGreaterThanOrEqual(0);
  const [left] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from app_version_daily_stats where application_id = ${appId} and shard <> 0`,
  );
  expect(left?.n).toBe(0);
  const after = (await creator.api<AppUsageAnalytics>("GET", `/api/app/${slug}/analytics/usage/?days=7`))
    .body;
  expect(after.by_version).toEqual(before.by_version);
  expect(after.figures).toEqual(before.figures);
});

it("backfills in migration 0043 exactly what the recorder keeps", async () => {
  const kept = sql`select application_id, day::text, version, sum(invocations)::text as n,
      sum(successes)::text as ok, sum(latency_ms_sum)::text as latency, sum(revenue_cents)::text as cents,
      sum(fee_micros)::text as fee, sum(model_cost_micros)::text as cost,
      sum(model_cost_deducted_micros)::text as deducted
    from app_version_daily_stats group by 1, 2, 3 order by 1, 2, 3`;
  const recorderKept = await queryRows(db, kept);
  expect(recorderKept.length).toBeGreaterThan(0);
  // The migration's last statement is its backfill from the invocations that name their version.
  const migration = readFileSync(
    new URL("../../db/migrations/0043_app_version_daily_stats.sql", import.meta.url),
    "utf8",
  );
  const backfill = migration.split("--> statement-breakpoint").at(-1) ?? "";
  expect(backfill).toContain("INSERT INTO");
  await db.execute(sql`delete from app_version_daily_stats`);
  await db.execute(sql.raw(backfill));
  expect(await queryRows(db, kept)).toEqual(recorderKept);
});
