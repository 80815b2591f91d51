import { randomUUID } from "node:crypto";
import os from "node:os";
import { eq } from "drizzle-orm";
import pg from "pg";
import { type Database, openDatabase } from "../../apps/api/src/db/client.ts";
import { applications } from "../../apps/api/src/db/schema/index.ts";
import {
  getAppPerformance,
  getAppUsage,
  getDashboard,
  getOwnerVersionFigures,
  getRecentInvocations,
} from "../../apps/api/src/modules/analytics/analytics.service.ts";
import { recordInvocation } from "../../apps/api/src/modules/analytics/call-records.ts";
import { compactRollups, ROLLUP_SHARDS } from "../../apps/api/src/modules/analytics/rollups.ts";
import { quantile } from "../lib/load.ts";
import { resultsFile, sh, writeResultsSection } from "../lib/results.ts";
import { databaseUrl, queryOnce } from "../lib/scratch-database.ts";

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const TOTAL = Number(process.env.BENCH_INVOCATIONS ?? 10_000_000);
const APPS = Number(process.env.BENCH_APPS ?? 200);
const RECORD_SECONDS = Number(process.env.BENCH_RECORD_SECONDS ?? 15);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 64);
const BATCH = 1_000_000;
const USER_POOL = 5_000;

const TARGET_DASHBOARD_MS = 50;
const TARGET_APP_MS = 30;
const TARGET_RECORD_PER_S = 2_000;

const dbName = `pm_bench_${process.pid}_${Date.now()}`;
const benchUrl = databaseUrl(adminUrl, dbName);

const now = () => performance.now();
const fmt = (n: number, digits = 1) => n.toFixed(digits);
const log = (msg: string) => console.log(`[bench] ${msg}`);

const adminQuery = (text: string) => queryOnce(adminUrl, text);

interface LoadReport {
  seconds: number;
  invocationSeconds: number;
  indexSeconds: number;
  rollupSeconds: number;
  vacuumSeconds: number;
  statsRowsUnfolded: number;
  compactSeconds: number;
  rows: Record<string, number>;
  sizes: Record<string, string>;
}

/**
 * Bulk load through SQL, not recordInvocation(): 10M single-row transactions would take hours here.
 * The rollups are then built from the invocations with the same aggregates addToRollups() keeps.
 */
const ROLLUP_TABLES = [
  "invocations",
  "app_daily_stats",
  "app_version_daily_stats",
  "app_users",
  "app_daily_errors",
  "owner_daily_stats",
  "owner_users",
  "owner_daily_errors",
];

async function countRows(client: pg.Client, table: string): Promise<number> {
  const { rows } = await client.query<{ n: string }>(`select count(*) n from ${table}`);
  return Number(rows[0]?.n);
}

async function load(db: Database, client: pg.Client, ownerId: string, appIds: string[]): Promise<LoadReport> {
  const t0 = now();
  // The load session skips FK triggers (rows are valid by construction) and fsync waits; the
  // secondary index is rebuilt once at the end, which is far cheaper than 10M random inserts.
  await client.query("set session_replication_role = replica");
  await client.query("set synchronous_commit = off");
  await client.query("set maintenance_work_mem = '1GB'");
  await client.query("set work_mem = '256MB'");
  const {
    rows: [idx],
  } = await client.query<{ indexdef: string }>(
    "select indexdef from pg_indexes where indexname = 'invocations_app_created_idx'",
  );
  await client.query("drop index invocations_app_created_idx");

  for (let start = 0; start < TOTAL; start += BATCH) {
    const end = Math.min(TOTAL, start + BATCH);
    const tb = now();
    // Apps are skewed (power 2: the busiest app gets ~7% of all calls) so per-app reads are
    // measured on a big app too; end users are skewed over a pool of 5,000. Ids are
    // sequential so the primary key is appended to rather than split at random.
    await client.query(
      `insert into invocations (id, application_id, caller_user_id, end_user, mode, status,
         error_type, error_message, model, app_version, latency_ms, input_tokens, output_tokens, charged_cents, created_at)
       select lpad(to_hex(g), 32, '0')::uuid,
              ($1::uuid[])[1 + floor(${appIds.length} * power(r_app, 2))::int],
              $2::uuid,
              'user-' || floor(${USER_POOL} * power(r_user, 1.5))::int,
              'completion',
              case when r_status < 0.95 then 'success' else 'error' end,
              case when r_status < 0.95 then null
                   else (array['timeout','provider_error','rate_limited','invalid_input'])[1 + (g % 4)] end,
              case when r_status < 0.95 then null else 'synthetic failure' end,
              'gpt-4o-mini',
              -- Four prompt versions; one call in ten names none (issue 31 part 4).
              case when g % 10 = 0 then null else 1 + (g % 4) end,
              150 + floor(power(r_lat, 3) * 8000)::int,
              20 + floor(r_lat * 1500)::int,
              10 + floor(r_user * 800)::int,
              case when r_status < 0.95 then 1 + (g % 5) * 5 else 0 end,
              now() - r_time * interval '90 days'
       from (select g, random() r_app, random() r_user, random() r_status, random() r_lat, random() r_time
             from generate_series($3::bigint, $4::bigint) g) s`,
      [appIds, ownerId, start + 1, end],
    );
    log(`invocations ${end.toLocaleString()} / ${TOTAL.toLocaleString()} (${fmt((now() - tb) / 1000)} s)`);
  }
  const invocationSeconds = (now() - t0) / 1000;

  const ti = now();
  await client.query(idx?.indexdef ?? "");
  const indexSeconds = (now() - ti) / 1000;
  log(`index rebuilt (${fmt(indexSeconds)} s)`);

  const tr = now();
  // Shard by a hash of the id: every day of every app uses all shards, the worst case for reads
  // (live traffic uses one shard per connection that served the app; readers sum shards).
  await client.query(`
    insert into app_daily_stats (application_id, day, shard, invocations, successes, errors,
      latency_ms_sum, input_tokens, output_tokens, revenue_cents, last_invocation_at)
    select application_id, (created_at at time zone 'utc')::date, hashtext(id::text) & ${ROLLUP_SHARDS - 1},
           count(*), count(*) filter (where status = 'success'), count(*) filter (where status = 'error'),
           sum(latency_ms), sum(input_tokens), sum(output_tokens),
           coalesce(sum(charged_cents) filter (where status = 'success'), 0), max(created_at)
    from invocations group by 1, 2, 3`);
  log(`app_daily_stats built (${fmt((now() - tr) / 1000)} s)`);
  await client.query(`
    insert into app_version_daily_stats (application_id, day, version, shard, invocations, successes,
      errors, latency_ms_sum, input_tokens, output_tokens, revenue_cents)
    select application_id, (created_at at time zone 'utc')::date, app_version,
           hashtext(id::text) & ${ROLLUP_SHARDS - 1}, count(*), count(*) filter (where status = 'success'),
           count(*) filter (where status = 'error'), sum(latency_ms), sum(input_tokens), sum(output_tokens),
           coalesce(sum(charged_cents) filter (where status = 'success'), 0)
    from invocations where app_version is not null group by 1, 2, 3, 4`);
  log(`app_version_daily_stats built (${fmt((now() - tr) / 1000)} s)`);
  await client.query(`
    insert into app_users (application_id, end_user, last_day)
    select application_id, coalesce(end_user, 'account:' || caller_user_id::text),
           max((created_at at time zone 'utc')::date)
    from invocations group by 1, 2`);
  log(`app_users built (${fmt((now() - tr) / 1000)} s)`);
  await client.query(`
    insert into app_daily_errors (application_id, day, error_type, count)
    select application_id, (created_at at time zone 'utc')::date, coalesce(error_type, ''), count(*)
    from invocations where status = 'error' group by 1, 2, 3`);
  // The owner rollups are sums of the app rollups (shard 0), as migration 0008 builds them.
  await client.query(`
    insert into owner_users (owner_id, end_user, last_day)
    select a.owner_id, u.end_user, max(u.last_day)
    from app_users u join applications a on a.id = u.application_id group by 1, 2`);
  await client.query(`
    insert into owner_daily_stats (owner_id, day, shard, invocations, successes, errors,
      latency_ms_sum, input_tokens, output_tokens)
    select a.owner_id, s.day, 0, sum(s.invocations), sum(s.successes), sum(s.errors),
           sum(s.latency_ms_sum), sum(s.input_tokens), sum(s.output_tokens)
    from app_daily_stats s join applications a on a.id = s.application_id group by 1, 2`);
  await client.query(`
    insert into owner_daily_errors (owner_id, day, error_type, shard, count)
    select a.owner_id, e.day, e.error_type, 0, sum(e.count)
    from app_daily_errors e join applications a on a.id = e.application_id group by 1, 2, 3`);
  const rollupSeconds = (now() - tr) / 1000;
  log(`rollups built (${fmt(rollupSeconds)} s)`);
  await client.query("set session_replication_role = origin");

  const tv = now();
  await client.query("vacuum analyze");
  const vacuumSeconds = (now() - tv) / 1000;
  log(`vacuum analyze (${fmt(vacuumSeconds)} s)`);

  // The loaded stats are spread over all shards, as live traffic can leave them; the server folds
  // finished days every 10 minutes. Time that fold on the whole 90 days at once.
  const statsRowsUnfolded = await countRows(client, "app_daily_stats");
  const tc = now();
  await compactRollups(db);
  const compactSeconds = (now() - tc) / 1000;
  // Folding 90 days at once leaves ~4× dead space that a steady server (folding one day's shards
  // every 10 minutes, reusing the space) never has; rewrite the table so reads see steady state.
  await client.query("vacuum full analyze app_daily_stats");
  await client.query("vacuum full analyze app_version_daily_stats");
  log(`compactRollups: ${statsRowsUnfolded} stats rows folded in ${fmt(compactSeconds)} s`);

  const rows: Record<string, number> = {};
  const sizes: Record<string, string> = {};
  for (const table of ROLLUP_TABLES) {
    const { rows: r } = await client.query<{ n: string; size: string }>(
      `select (select count(*) from ${table}) n, pg_size_pretty(pg_total_relation_size('${table}')) size`,
    );
    rows[table] = Number(r[0]?.n);
    sizes[table] = r[0]?.size ?? "";
  }
  return {
    seconds: (now() - t0) / 1000,
    invocationSeconds,
    indexSeconds,
    rollupSeconds,
    vacuumSeconds,
    statsRowsUnfolded,
    compactSeconds,
    rows,
    sizes,
  };
}

interface ReadResult {
  name: string;
  target: number;
  median: number;
  p95: number;
}

/** 5 warm-up calls, then 50 timed ones; `call(i)` may rotate over apps. */
async function timeRead(
  name: string,
  target: number,
  call: (i: number) => Promise<unknown>,
): Promise<ReadResult> {
  for (let i = 0; i < 5; i++) await call(i);
  const samples: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = now();
    await call(i);
    samples.push(now() - t);
  }
  samples.sort((a, b) => a - b);
  const r = { name, target, median: quantile(samples, 0.5), p95: quantile(samples, 0.95) };
  log(`${name}: median ${fmt(r.median)} ms, p95 ${fmt(r.p95)} ms`);
  return r;
}

interface RecordResult {
  recorded: number;
  failed: number;
  seconds: number;
  perSecond: number;
  rollupDelta: number;
  rowDelta: number;
  consistent: boolean;
  latencyMedian: number;
  latencyP95: number;
}

/** Many concurrent workers on the app's pool (max 20 connections) all recording into ONE app. */
async function record(
  db: Awaited<ReturnType<typeof openDatabase>>["db"],
  client: pg.Client,
  appId: string,
  callerId: string,
): Promise<RecordResult> {
  const sums = async () => {
    const { rows } = await client.query<{ rollup: string; rows: string }>(
      `select (select coalesce(sum(invocations), 0) from app_daily_stats where application_id = $1) rollup,
              (select count(*) from invocations where application_id = $1) rows`,
      [appId],
    );
    return { rollup: Number(rows[0]?.rollup), rows: Number(rows[0]?.rows) };
  };
  const before = await sums();
  let recorded = 0;
  let failed = 0;
  const latencies: number[] = [];
  const deadline = now() + RECORD_SECONDS * 1000;
  const t0 = now();
  const worker = async () => {
    while (now() < deadline) {
      const ok = Math.random() < 0.95;
      const t = now();
      try {
        await recordInvocation(db, {
          id: randomUUID(),
          applicationId: appId,
          callerUserId: callerId,
          apiKeyId: null,
          endUser: `live-${Math.floor(Math.random() * USER_POOL)}`,
          mode: "completion",
          model: "gpt-4o-mini",
          status: ok ? "success" : "error",
          errorType: ok ? undefined : "timeout",
          errorMessage: ok ? undefined : "synthetic failure",
          latencyMs: 150 + Math.floor(Math.random() * 2000),
          inputTokens: 20 + Math.floor(Math.random() * 1500),
          outputTokens: 10 + Math.floor(Math.random() * 800),
          chargedCents: ok ? 5 : 0,
        });
        recorded++;
        latencies.push(now() - t);
      } catch (err) {
        failed++;
        if (failed <= 3) console.error("[bench] record failed:", err);
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  const seconds = (now() - t0) / 1000;
  const after = await sums();
  latencies.sort((a, b) => a - b);
  const rollupDelta = after.rollup - before.rollup;
  const rowDelta = after.rows - before.rows;
  return {
    recorded,
    failed,
    seconds,
    perSecond: recorded / seconds,
    rollupDelta,
    rowDelta,
    consistent: rollupDelta === recorded && rowDelta === recorded,
    latencyMedian: quantile(latencies, 0.5),
    latencyP95: quantile(latencies, 0.95),
  };
}

async function main() {
  log(`creating ${dbName}`);
  await adminQuery(`create database ${dbName}`);
  const handle = await openDatabase({ databaseUrl: benchUrl, pgliteDir: "memory://" });
  const client = new pg.Client({ connectionString: benchUrl });
  await client.connect();
  try {
    const { rows: version } = await client.query<{ v: string }>("select current_setting('server_version') v");
    const {
      rows: [owner],
    } = await client.query<{ id: string }>(
      `insert into users (issuer, subject, username, email)
       values ('bench', 'creator', 'bench-creator', 'creator@bench.invalid') returning id`,
    );
    const ownerId = owner?.id as string;
    const { rows: appRows } = await client.query<{ id: string }>(
      `insert into applications (owner_id, name, slug, type, price_cents, status)
       select $1, 'Bench app ' || i, 'bench-app-' || i, 'prompt', 1 + (i % 5) * 5, 'live'
       from generate_series(1, ${APPS}) i returning id`,
      [ownerId],
    );
    // Keep the generation order: index 0 is the busiest app (the skew favours low indexes).
    const appIds = appRows.map((r) => r.id);

    log(`loading ${TOTAL.toLocaleString()} invocations over 90 days into ${APPS} apps`);
    const loaded = await load(handle.db, client, ownerId, appIds);

    const { rows: appSizes } = await client.query<{ id: string; n: string }>(
      "select application_id id, sum(invocations) n from app_daily_stats group by 1 order by 2 desc",
    );
    const pick = [appSizes[0], appSizes[Math.floor(appSizes.length / 2)], appSizes[appSizes.length - 1]];
    const sample = [];
    for (const p of pick) {
      const [row] = await handle.db
        .select()
        .from(applications)
        .where(eq(applications.id, p?.id as string));
      if (row) sample.push({ row, invocations: Number(p?.n) });
    }
    log(
      `per-app reads rotate over apps with ${sample.map((s) => s.invocations.toLocaleString()).join(", ")} invocations`,
    );

    const db = handle.db;
    const app = (i: number) => (sample[i % sample.length] as (typeof sample)[number]).row;
    const reads: ReadResult[] = [];
    for (const days of [7, 30, 90]) {
      reads.push(
        await timeRead(`getDashboard days=${days}`, TARGET_DASHBOARD_MS, () =>
          getDashboard(db, ownerId, days),
        ),
      );
    }
    for (const days of [30, 90]) {
      reads.push(
        await timeRead(`getAppUsage days=${days}`, TARGET_APP_MS, (i) => getAppUsage(db, app(i), days)),
      );
      reads.push(
        await timeRead(`getAppPerformance days=${days}`, TARGET_APP_MS, (i) =>
          getAppPerformance(db, app(i), days),
        ),
      );
    }
    for (const days of [30, 90]) {
      reads.push(
        await timeRead(`getOwnerVersionFigures days=${days}`, TARGET_DASHBOARD_MS, () =>
          getOwnerVersionFigures(db, ownerId, days),
        ),
      );
    }
    reads.push(
      await timeRead("getRecentInvocations limit=20", TARGET_APP_MS, (i) =>
        getRecentInvocations(db, app(i), 20),
      ),
    );

    // Record into a mid-sized app: contention is on today's shard rows, not on the app's size.
    const target = sample[1]?.row.id ?? appIds[0];
    log(`recording for ${RECORD_SECONDS} s with ${WORKERS} workers into one app`);
    const rec = await record(db, client, target as string, ownerId);
    log(
      `recorded ${rec.recorded} in ${fmt(rec.seconds)} s = ${fmt(rec.perSecond, 0)}/s; ` +
        `rollup +${rec.rollupDelta}, rows +${rec.rowDelta}, consistent=${rec.consistent}`,
    );

    const report = renderReport({
      pgVersion: version[0]?.v ?? "?",
      loaded,
      sample: sample.map((s) => s.invocations),
      reads,
      rec,
    });
    console.log(`\n${report}`);
    writeResults(report);
  } finally {
    await client.end();
    await handle.close();
    if (process.env.BENCH_KEEP_DB === "1") log(`kept ${dbName}`);
    else {
      await adminQuery(`drop database if exists ${dbName} with (force)`);
      log(`dropped ${dbName}`);
    }
  }
}

function renderReport(r: {
  pgVersion: string;
  loaded: LoadReport;
  sample: number[];
  reads: ReadResult[];
  rec: RecordResult;
}): string {
  const pass = (ok: boolean) => (ok ? "PASS" : "FAIL");
  // The creator's statement by app and version reads all their apps, as the dashboard does.
  const ownerWide = (x: ReadResult) => x.name.startsWith("getDashboard") || x.name.startsWith("getOwner");
  const dash = r.reads.filter(ownerWide);
  const perApp = r.reads.filter((x) => !ownerWide(x));
  const dashOk = dash.every((x) => x.median < TARGET_DASHBOARD_MS);
  const appOk = perApp.every((x) => x.median < TARGET_APP_MS);
  const recOk = r.rec.perSecond >= TARGET_RECORD_PER_S && r.rec.consistent && r.rec.failed === 0;
  const mem = sh("free -g | awk '/^Mem:/ {print $2}'");
  const l = r.loaded;
  const lines = [
    "## Analytics (issue 6)",
    "",
    `Run ${new Date().toISOString()} with \`npm run bench:analytics\` (bench/analytics/run.ts).`,
    "",
    `- Machine: ${sh("nproc")} CPU cores (${os.cpus()[0]?.model ?? "?"}), ${mem} GB RAM; PostgreSQL ${r.pgVersion}`,
    "  on the same machine (default config, shared_buffers 128MB), so the benchmark client and the",
    "  server share the two cores.",
    `- Node ${process.version}; reads and recording use the app's own pool (max 20 connections).`,
    `- Load average (1/5/15 min) when the measurements ended: ${os
      .loadavg()
      .map((x) => fmt(x, 2))
      .join(" / ")}` +
      " — anything else running on the machine competes with the benchmark for the same two cores.",
    `- Dataset: ${l.rows.invocations?.toLocaleString()} invocations over the last 90 days, ${APPS} apps of one creator`,
    "  (skewed: the busiest app has ~7% of the calls), ~95% success, end users skewed over a pool of 5,000.",
    `  Rollups: ${ROLLUP_TABLES.slice(1)
      .map((t) => `${t} ${l.rows[t]?.toLocaleString()} rows (${l.sizes[t]})`)
      .join(", ")}; invocations ${l.sizes.invocations}.`,
    `- Load (SQL generate_series in batches of 1M, FK triggers off, index rebuilt after): ${fmt(l.seconds)} s total —` +
      ` invocations ${fmt(l.invocationSeconds)} s, index ${fmt(l.indexSeconds)} s, rollups ${fmt(l.rollupSeconds)} s,` +
      ` vacuum analyze ${fmt(l.vacuumSeconds)} s. The stats were loaded over all ${ROLLUP_SHARDS} shards` +
      ` (${l.statsRowsUnfolded.toLocaleString()} rows), then compactRollups() folded the finished days in` +
      ` ${fmt(l.compactSeconds)} s, as the server does every 10 minutes.`,
    `- Per-app reads rotate over three apps with ${r.sample.map((n) => n.toLocaleString()).join(" / ")} invocations` +
      " (busiest / median / smallest). Each row: 5 warm-up calls, then 50 timed calls of the service function.",
    "",
    "| Endpoint | Median (ms) | p95 (ms) | Target (median) | Result |",
    "|---|---:|---:|---:|---|",
    ...r.reads.map(
      (x) =>
        `| ${x.name} | ${fmt(x.median)} | ${fmt(x.p95)} | < ${x.target} | ${pass(x.median < x.target)} |`,
    ),
    "",
    `Recording: ${WORKERS} concurrent workers calling the real recordInvocation() into ONE app for ${fmt(r.rec.seconds)} s:`,
    `**${fmt(r.rec.perSecond, 0)} invocations/s** (${r.rec.recorded.toLocaleString()} recorded, ${r.rec.failed} failed;` +
      ` per-call latency median ${fmt(r.rec.latencyMedian)} ms, p95 ${fmt(r.rec.latencyP95)} ms).` +
      ` Rollup check: sum(app_daily_stats.invocations) +${r.rec.rollupDelta.toLocaleString()},` +
      ` invocations rows +${r.rec.rowDelta.toLocaleString()} — ${r.rec.consistent ? "exactly the number recorded" : "MISMATCH"}.`,
    "",
    "| Target | Result |",
    "|---|---|",
    `| Global dashboard < ${TARGET_DASHBOARD_MS} ms median (7/30/90 days) | ${pass(dashOk)} |`,
    `| Per-application endpoints < ${TARGET_APP_MS} ms median | ${pass(appOk)} |`,
    `| Recording ≥ ${TARGET_RECORD_PER_S.toLocaleString()} invocations/s into one app (and rollups exact) | ${pass(recOk)} |`,
    "",
  ];
  return lines.join("\n");
}

function writeResults(section: string) {
  writeResultsSection("## Analytics (issue 6)", section);
  log(`wrote ${resultsFile}`);
}

// An idle pooled connection cut by `drop database ... with (force)` must not crash the run.
process.on("uncaughtException", (err) => console.error("[bench] ignored connection error:", err.message));

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
