/**
 * Flat as data grows (issue 20, docs/decisions/038): the paid path's recording rate and the
 * dashboards' latency with 1M invocations and with 50M, on the same machine in one run.
 *
 * Two scratch databases (prefix `growth_`) on one server: SMALL invocations in one, LARGE in the
 * other, both over the last 90 days (the default retention) in day partitions, with the rollups
 * the recorder keeps. The small one is loaded and measured first; then the large one is loaded,
 * and rounds alternate small, large, small, large… so both sizes see the same machine load. Each
 * figure is reported as large/small per round: the median ratio and its spread (min–max) across
 * rounds, with the load average at each round. Both databases are dropped at the end.
 */
import { randomUUID } from "node:crypto";
import os from "node:os";
import { eq } from "drizzle-orm";
import pg from "pg";
import { type Database, type DatabaseHandle, openDatabase } from "../../apps/api/src/db/client.ts";
import { applications } from "../../apps/api/src/db/schema/index.ts";
import {
  getAppPerformance,
  getAppUsage,
  getDashboard,
  getOwnerVersionFigures,
  getRecentInvocations,
} from "../../apps/api/src/modules/analytics/analytics.service.ts";
import { invocationPartitions } from "../../apps/api/src/modules/analytics/invocation-partitions.ts";
import { VERSION_STATS_ADDED } from "../../apps/api/src/modules/analytics/rollups.ts";
import { CallRecorder } from "../../apps/api/src/modules/billing/call-payment/record.ts";
import { median, quantile } from "../lib/load.ts";
import { loadAverage, machineSummary, sh, writeResultsSection } from "../lib/results.ts";
import { databaseUrl, queryOnce } from "../lib/scratch-database.ts";

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SMALL = Number(process.env.GROWTH_SMALL ?? 1_000_000);
const LARGE = Number(process.env.GROWTH_LARGE ?? 50_000_000);
const DAYS = 90;
const APPS = Number(process.env.GROWTH_APPS ?? 200);
const ROUNDS = Number(process.env.GROWTH_ROUNDS ?? 5);
const RECORD_SECONDS = Number(process.env.GROWTH_RECORD_SECONDS ?? 8);
const WORKERS = Number(process.env.GROWTH_WORKERS ?? 64);
const READS_PER_ROUND = Number(process.env.GROWTH_READS ?? 20);
const USER_POOL = 5_000;
/** The most calls one loading pass adds (spread over all the days). */
const PASS = 5_000_000;
/** Loading stops after the pass that passes this many minutes (the report gives the size reached). */
const LOAD_MINUTES = Number(process.env.GROWTH_LOAD_MINUTES ?? 45);
/** Prompt versions per app: the calls are spread over versions 1..VERSIONS (issue 31 part 4). */
const VERSIONS = Number(process.env.GROWTH_VERSIONS ?? 4);
const HEADING = "## Growth with per-version figures (issue 31)";

const now = () => performance.now();
const fmt = (n: number, digits = 1) => n.toFixed(digits);
const log = (msg: string) => console.log(`[growth] ${new Date().toISOString().slice(11, 19)} ${msg}`);

/** The q-quantile of values in any order. */
const quantileOf = (values: number[], q: number) =>
  quantile(
    [...values].sort((a, b) => a - b),
    q,
  );

const adminQuery = (text: string) => queryOnce(adminUrl, text);

interface Side {
  label: "small" | "large";
  name: string;
  url: string;
  handle: DatabaseHandle;
  client: pg.Client;
  ownerId: string;
  callerId: string;
  appIds: string[];
  loaded: number;
  loadSeconds: number;
  sample: { row: typeof applications.$inferSelect; invocations: number }[];
}

async function openSide(label: Side["label"]): Promise<Side> {
  const name = `growth_${label}_${process.pid}`;
  await adminQuery(`drop database if exists ${name} with (force)`);
  await adminQuery(`create database ${name}`);
  const url = databaseUrl(adminUrl, name);
  const handle = await openDatabase({ databaseUrl: url, pgliteDir: "memory://" });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows: users } = await client.query<{ id: string }>(
    `insert into users (issuer, subject, username, email)
     values ('bench', 'creator', 'bench-creator', 'creator@bench.invalid'),
            ('bench', 'caller', 'bench-caller', 'caller@bench.invalid') returning id`,
  );
  const ownerId = users[0]?.id as string;
  const { rows: apps } = await client.query<{ id: string }>(
    `insert into applications (owner_id, name, slug, type, price_cents, status)
     select $1, 'Bench app ' || i, 'bench-app-' || i, 'prompt', 1 + (i % 5) * 5, 'live'
     from generate_series(1, ${APPS}) i order by i returning id`,
    [ownerId],
  );
  // The partitions of the 90 days the calls are spread over (the server makes today's and the
  // days ahead; a database that ran for 90 days has made each of these in turn).
  await client.query(
    `select pm_invocations_partition(d::date)
     from generate_series(current_date - ${DAYS - 1}, current_date, interval '1 day') d`,
  );
  return {
    label,
    name,
    url,
    handle,
    client,
    ownerId,
    callerId: users[1]?.id as string,
    appIds: apps.map((r) => r.id),
    loaded: 0,
    loadSeconds: 0,
    sample: [],
  };
}

/**
 * Adds calls up to `total`, day by day over the last 90 days (each statement writes one day's
 * partition, as live traffic does), and the rollups the recorder keeps for them in the same
 * statement (one row per app and day, shard 0: finished days as compactRollups() leaves them).
 * Ids are sequential so the primary key is appended to.
 */
async function loadTo(side: Side, total: number): Promise<void> {
  const { client } = side;
  const t0 = now();
  await client.query("set session_replication_role = replica");
  await client.query("set synchronous_commit = off");
  await client.query("set work_mem = '256MB'");
  let next = side.loaded;
  // In passes of at most PASS calls, each spread over all 90 days: a load stopped by its time
  // limit still has the calls evenly over the days.
  for (let pass = 1; next < total; pass++) {
    if (pass > 1 && (now() - t0) / 60_000 > LOAD_MINUTES) {
      log(
        `${side.label}: load stopped by GROWTH_LOAD_MINUTES=${LOAD_MINUTES} at ${next.toLocaleString()} calls`,
      );
      break;
    }
    const passTotal = Math.min(total, next + PASS);
    const perDay = Math.ceil((passTotal - next) / DAYS);
    const tp = now();
    for (let d = 0; d < DAYS && next < passTotal; d++) {
      const count = Math.min(perDay, passTotal - next);
      await client.query(
        `with ins as (
         insert into invocations (id, application_id, caller_user_id, end_user, mode, status,
           error_type, error_message, model, app_version, latency_ms, input_tokens, output_tokens, charged_cents,
           fee_micros, model_cost_micros, created_at)
         select lpad(to_hex(g), 32, '0')::uuid,
                ($1::uuid[])[1 + floor(${side.appIds.length} * power(r_app, 2))::int],
                $2::uuid,
                'user-' || floor(${USER_POOL} * power(r_user, 1.5))::int,
                'completion',
                case when r_status < 0.95 then 'success' else 'error' end,
                case when r_status < 0.95 then null
                     else (array['timeout','provider_error','rate_limited','invalid_input'])[1 + (g % 4)] end,
                case when r_status < 0.95 then null else 'synthetic failure' end,
                'gpt-4o-mini',
                -- One call in ten names no version (a workflow's, or from before versions).
                case when g % 10 = 0 then null else 1 + (g % ${VERSIONS}) end,
                150 + floor(power(r_lat, 3) * 8000)::int,
                20 + floor(r_lat * 1500)::int,
                10 + floor(r_user * 800)::int,
                case when r_status < 0.95 then 1 + (g % 5) * 5 else 0 end,
                case when r_status < 0.95 then (1 + (g % 5) * 5) * 1500 else 0 end,
                37 + (g % 1000),
                (current_date - ${d})::timestamp at time zone 'UTC' + r_time * interval '1 day'
         from (select g, random() r_app, random() r_user, random() r_status, random() r_lat,
                      least(random(), 0.999999) r_time
               from generate_series($3::bigint, $4::bigint) g) s
         returning application_id, end_user, status, error_type, app_version, latency_ms, input_tokens,
           output_tokens, charged_cents, fee_micros, model_cost_micros, created_at
       ), stats as (
         insert into app_daily_stats as s (application_id, day, shard, invocations, successes, errors,
           latency_ms_sum, input_tokens, output_tokens, revenue_cents, fee_micros, model_cost_micros,
           last_invocation_at)
         select application_id, (created_at at time zone 'UTC')::date, 0, count(*),
           count(*) filter (where status = 'success'), count(*) filter (where status = 'error'),
           sum(latency_ms), sum(input_tokens), sum(output_tokens),
           coalesce(sum(charged_cents) filter (where status = 'success'), 0),
           coalesce(sum(fee_micros) filter (where status = 'success'), 0), sum(model_cost_micros),
           max(created_at)
         from ins group by 1, 2
         on conflict (application_id, day, shard) do update set invocations = s.invocations + excluded.invocations,
           successes = s.successes + excluded.successes, errors = s.errors + excluded.errors,
           latency_ms_sum = s.latency_ms_sum + excluded.latency_ms_sum,
           input_tokens = s.input_tokens + excluded.input_tokens, output_tokens = s.output_tokens + excluded.output_tokens,
           revenue_cents = s.revenue_cents + excluded.revenue_cents, fee_micros = s.fee_micros + excluded.fee_micros,
           model_cost_micros = s.model_cost_micros + excluded.model_cost_micros,
           last_invocation_at = greatest(s.last_invocation_at, excluded.last_invocation_at)
       ), version_stats as (
         insert into app_version_daily_stats as s (application_id, day, version, shard, invocations,
           successes, errors, latency_ms_sum, input_tokens, output_tokens, revenue_cents, fee_micros,
           model_cost_micros, model_cost_deducted_micros)
         select application_id, (created_at at time zone 'UTC')::date, app_version, 0, count(*),
           count(*) filter (where status = 'success'), count(*) filter (where status = 'error'),
           sum(latency_ms), sum(input_tokens), sum(output_tokens),
           coalesce(sum(charged_cents) filter (where status = 'success'), 0),
           coalesce(sum(fee_micros) filter (where status = 'success'), 0), sum(model_cost_micros), 0
         from ins where app_version is not null group by 1, 2, 3
         on conflict (application_id, day, version, shard) do update set ${VERSION_STATS_ADDED}
       ), users as (
         insert into app_users as u (application_id, end_user, last_day)
         select application_id, end_user, max((created_at at time zone 'UTC')::date) from ins group by 1, 2
         on conflict (application_id, end_user) do update set last_day = excluded.last_day
           where u.last_day < excluded.last_day
       )
       insert into app_daily_errors as e (application_id, day, error_type, count)
       select application_id, (created_at at time zone 'UTC')::date, coalesce(error_type, ''), count(*)
       from ins where status = 'error' group by 1, 2, 3
       on conflict (application_id, day, error_type) do update set count = e.count + excluded.count`,
        [side.appIds, side.callerId, next + 1, next + count],
      );
      next += count;
    }
    log(
      `${side.label}: ${next.toLocaleString()} / ${total.toLocaleString()} (pass ${pass}: ${fmt((now() - tp) / 1000)} s)`,
    );
  }
  // The owner rollups are the sums of the app rollups, as the recorder keeps them.
  await client.query("truncate owner_daily_stats, owner_users, owner_daily_errors");
  await client.query(`
    insert into owner_daily_stats (owner_id, day, shard, invocations, successes, errors,
      latency_ms_sum, input_tokens, output_tokens)
    select a.owner_id, s.day, 0, sum(s.invocations), sum(s.successes), sum(s.errors),
           sum(s.latency_ms_sum), sum(s.input_tokens), sum(s.output_tokens)
    from app_daily_stats s join applications a on a.id = s.application_id group by 1, 2`);
  await client.query(`
    insert into owner_users (owner_id, end_user, last_day)
    select a.owner_id, u.end_user, max(u.last_day)
    from app_users u join applications a on a.id = u.application_id group by 1, 2`);
  await client.query(`
    insert into owner_daily_errors (owner_id, day, error_type, shard, count)
    select a.owner_id, e.day, e.error_type, 0, sum(e.count)
    from app_daily_errors e join applications a on a.id = e.application_id group by 1, 2, 3`);
  await client.query("set session_replication_role = origin");
  // The rollups were updated once per pass: vacuum them, as autovacuum keeps them on a live
  // server (the recorder's upserts leave dead rows too). The invocations only get statistics: a
  // VACUUM of 50M fresh rows would take longer than the load, and a live server's autovacuum
  // would be doing the same work in the background.
  await client.query(
    "vacuum analyze app_daily_stats, app_version_daily_stats, app_users, app_daily_errors, owner_daily_stats, owner_users, owner_daily_errors",
  );
  await client.query("analyze invocations");
  side.loaded = next;
  side.loadSeconds += (now() - t0) / 1000;
  // Per-app reads rotate over the busiest, the median and the smallest app.
  const { rows: sizes } = await client.query<{ id: string; n: string }>(
    "select application_id id, sum(invocations) n from app_daily_stats group by 1 order by 2 desc, 1",
  );
  const pick = [sizes[0], sizes[Math.floor(sizes.length / 2)], sizes[sizes.length - 1]];
  side.sample = [];
  for (const p of pick) {
    const [row] = await side.handle.db
      .select()
      .from(applications)
      .where(eq(applications.id, p?.id as string));
    if (row) side.sample.push({ row, invocations: Number(p?.n) });
  }
  log(`${side.label}: loaded ${next.toLocaleString()} in ${fmt(side.loadSeconds)} s total`);
}

interface Figure {
  name: string;
  unit: "ms" | "calls/s";
  /** Per round: the round's figure on each side, and the load average (1 min) after it. */
  rounds: { small: number; large: number; load: number }[];
  /** Extra per-side detail of the last measurement (p95 latency etc.). */
  detail: { small?: string; large?: string };
}

type Read = { name: string; run: (side: Side, i: number) => Promise<unknown> };

const READS: Read[] = [
  ...[7, 30, 90].map((days) => ({
    name: `getDashboard days=${days}`,
    run: (side: Side) => getDashboard(side.handle.db, side.ownerId, days),
  })),
  ...[30, 90].flatMap((days) => [
    {
      name: `getAppUsage days=${days} (with by_version)`,
      run: (side: Side, i: number) => getAppUsage(side.handle.db, appOf(side, i), days),
    },
    {
      name: `getAppPerformance days=${days}`,
      run: (side: Side, i: number) => getAppPerformance(side.handle.db, appOf(side, i), days),
    },
  ]),
  ...[30, 90].map((days) => ({
    name: `getOwnerVersionFigures days=${days} (statement by app × version)`,
    run: (side: Side) => getOwnerVersionFigures(side.handle.db, side.ownerId, days),
  })),
  {
    name: "getRecentInvocations limit=20",
    run: (side: Side, i: number) => getRecentInvocations(side.handle.db, appOf(side, i), 20),
  },
];

function appOf(side: Side, i: number) {
  return (side.sample[i % side.sample.length] as Side["sample"][number]).row;
}

/** One read's median over READS_PER_ROUND calls (after 3 warm-up calls). */
async function timeRead(side: Side, read: Read): Promise<{ median: number; p95: number }> {
  for (let i = 0; i < 3; i++) await read.run(side, i);
  const samples: number[] = [];
  for (let i = 0; i < READS_PER_ROUND; i++) {
    const t = now();
    await read.run(side, i);
    samples.push(now() - t);
  }
  return { median: median(samples), p95: quantileOf(samples, 0.95) };
}

/**
 * The paid path's recording: WORKERS concurrent calls through the real recorder (CallRecorder,
 * batched into pm_record_batch_v10, one synchronous commit per batch) into one mid-sized app for
 * RECORD_SECONDS. Checks that every call recorded is one row and one count in the rollups.
 */
async function timeRecording(
  side: Side,
): Promise<{ perSecond: number; median: number; p95: number; consistent: boolean }> {
  const app = side.sample[1]?.row ?? side.sample[0]?.row;
  if (!app) throw new Error("no app to record into");
  const sums = async () => {
    const { rows } = await side.client.query<{ rollup: string; versions: string; rows: string }>(
      `select (select coalesce(sum(invocations), 0) from app_daily_stats where application_id = $1) rollup,
              (select coalesce(sum(invocations), 0) from app_version_daily_stats where application_id = $1) versions,
              (select count(*) from invocations where application_id = $1
                 and created_at >= (current_date::timestamp at time zone 'UTC')) rows`,
      [app.id],
    );
    return {
      rollup: Number(rows[0]?.rollup),
      versions: Number(rows[0]?.versions),
      rows: Number(rows[0]?.rows),
    };
  };
  const before = await sums();
  const latencies: number[] = [];
  let recorded = 0;
  let failed = 0;
  const recorder = new CallRecorder(side.handle.db);
  const deadline = now() + RECORD_SECONDS * 1000;
  const t0 = now();
  const worker = async () => {
    while (now() < deadline) {
      const ok = Math.random() < 0.95;
      const t = now();
      try {
        await recorder.record({
          id: randomUUID(),
          applicationId: app.id,
          callerUserId: side.callerId,
          apiKeyId: null,
          endUser: `live-${Math.floor(Math.random() * USER_POOL)}`,
          mode: "completion",
          model: "gpt-4o-mini",
          // Every recorded call names its version, so the per-version rollup is on the path measured.
          appVersion: 1 + (recorded % VERSIONS),
          status: ok ? "success" : "error",
          errorType: ok ? undefined : "timeout",
          errorMessage: ok ? undefined : "synthetic failure",
          latencyMs: 150 + Math.floor(Math.random() * 2000),
          inputTokens: 20 + Math.floor(Math.random() * 1500),
          outputTokens: 10 + Math.floor(Math.random() * 800),
          chargedCents: 0,
        });
        recorded++;
        latencies.push(now() - t);
      } catch (err) {
        failed++;
        if (failed <= 3) console.error("[growth] record failed:", err);
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  const seconds = (now() - t0) / 1000;
  const after = await sums();
  return {
    perSecond: recorded / seconds,
    median: median(latencies),
    p95: quantileOf(latencies, 0.95),
    consistent:
      failed === 0 &&
      after.rollup - before.rollup === recorded &&
      after.versions - before.versions === recorded &&
      after.rows - before.rows === recorded,
  };
}

function newFigures(): Figure[] {
  return [
    { name: "Recording (CallRecorder, 64 workers, one app)", unit: "calls/s", rounds: [], detail: {} },
    ...READS.map((r) => ({ name: r.name, unit: "ms" as const, rounds: [], detail: {} })),
  ];
}

/** One round on one side: recording, then every read. Answers the figures in `figures` order. */
async function measure(side: Side): Promise<{ values: number[]; details: string[]; consistent: boolean }> {
  const rec = await timeRecording(side);
  const values = [rec.perSecond];
  const details = [`latency median ${fmt(rec.median)} ms, p95 ${fmt(rec.p95)} ms`];
  for (const read of READS) {
    const r = await timeRead(side, read);
    values.push(r.median);
    details.push(`p95 ${fmt(r.p95)} ms`);
  }
  return { values, details, consistent: rec.consistent };
}

async function sizeOf(side: Side): Promise<{ rows: number; size: string; partitions: number }> {
  const { rows } = await side.client.query<{ size: string }>(
    `select pg_size_pretty((select sum(pg_total_relation_size(inhrelid)) from pg_inherits
                       where inhparent = 'invocations'::regclass)) size`,
  );
  const partitions = (await invocationPartitions(side.handle.db as Database)).length;
  // The calls loaded (a count(*) of 50M rows would take minutes and measure nothing); each round
  // adds the calls it records (a few tens of thousands).
  return { rows: side.loaded, size: rows[0]?.size ?? "?", partitions };
}

async function main() {
  const started = new Date();
  const loadAtStart = loadAverage();
  const { rows: version } = await (async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      return await c.query<{ v: string }>("select current_setting('server_version') v");
    } finally {
      await c.end();
    }
  })();
  const small = await openSide("small");
  let large: Side | undefined;
  try {
    log(`loading ${SMALL.toLocaleString()} invocations into ${small.name}`);
    await loadTo(small, SMALL);
    // The small database alone first (the machine as it is before the large load).
    const alone = await measure(small);
    log(
      `small alone: ${fmt(alone.values[0] as number, 0)} calls/s, dashboard 30d ${fmt(alone.values[2] as number)} ms`,
    );

    large = await openSide("large");
    // "Load 1M, measure; load up to 50M": the large side grows through the small size first.
    log(`loading ${LARGE.toLocaleString()} invocations into ${large.name}`);
    await loadTo(large, LARGE);
    const sizes = { small: await sizeOf(small), large: await sizeOf(large) };
    log(
      `sizes: small ${sizes.small.rows.toLocaleString()} (${sizes.small.size}), large ${sizes.large.rows.toLocaleString()} (${sizes.large.size})`,
    );

    const figures = newFigures();
    let consistent = alone.consistent;
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which side goes first, so neither always follows the other's cache.
      const order = round % 2 === 0 ? [small, large] : [large, small];
      const results: Record<string, Awaited<ReturnType<typeof measure>>> = {};
      for (const side of order) results[side.label] = await measure(side);
      const load = os.loadavg()[0] as number;
      for (const [i, figure] of figures.entries()) {
        figure.rounds.push({
          small: results.small?.values[i] as number,
          large: results.large?.values[i] as number,
          load,
        });
        figure.detail = { small: results.small?.details[i], large: results.large?.details[i] };
      }
      consistent &&= Boolean(results.small?.consistent && results.large?.consistent);
      log(
        `round ${round + 1}/${ROUNDS}: recording ${fmt(figures[0]?.rounds.at(-1)?.small ?? 0, 0)} vs ` +
          `${fmt(figures[0]?.rounds.at(-1)?.large ?? 0, 0)} calls/s; load ${fmt(load, 2)}`,
      );
    }
    const report = render({
      started,
      pgVersion: version[0]?.v ?? "?",
      loadAtStart,
      small,
      large,
      sizes,
      alone,
      figures,
      consistent,
    });
    console.log(`\n${report}`);
    writeResultsSection(HEADING, report);
    log("wrote bench/RESULTS.md");
  } finally {
    for (const side of [small, large]) {
      if (!side) continue;
      await side.client.end().catch(() => undefined);
      await side.handle.close().catch(() => undefined);
      if (process.env.BENCH_KEEP_DB === "1") log(`kept ${side.name}`);
      else await adminQuery(`drop database if exists ${side.name} with (force)`);
    }
  }
}

function render(r: {
  started: Date;
  pgVersion: string;
  loadAtStart: string;
  small: Side;
  large: Side;
  sizes: Record<"small" | "large", { rows: number; size: string; partitions: number }>;
  alone: { values: number[] };
  figures: Figure[];
  consistent: boolean;
}): string {
  const ratioRow = (f: Figure) => {
    const ratios = f.rounds.map((x) => x.large / x.small);
    const loads = f.rounds.map((x) => x.load);
    const med = (k: "small" | "large") => median(f.rounds.map((x) => x[k]));
    const digits = f.unit === "ms" ? 1 : 0;
    return (
      `| ${f.name} | ${fmt(med("small"), digits)} | ${fmt(med("large"), digits)} | ${f.unit} |` +
      ` **${fmt(median(ratios), 2)}** | ${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)} |` +
      ` ${fmt(Math.min(...loads), 1)}–${fmt(Math.max(...loads), 1)} |`
    );
  };
  const perRound = (f: Figure) =>
    f.rounds.map((x, i) => `r${i + 1} ${fmt(x.large / x.small, 2)} (load ${fmt(x.load, 1)})`).join(", ");
  const rec = r.figures[0] as Figure;
  const lines = [
    HEADING,
    "",
    `Run ${r.started.toISOString()} with \`npm run bench:growth\` (bench/analytics/growth.ts).`,
    "",
    `- Machine: ${machineSummary()}; PostgreSQL ${r.pgVersion} on the same machine (default config,`,
    `  shared_buffers ${sh("psql -h 127.0.0.1 -U postgres -Atc 'show shared_buffers' 2>/dev/null") || "?"}). The machine was shared with other work during the run:`,
    `  load average (1/5/15 min) ${r.loadAtStart} at the start, ${loadAverage()} at the end, and per round below.`,
    `- Two databases on that server, in one run: **${r.sizes.small.rows.toLocaleString()}** invocations (${r.sizes.small.size})`,
    `  and **${r.sizes.large.rows.toLocaleString()}** (${r.sizes.large.size}), each spread evenly over the last ${DAYS} days`,
    `  (the default retention) in day partitions (${r.sizes.small.partitions} / ${r.sizes.large.partitions} day partitions plus the default one),`,
    `  ${APPS} apps of one creator (skewed: the busiest app has ~7% of the calls), end users over a pool of ${USER_POOL.toLocaleString()},`,
    `  with the rollups the recorder keeps (one row per app and day, and per app, day and version, as compacted;`,
    `  9 calls in 10 name one of ${VERSIONS} versions, 1 in 10 none). Loaded with SQL generate_series,`,
    `  one statement per day: small in ${fmt(r.small.loadSeconds)} s, large in ${fmt(r.large.loadSeconds)} s.`,
    `- Per-app reads rotate over the busiest, median and smallest app: small ${r.small.sample.map((s) => s.invocations.toLocaleString()).join(" / ")},`,
    `  large ${r.large.sample.map((s) => s.invocations.toLocaleString()).join(" / ")} invocations.`,
    `- ${ROUNDS} rounds after both loads; each round measures both databases, alternating which goes first.`,
    `  A round on one database: recording for ${RECORD_SECONDS} s (${WORKERS} concurrent calls through the real recorder,`,
    "  `CallRecorder.record` → `pm_record_batch_v10`, into the median app), then each read: 3 warm-up calls and",
    `  ${READS_PER_ROUND} timed calls of the service function (median). Ratio = large / small within the round;`,
    "  the table gives the median ratio over rounds and its spread (min–max), and the 1-minute load average",
    "  at the end of the rounds (min–max). A flat figure has a ratio near 1 (for recording, ≥ 1 is as fast or faster).",
    "",
    "| Figure | Small (median) | Large (median) | Unit | Ratio large/small | Spread | Load avg |",
    "|---|---:|---:|---|---:|---|---|",
    ...r.figures.map(ratioRow),
    "",
    `Recording per round: ${perRound(rec)}. Last round's latency per call: small ${rec.detail.small}, large ${rec.detail.large}.`,
    `Every recorded call (each naming its version) was one invocation row and one count in the app's and the version's rollups, none failed: ${r.consistent ? "yes" : "NO"}.`,
    `Before the large load, the small database alone: recording ${fmt(r.alone.values[0] as number, 0)} calls/s,`,
    `getDashboard days=30 ${fmt(r.alone.values[2] as number)} ms (the machine without the large database's cache competition).`,
    "",
  ];
  return lines.join("\n");
}

// An idle pooled connection cut by `drop database ... with (force)` must not crash the run.
process.on("uncaughtException", (err) => console.error("[growth] ignored connection error:", err.message));

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
