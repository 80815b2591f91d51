/**
 * Gateway benchmark (issue 20; first written for issue 8): what a paid call through Promptmint
 * costs over calling the upstream directly, next to Portkey's open-source gateway as a
 * pass-through reference, measured in one run with the targets interleaved.
 *
 * Not a test. It starts, each in its own process: loopback OpenAI-compatible upstreams (instant,
 * one answering after BENCH_MODEL_MS, one after BENCH_SLOW_MS for the soak), Promptmint on a
 * scratch PostgreSQL database with a paid prompt app whose model goes to the upstream
 * (OPENAI_BASE_URL) and a funded consumer key, and `@portkey-ai/gateway` with
 * `x-portkey-custom-host` pointing at the same upstream. Then, each section followed by the money
 * check (reconcile() clean, charged invocations of the section == Promptmint's 2xx answers):
 *  1. Throughput and latency at each concurrency (BENCH_CONNECTIONS): BENCH_ROUNDS rounds; in each
 *     round every target (direct, Promptmint, Portkey, and "baseline" with BENCH_BASELINE_DIR) runs
 *     a closed loop for BENCH_SECONDS, the order rotated from round to round (bench/lib/load.ts).
 *     calls/s = completed 2xx / elapsed seconds (performance.now()), latency from per-request
 *     timers; the ratio Promptmint / Portkey is computed per round, then its median and spread.
 *     The added latency at c=1 is each round's p50 (p99) minus direct's p50 (p99) in that round.
 *  2. The same at c=1 with an upstream that answers after BENCH_MODEL_MS (200): the time
 *     Promptmint adds to a call whose model takes a while.
 *  3. 1, 2 and 4 Promptmint processes (BENCH_PROCESSES) on the one PostgreSQL database, on their
 *     own ports, the client's connections spread evenly over them (what a load balancer does),
 *     at BENCH_PROCESS_CONNECTIONS; the process counts interleaved per round.
 *  4. First call after start: BENCH_FIRST_CALL_STARTS fresh processes; each one's first paid call
 *     against its 100th (bench/lib/first-call.ts).
 *  5. A soak of BENCH_SOAK (5,000) concurrent calls held open by a BENCH_SLOW_MS upstream,
 *     sampling pg_stat_activity for connections active or idle in transaction meanwhile.
 * The load average, the CPU used by the measured processes (/proc/<pid>/stat) and the machine's busy
 * CPU are recorded with every figure. Prints the section and rewrites "## Gateway (issue 20)" in
 * bench/RESULTS.md.
 *
 * Env: BENCH_DATABASE_URL (admin URL, default postgres://postgres@127.0.0.1:5432/test),
 *      BENCH_SECONDS (10 per target per round), BENCH_ROUNDS (3), BENCH_CONNECTIONS (1,50,500),
 *      BENCH_WARMUP_SECONDS (3 per target), BENCH_MODEL_MS (200; 0 skips section 2),
 *      BENCH_PROCESSES (1,2,4; "" skips section 3), BENCH_PROCESS_CONNECTIONS (50),
 *      BENCH_FIRST_CALL_STARTS (5; 0 skips section 4), BENCH_SOAK (5000; 0 skips section 5),
 *      BENCH_SOAK_TIMEOUT_S (300), BENCH_SLOW_MS (2000), BENCH_LOG_LEVEL (Promptmint's LOG_LEVEL, warn),
 *      BENCH_ENV (extra env for Promptmint, e.g. "GATEWAY_ADMISSION_LIMIT=128"), BENCH_KEEP_DB=1,
 *      BENCH_NODE_ARGS (node flags for Promptmint; default those of `npm start`, "" for none),
 *      BENCH_PROFILE_DIR (write a --cpu-prof profile of the main Promptmint process there),
 *      BENCH_BASELINE_DIR (an earlier checkout with node_modules, run side by side as "baseline"),
 *      BENCH_STAGES=0 (skips section 1c, the stage timings),
 *      BENCH_PORT_BASE (4260; fifteen ports from there), BENCH_WRITE=0 (print only, leave RESULTS.md).
 */
import { type ChildProcess, execSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { sql } from "drizzle-orm";
import pg from "pg";
import { type Database, openDatabase, queryRows } from "../../apps/api/src/db/client.ts";
import { creditTopUp } from "../../apps/api/src/modules/billing/postings.ts";
import { reconcile } from "../../apps/api/src/modules/billing/reconcile.ts";
import { createCaller } from "../../apps/api/src/test/caller.ts";
import { createPromptApp } from "../../apps/api/src/test/live-app.ts";
import { type DurableFloor, measureDurableFloor } from "../lib/durable-floor.ts";
import { type FirstCallRun, measureFirstCalls } from "../lib/first-call.ts";
import {
  closedLoop,
  cpuSeconds,
  type LoadResult,
  median,
  quantile,
  type RequestSpec,
  spread,
} from "../lib/load.ts";
import { resultsFile, writeResultsSection } from "../lib/results.ts";
import { databaseUrl, queryOnce } from "../lib/scratch-database.ts";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const list = (value: string) =>
  value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LEVELS = list(process.env.BENCH_CONNECTIONS ?? "1,50,500");
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 200);
const PROCESSES = list(process.env.BENCH_PROCESSES ?? "1,2,4");
const PROCESS_CONNECTIONS = Number(process.env.BENCH_PROCESS_CONNECTIONS ?? 50);
const FIRST_CALL_STARTS = Number(process.env.BENCH_FIRST_CALL_STARTS ?? 5);
const FIRST_CALL_CALLS = 100;
/** The extra call of each fresh process comes after this long without calls. */
const FIRST_CALL_IDLE_MS = 6_000;
const SOAK = Number(process.env.BENCH_SOAK ?? 5000);
/** How long one soak call may take before autocannon counts it as an error. */
const SOAK_TIMEOUT_S = Number(process.env.BENCH_SOAK_TIMEOUT_S ?? 300);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 2000);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? "warn";
const EXTRA_ENV = Object.fromEntries(
  (process.env.BENCH_ENV ?? "")
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => pair.split("=", 2) as [string, string]),
);
/** Writes a CPU profile of the Promptmint process here (summarise with bench/gateway/profile.ts). */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
/** Section 1c: where a paid call's time goes, from a process with SERVER_TIMING on. */
const STAGES = process.env.BENCH_STAGES !== "0";
/**
 * Node flags of every Promptmint process: those `npm start` gives it (package.json), unless
 * BENCH_NODE_ARGS (space-separated; "" for none) says otherwise, e.g. to try V8 heap flags.
 */
const START_FLAGS =
  /node((?: --\S+)*) apps\/api\/src\/main\.ts/.exec(
    JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).scripts.start,
  )?.[1] ?? "";
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? START_FLAGS).split(/\s+/).filter(Boolean);
/** An earlier checkout (with node_modules) run side by side as target "baseline": before/after under one load. */
const BASELINE_DIR = process.env.BENCH_BASELINE_DIR;
/** Fifteen consecutive ports from here (BENCH_PORT_BASE), so two runs on one machine do not collide. */
const PORT_BASE = Number(process.env.BENCH_PORT_BASE ?? 4260);
const PORT = {
  upstream: PORT_BASE,
  modelUpstream: PORT_BASE + 1,
  soakUpstream: PORT_BASE + 2,
  portkey: PORT_BASE + 3,
  promptmint: PORT_BASE + 4,
  promptmintModel: PORT_BASE + 5,
  promptmintSoak: PORT_BASE + 6,
  baseline: PORT_BASE + 7,
  baselineModel: PORT_BASE + 8,
  baselineSoak: PORT_BASE + 9,
  /** Extra Promptmint processes of section 3 (the first process is `promptmint`). */
  extra: [PORT_BASE + 10, PORT_BASE + 11, PORT_BASE + 12],
  fresh: PORT_BASE + 13,
  /** The process of section 1c, with SERVER_TIMING on. */
  timed: PORT_BASE + 14,
};
const PRICE_CENTS = 1;

const dbName = `pm_gwbench_${process.pid}_${Date.now()}`;
const benchUrl = databaseUrl(adminUrl, dbName);

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "—");
const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "—");
const log = (msg: string) => console.log(`[bench] ${msg}`);
const sh = (cmd: string) => {
  try {
    return execSync(cmd, { cwd: root, stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  } catch {
    return "?";
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadNow = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" / ");

type Target = "direct" | "promptmint" | "baseline" | "portkey";
const TARGETS: Target[] = BASELINE_DIR
  ? ["direct", "promptmint", "baseline", "portkey"]
  : ["direct", "promptmint", "portkey"];
const isPromptmint = (t: Target) => t === "promptmint" || t === "baseline";
/** Round r measures the targets in this order: the list rotated by r, so no target is always first. */
const rotated = <T>(xs: T[], r: number) => xs.map((_, i) => xs[(i + r) % xs.length] as T);

// ---------------------------------------------------------------- processes

const children: ChildProcess[] = [];

function start(name: string, args: string[], env: Record<string, string> = {}, cwd = root): ChildProcess {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  child.on("exit", (code, signal) => {
    if (code && code !== 0) console.error(`[bench] ${name} exited ${code} ${signal ?? ""}\n${stderr}`);
  });
  children.push(child);
  return child;
}

/** SIGTERM, then wait for the exit (the server closes its leases on the way out). */
async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  await Promise.race([exited, sleep(30_000)]);
}

async function waitForPort(port: number, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await sleep(25);
  }
  throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
}

/** RSS of a process and all its descendants, in MB. */
function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      const kids = readFileSync(`/proc/${pids[i]}/task/${pids[i]}/children`, "utf8").trim();
      if (kids) pids.push(...kids.split(/\s+/).map(Number));
    } catch {}
  }
  let kb = 0;
  for (const p of pids) {
    try {
      const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"));
      kb += Number(match?.[1] ?? 0);
    } catch {}
  }
  return kb / 1024;
}

/** Peak of the summed RSS of `pids` until the returned function is called. */
function peakRss(pids: (number | undefined)[]) {
  const now = () => pids.reduce<number>((s, p) => s + rssMb(p), 0);
  let peak = now();
  const timer = setInterval(() => {
    peak = Math.max(peak, now());
  }, 100);
  return () => {
    clearInterval(timer);
    return Math.max(peak, now());
  };
}

// ---------------------------------------------------------------- requests

const messages = [{ role: "user", content: "Say hello in five words." }];

function specFor(
  target: Target,
  options: { apiKey: string; slug: string; upstreamPort: number; port?: number },
): RequestSpec {
  const json = { "content-type": "application/json" };
  if (target === "direct")
    return {
      url: `http://127.0.0.1:${options.upstreamPort}/v1/chat/completions`,
      headers: { ...json, authorization: "Bearer sk-bench" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages }),
    };
  if (target === "portkey")
    return {
      url: `http://127.0.0.1:${PORT.portkey}/v1/chat/completions`,
      headers: {
        ...json,
        authorization: "Bearer sk-bench",
        "x-portkey-provider": "openai",
        "x-portkey-custom-host": `http://127.0.0.1:${options.upstreamPort}/v1`,
      },
      body: JSON.stringify({ model: "gpt-4o-mini", messages }),
    };
  return {
    url: `http://127.0.0.1:${options.port}/api/v1/chat/completions`,
    headers: { ...json, authorization: `Bearer ${options.apiKey}` },
    body: JSON.stringify({ model: options.slug, messages }),
  };
}

interface Measured extends LoadResult {
  rssMb: number;
  /** Cores used by the PostgreSQL backends connected to the bench database during the run. */
  pgCores: number;
}

/** Backend pids of the bench database (PostgreSQL runs on this machine, so /proc has them). */
let pgProbe: pg.Client | undefined;
async function pgBackends(): Promise<number[]> {
  if (!pgProbe) return [];
  const { rows } = await pgProbe.query<{ pid: number }>(
    "select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()",
    [dbName],
  );
  return rows.map((r) => r.pid);
}

/** One closed-loop run, with the peak RSS of the measured processes. */
async function measure(
  specs: RequestSpec[],
  options: { connections: number; seconds: number; pids: (number | undefined)[]; stages?: boolean },
): Promise<Measured> {
  const stopRss = peakRss(options.pids);
  const before = new Map((await pgBackends()).map((pid) => [pid, cpuSeconds(pid)]));
  const r = await closedLoop(specs, options);
  const rss = stopRss();
  // Backends opened during the run count from zero; those closed during it are missed.
  const pgSeconds = (await pgBackends()).reduce<number>(
    (s, pid) => s + cpuSeconds(pid) - (before.get(pid) ?? 0),
    0,
  );
  return { ...r, rssMb: rss, pgCores: pgSeconds / r.elapsed };
}

interface CannonResult {
  ok: number;
  errors: number;
  non2xx: number;
  rssMb: number;
  seconds: number;
  p50: number;
  p99: number;
  statuses: string;
}

/** The fields of autocannon's result the soak reads (the package ships no types). */
interface AutocannonResult {
  latency: { p50: number; p99: number };
  "2xx": number;
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  statusCodeStats?: Record<string, { count: number }>;
}

/** The soak: `amount` requests on as many connections at once (one each), with autocannon. */
function cannon(
  spec: RequestSpec,
  options: { connections: number; amount: number; timeoutSeconds: number; pid?: number },
): Promise<CannonResult> {
  const stopRss = peakRss([options.pid]);
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: spec.url,
        method: "POST",
        headers: spec.headers,
        body: spec.body,
        connections: options.connections,
        amount: options.amount,
        timeout: options.timeoutSeconds,
      },
      (err: Error | null, r: AutocannonResult) => {
        const rss = stopRss();
        if (err) return reject(err);
        resolve({
          p50: r.latency.p50,
          p99: r.latency.p99,
          ok: r["2xx"],
          errors: r.errors + r.timeouts,
          non2xx: r.non2xx,
          rssMb: rss,
          seconds: r.duration,
          statuses: Object.entries(r.statusCodeStats ?? {})
            .filter(([code]) => !code.startsWith("2"))
            .map(([code, { count }]) => `${code}×${count}`)
            .join(" "),
        });
      },
    );
  });
}

// ---------------------------------------------------------------- setup

const adminQuery = (text: string) => queryOnce(adminUrl, text);

function promptmintEnv(port: number, upstreamPort: number, dataDir: string): Record<string, string> {
  return {
    NODE_ENV: "development",
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: benchUrl,
    SECRET_KEY: "bench-secret-key-that-is-long-enough-0123456789",
    OPENAI_API_KEY: "sk-bench",
    OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
    GATEWAY_RATE_LIMIT_PER_MINUTE: "1000000",
    GATEWAY_SPEND_PER_MINUTE_CENTS: "1000000000",
    LLM_TIMEOUT_SECONDS: "60",
    LOG_LEVEL,
    ...EXTRA_ENV,
  };
}

async function setUpApp(baseUrl: string): Promise<{ slug: string; apiKey: string; consumerEmail: string }> {
  const creator = await createCaller(baseUrl, "Bench Creator");
  // 1¢ is below the starter model's floor (issue 32): priced once it runs on gpt-4o-mini.
  const app = await createPromptApp(
    creator,
    { name: "Bench greeter", interaction_mode: "completion", visibility: "public", price_cents: PRICE_CENTS },
    { model: "gpt-4o-mini" },
  );
  const live = await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, {
    body: { status: "live" },
  });
  if (live.status !== 200) throw new Error(`could not publish the bench app: ${live.status}`);
  const consumer = await createCaller(baseUrl, "Bench Consumer");
  const key = await consumer.api("POST", "/api/keys/", { body: { name: "bench" } });
  return { slug: app.slug, apiKey: key.body.key, consumerEmail: consumer.email };
}

// ---------------------------------------------------------------- money

/** What the money check counts once the leases have closed. */
interface MoneyCounts {
  /** Calls posted by settle transactions (the sum of their holds' `calls`). */
  posted: number;
  settles: number;
  /** Cents the settle transactions moved out of held accounts. */
  posted_cents: number;
  /** Successful invocations charged and naming their hold. */
  charged: number;
  open_holds: number;
  /** Cents spent from holds (`settled_micros` / 10,000). */
  spent_cents: number;
  charged_cents: number;
}

async function moneyCounts(db: Database): Promise<MoneyCounts> {
  const [row] = await queryRows<MoneyCounts>(
    db,
    sql`select (select coalesce(sum(h.calls), 0) from holds h join ledger_transactions t
                    on t.kind = 'settle' and t.reference = h.id::text)::int as posted,
                 (select count(*) from ledger_transactions where kind = 'settle')::int as settles,
                 (select coalesce(-sum(e.amount_micros), 0) / 10000 from ledger_transactions t
                    join ledger_entries e on e.transaction_id = t.id
                    join ledger_accounts a on a.id = e.account_id and a.kind = 'held'
                  where t.kind = 'settle')::int as posted_cents,
                 (select count(*) from invocations where status = 'success' and charged_cents > 0
                    and hold_id is not null)::int as charged,
                 (select count(*) from holds where status = 'held')::int as open_holds,
                 (select coalesce(sum(settled_micros), 0) / 10000 from holds)::int as spent_cents,
                 (select coalesce(sum(charged_cents), 0) from invocations)::int as charged_cents`,
  );
  if (!row) throw new Error("money counts: no row");
  return row;
}

interface MoneyLine {
  section: string;
  /** Promptmint's (and the baseline's) 2xx answers in the section. */
  answered: number;
  /** Calls the client gave up on (timeouts, resets): the server may still have charged them. */
  gaveUp: number;
  /** Charged invocations added during the section. */
  charged: number;
  reconcileOk: boolean;
  transactions: number;
  counts: MoneyCounts;
  ok: boolean;
}

/**
 * After a section: wait for the leases to close (they idle out 2 s after their last call, or
 * close when their process stops), then reconcile() and compare the charged invocations the
 * section added with the 2xx answers its client read.
 */
function moneyChecker(db: Database) {
  let before: MoneyCounts = {
    posted: 0,
    settles: 0,
    posted_cents: 0,
    charged: 0,
    open_holds: 0,
    spent_cents: 0,
    charged_cents: 0,
  };
  const lines: MoneyLine[] = [];
  const check = async (section: string, answered: number, gaveUp: number): Promise<MoneyLine> => {
    let counts = await moneyCounts(db);
    for (let waited = 0; counts.open_holds !== 0 && waited < 20_000; waited += 250) {
      await sleep(250);
      counts = await moneyCounts(db);
    }
    const report = await reconcile(db);
    const charged = counts.charged - before.charged;
    const ok =
      report.ok &&
      counts.open_holds === 0 &&
      counts.posted === counts.charged &&
      counts.posted_cents === counts.spent_cents &&
      counts.spent_cents === counts.charged_cents &&
      charged >= answered &&
      charged <= answered + gaveUp;
    before = counts;
    const line = {
      section,
      answered,
      gaveUp,
      charged,
      reconcileOk: report.ok,
      transactions: report.transactions,
      counts,
      ok,
    };
    lines.push(line);
    log(
      `money after ${section}: reconcile ${report.ok ? "clean" : "NOT CLEAN"}, charged ${charged} for ${answered} 2xx ` +
        `(+ ${gaveUp} given up), open holds ${counts.open_holds}, totals posted ${counts.posted} = charged ${counts.charged} — ${ok ? "OK" : "MISMATCH"}`,
    );
    return line;
  };
  return { check, lines };
}

// ---------------------------------------------------------------- main

interface RoundResult {
  round: number;
  target: Target;
  r: Measured;
}

interface LevelResult {
  connections: number;
  runs: RoundResult[];
}

interface ProcessRun {
  processes: number;
  round: number;
  r: Measured;
}

interface SoakResult {
  target: Target;
  calls: number;
  ok: number;
  errors: number;
  non2xx: number;
  seconds: number;
  p50: number;
  p99: number;
  rssMb: number;
  maxActive: number;
  maxIdleInTransaction: number;
  maxConnections: number;
  /** Seconds: the oldest open transaction seen; below the upstream delay, none spanned the wait. */
  oldestTransaction: number;
  /** The most calls waiting at the slow upstream at once. */
  upstreamMaxInFlight: number;
}

async function main() {
  const startedAt = new Date();
  const loadAtStart = loadNow();
  log(`scratch database ${dbName}; load average ${loadAtStart}`);
  await adminQuery(`create database ${dbName}`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pm-gwbench-"));

  const promptmintArgs = (profile = false) => [
    ...NODE_ARGS,
    ...(profile && PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : []),
    "apps/api/src/main.ts",
  ];
  const startPromptmint = (name: string, port: number, upstreamPort: number, cwd = root, profile = false) =>
    start(name, promptmintArgs(profile), promptmintEnv(port, upstreamPort, dataDir), cwd);

  try {
    const upstream = start("upstream", ["bench/gateway/upstream.ts", String(PORT.upstream), "0"]);
    if (MODEL_MS > 0)
      start("model upstream", ["bench/gateway/upstream.ts", String(PORT.modelUpstream), String(MODEL_MS)]);
    if (SOAK > 0)
      start("soak upstream", ["bench/gateway/upstream.ts", String(PORT.soakUpstream), String(SLOW_MS)]);
    const portkey = start("portkey", [
      "node_modules/@portkey-ai/gateway/build/start-server.js",
      `--port=${PORT.portkey}`,
      "--headless",
    ]);
    const promptmint = startPromptmint("promptmint", PORT.promptmint, PORT.upstream, root, true);
    const baseline = BASELINE_DIR
      ? startPromptmint("baseline", PORT.baseline, PORT.upstream, BASELINE_DIR)
      : undefined;
    for (const port of [PORT.upstream, PORT.portkey, PORT.promptmint]) await waitForPort(port);
    if (MODEL_MS > 0) await waitForPort(PORT.modelUpstream);
    if (SOAK > 0) await waitForPort(PORT.soakUpstream);
    if (baseline) await waitForPort(PORT.baseline);
    log("upstreams, Portkey and Promptmint are listening");

    const { slug, apiKey, consumerEmail } = await setUpApp(`http://127.0.0.1:${PORT.promptmint}`);
    const handle = await openDatabase({ databaseUrl: benchUrl, pgliteDir: "" });
    const [{ id: consumerId } = { id: "" }] = await queryRows<{ id: string }>(
      handle.db,
      sql`select id from users where email = ${consumerEmail}`,
    );
    await creditTopUp(handle.db, {
      userId: consumerId,
      amountCents: 100_000_000,
      reference: `bench-${dbName}`,
      description: "Benchmark funds",
    });
    const money = moneyChecker(handle.db);
    pgProbe = new pg.Client({ connectionString: adminUrl });
    await pgProbe.connect();

    const targetPort: Record<Target, number> = {
      direct: PORT.upstream,
      promptmint: PORT.promptmint,
      baseline: PORT.baseline,
      portkey: PORT.portkey,
    };
    const specs = Object.fromEntries(
      TARGETS.map((t) => [t, specFor(t, { apiKey, slug, upstreamPort: PORT.upstream, port: targetPort[t] })]),
    ) as Record<Target, RequestSpec>;
    const pids: Record<Target, number | undefined> = {
      direct: upstream.pid,
      promptmint: promptmint.pid,
      baseline: baseline?.pid,
      portkey: portkey.pid,
    };

    /** Runs of one section: Promptmint 2xx answers and given-up calls, for its money line. */
    let answered = 0;
    let gaveUp = 0;
    const count = (target: Target, r: { ok: number; errors: number }) => {
      if (!isPromptmint(target)) return;
      answered += r.ok;
      gaveUp += r.errors;
    };
    const sectionDone = async (name: string) => {
      await money.check(name, answered, gaveUp);
      answered = 0;
      gaveUp = 0;
    };

    const probeAndWarm = async (targetSpecs: Partial<Record<Target, RequestSpec>>, connections: number) => {
      for (const [target, spec] of Object.entries(targetSpecs) as [Target, RequestSpec][]) {
        const probe = await fetch(spec.url, { method: "POST", headers: spec.headers, body: spec.body });
        const text = await probe.text();
        if (probe.status !== 200) throw new Error(`${target} answered ${probe.status}: ${text}`);
        count(target, { ok: 1, errors: 0 });
        if (WARMUP_SECONDS > 0) {
          const warm = await closedLoop([spec], { connections, seconds: WARMUP_SECONDS });
          count(target, warm);
        }
      }
    };

    // 1. Throughput and latency at each concurrency, targets interleaved round by round.
    await probeAndWarm(specs, 50);
    log(`each target answers and is warm; load average ${loadNow()}`);
    const levels: LevelResult[] = [];
    for (const connections of LEVELS) {
      const level: LevelResult = { connections, runs: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const target of rotated(TARGETS, round)) {
          const r = await measure([specs[target]], { connections, seconds: SECONDS, pids: [pids[target]] });
          count(target, r);
          level.runs.push({ round, target, r });
          log(
            `c=${connections} round ${round + 1} ${target}: ${fmt(r.rps, 1)} calls/s (${r.ok} in ${fmt(r.elapsed, 3)} s), ` +
              `p50 ${fmt(r.p50, 3)} ms, p99 ${fmt(r.p99, 3)} ms, ${r.errors} errors, ${r.non2xx} non-2xx ${r.statuses}, ` +
              `${fmt(r.targetCores, 2)} cores (${fmt(r.cpuMsPerCall, 3)} ms/call), PostgreSQL ${fmt(r.pgCores, 2)} cores, machine ${fmt(r.machineCores, 2)} cores, load ${fmt(r.load1, 2)}`,
          );
        }
      }
      levels.push(level);
    }
    await sectionDone(`throughput (c=${LEVELS.join(", ")})`);

    // 1b. The durable-write floor on this database, next to the c=1 figures (bench/lib/durable-floor.ts).
    const floor = await measureDurableFloor({
      connectionString: benchUrl,
      seconds: SECONDS,
      idleMs: MODEL_MS > 0 ? MODEL_MS : 200,
      idleSamples: 40,
      gapMs: 1,
    });
    log(
      `durable-write floor: select 1 p50 ${fmt(floor.roundTrip.p50, 3)} ms; one-row insert p50 ${fmt(floor.durableWrite.p50, 3)} / p99 ` +
        `${fmt(floor.durableWrite.p99, 3)} ms; after ${floor.gapMs} ms busy p50 ${fmt(floor.durableWriteAfterGap.p50, 3)} ms; ` +
        `after ${floor.idleMs} ms idle p50 ${fmt(floor.durableWriteAfterIdle.p50, 3)} ms`,
    );

    // 1c. Where a paid call's time goes at c=1: a process of its own with SERVER_TIMING on (its hooks
    // and header cost time, so the measured processes above run without them), stage by stage.
    const stageRuns: Measured[] = [];
    if (STAGES) {
      const timed = start("promptmint (stage timings)", promptmintArgs(), {
        ...promptmintEnv(PORT.timed, PORT.upstream, dataDir),
        SERVER_TIMING: "true",
      });
      await waitForPort(PORT.timed);
      const timedSpec = specFor("promptmint", {
        apiKey,
        slug,
        upstreamPort: PORT.upstream,
        port: PORT.timed,
      });
      await probeAndWarm({ promptmint: timedSpec }, 50);
      for (let round = 0; round < ROUNDS; round++) {
        const r = await measure([timedSpec], {
          connections: 1,
          seconds: SECONDS,
          pids: [timed.pid],
          stages: true,
        });
        count("promptmint", r);
        stageRuns.push(r);
        log(
          `stages, c=1 round ${round + 1}: ${r.ok} calls, p50 ${fmt(r.p50, 3)} ms; ` +
            [...(r.stages ?? [])].map(([name, xs]) => `${name} ${fmt(quantile(xs, 0.5), 3)}`).join(", "),
        );
      }
      await stop(timed);
      await sectionDone("stage timings (c=1)");
    }

    // 2. c=1 with an upstream that takes MODEL_MS: the time Promptmint adds to a slow model's call.
    const modelLevel: LevelResult = { connections: 1, runs: [] };
    if (MODEL_MS > 0) {
      const pmModel = startPromptmint(
        "promptmint (model upstream)",
        PORT.promptmintModel,
        PORT.modelUpstream,
      );
      const blModel = BASELINE_DIR
        ? startPromptmint("baseline (model upstream)", PORT.baselineModel, PORT.modelUpstream, BASELINE_DIR)
        : undefined;
      await waitForPort(PORT.promptmintModel);
      if (blModel) await waitForPort(PORT.baselineModel);
      const modelPort: Record<Target, number> = {
        direct: PORT.modelUpstream,
        promptmint: PORT.promptmintModel,
        baseline: PORT.baselineModel,
        portkey: PORT.portkey,
      };
      const modelSpecs = Object.fromEntries(
        TARGETS.map((t) => [
          t,
          specFor(t, { apiKey, slug, upstreamPort: PORT.modelUpstream, port: modelPort[t] }),
        ]),
      ) as Record<Target, RequestSpec>;
      const modelPids = { ...pids, direct: undefined, promptmint: pmModel.pid, baseline: blModel?.pid };
      // As many calls as the instant targets' warm-up gets at c=50: the model process starts fresh here.
      await probeAndWarm(modelSpecs, 200);
      for (let round = 0; round < ROUNDS; round++) {
        for (const target of rotated(TARGETS, round)) {
          const r = await measure([modelSpecs[target]], {
            connections: 1,
            seconds: SECONDS,
            pids: [modelPids[target]],
          });
          count(target, r);
          modelLevel.runs.push({ round, target, r });
          log(
            `model ${MODEL_MS} ms, c=1 round ${round + 1} ${target}: ${r.ok} calls, p50 ${fmt(r.p50, 3)} ms, p99 ${fmt(r.p99, 3)} ms, ` +
              `${r.errors + r.non2xx} failures, load ${fmt(r.load1, 2)}`,
          );
        }
      }
      await stop(pmModel);
      await stop(blModel);
      await sectionDone(`c=1 with a ${MODEL_MS} ms model`);
    }

    // 3. N Promptmint processes on one database, the client's connections spread over them.
    const processRuns: ProcessRun[] = [];
    const maxProcesses = Math.max(0, ...PROCESSES);
    if (maxProcesses > 0) {
      const extras = PORT.extra
        .slice(0, maxProcesses - 1)
        .map((port, i) => ({ port, child: startPromptmint(`promptmint #${i + 2}`, port, PORT.upstream) }));
      for (const e of extras) await waitForPort(e.port);
      const all = [{ port: PORT.promptmint, child: promptmint }, ...extras];
      const procSpecs = all.map((p) =>
        specFor("promptmint", { apiKey, slug, upstreamPort: PORT.upstream, port: p.port }),
      );
      for (const spec of procSpecs.slice(1)) {
        const warm = await closedLoop([spec], { connections: 20, seconds: WARMUP_SECONDS || 1 });
        count("promptmint", warm);
      }
      for (let round = 0; round < ROUNDS; round++) {
        for (const n of rotated(PROCESSES, round)) {
          const r = await measure(procSpecs.slice(0, n), {
            connections: PROCESS_CONNECTIONS,
            seconds: SECONDS,
            pids: all.slice(0, n).map((p) => p.child.pid),
          });
          count("promptmint", r);
          processRuns.push({ processes: n, round, r });
          log(
            `${n} process(es), c=${PROCESS_CONNECTIONS} round ${round + 1}: ${fmt(r.rps, 1)} calls/s, p50 ${fmt(r.p50, 3)} ms, ` +
              `p99 ${fmt(r.p99, 3)} ms, ${r.errors} errors, ${r.non2xx} non-2xx ${r.statuses}, Promptmint ${fmt(r.targetCores, 2)} cores, PostgreSQL ${fmt(r.pgCores, 2)} cores, ` +
              `machine ${fmt(r.machineCores, 2)} cores, load ${fmt(r.load1, 2)}`,
          );
        }
      }
      for (const e of extras) await stop(e.child);
      await sectionDone(`${PROCESSES.join(", ")} processes (c=${PROCESS_CONNECTIONS})`);
    }

    // 4. First call after start: fresh processes, the first paid call against the 100th.
    let firstCalls: FirstCallRun[] = [];
    if (FIRST_CALL_STARTS > 0) {
      firstCalls = await measureFirstCalls({
        starts: FIRST_CALL_STARTS,
        calls: FIRST_CALL_CALLS,
        spec: specFor("promptmint", { apiKey, slug, upstreamPort: PORT.upstream, port: PORT.fresh }),
        // A lease's idle time (2 s) and the connections' keep-alive (Node's server 5 s, undici 4 s)
        // past; the lookup caches keep their rows (decision 040).
        idleMs: FIRST_CALL_IDLE_MS,
        launch: async () => {
          const child = startPromptmint("promptmint (fresh)", PORT.fresh, PORT.upstream);
          await waitForPort(PORT.fresh);
          return { stop: () => stop(child) };
        },
      });
      for (const run of firstCalls) {
        count("promptmint", { ok: run.ok, errors: 0 });
        log(
          `fresh process: listening after ${fmt(run.startMs, 0)} ms; first call ${fmt(run.firstMs, 3)} ms, ` +
            `second ${fmt(run.secondMs, 3)} ms, ${FIRST_CALL_CALLS}th ${fmt(run.lastMs, 3)} ms, median of 2..${FIRST_CALL_CALLS} ` +
            `${fmt(run.steadyMedianMs, 3)} ms; calls 1–10: ${run.firstTenMs.map((ms) => fmt(ms, 1)).join(" ")} ms; ` +
            `after ${FIRST_CALL_IDLE_MS / 1000} s idle ${fmt(run.afterIdleMs, 3)} ms` +
            `${run.failures.length ? `; non-2xx ${run.failures.join(" ")}` : ""}`,
        );
      }
      await sectionDone(`first call after start (${FIRST_CALL_STARTS} starts)`);
    }

    // 5. Soak: SOAK concurrent calls held open by a slow upstream.
    const soaks: SoakResult[] = [];
    if (SOAK > 0) {
      const promptmintSoak = startPromptmint("promptmint (soak)", PORT.promptmintSoak, PORT.soakUpstream);
      const baselineSoak = BASELINE_DIR
        ? startPromptmint("baseline (soak)", PORT.baselineSoak, PORT.soakUpstream, BASELINE_DIR)
        : undefined;
      await waitForPort(PORT.promptmintSoak);
      if (baselineSoak) await waitForPort(PORT.baselineSoak);
      const sampler = new pg.Client({ connectionString: adminUrl });
      await sampler.connect();
      const soakPort: Record<Target, number> = {
        direct: PORT.soakUpstream,
        promptmint: PORT.promptmintSoak,
        baseline: PORT.baselineSoak,
        portkey: PORT.portkey,
      };
      for (const target of TARGETS.filter((t) => t !== "direct")) {
        const spec = specFor(target, {
          apiKey,
          slug,
          upstreamPort: PORT.soakUpstream,
          port: soakPort[target],
        });
        let maxActive = 0;
        let maxIdleInTransaction = 0;
        let maxConnections = 0;
        let oldestTransaction = 0;
        let sampling = true;
        const sampleLoop = (async () => {
          while (sampling) {
            const { rows } = await sampler.query<{ state: string | null; n: number; oldest: number }>(
              `select state, count(*)::int as n,
                      coalesce(max(extract(epoch from now() - xact_start)), 0)::float8 as oldest
                 from pg_stat_activity where datname = $1 group by state`,
              [dbName],
            );
            oldestTransaction = Math.max(oldestTransaction, ...rows.map((r) => r.oldest));
            const n = (state: string) => rows.find((r) => r.state === state)?.n ?? 0;
            maxActive = Math.max(maxActive, n("active"));
            maxIdleInTransaction = Math.max(maxIdleInTransaction, n("idle in transaction"));
            maxConnections = Math.max(
              maxConnections,
              rows.reduce((sum, r) => sum + r.n, 0),
            );
            await sleep(50);
          }
        })();
        await fetch(`http://127.0.0.1:${PORT.soakUpstream}/stats?reset`);
        const r = await cannon(spec, {
          connections: SOAK,
          amount: SOAK,
          timeoutSeconds: SOAK_TIMEOUT_S,
          pid: {
            promptmint: promptmintSoak.pid,
            baseline: baselineSoak?.pid,
            portkey: portkey.pid,
            direct: 0,
          }[target],
        });
        sampling = false;
        await sampleLoop;
        const { maxInFlight } = (await (
          await fetch(`http://127.0.0.1:${PORT.soakUpstream}/stats`)
        ).json()) as {
          maxInFlight: number;
        };
        count(target, r);
        soaks.push({
          target,
          calls: SOAK,
          ok: r.ok,
          errors: r.errors,
          non2xx: r.non2xx,
          seconds: r.seconds,
          p50: r.p50,
          p99: r.p99,
          rssMb: r.rssMb,
          maxActive,
          maxIdleInTransaction,
          maxConnections,
          oldestTransaction,
          upstreamMaxInFlight: maxInFlight,
        });
        log(
          `soak ${target}: ${r.ok}/${SOAK} ok, ${r.errors} errors, ${r.non2xx} non-2xx ${r.statuses} in ${fmt(r.seconds)} s, ` +
            `p50 ${r.p50} ms, p99 ${r.p99} ms, RSS ${fmt(r.rssMb, 0)} MB; pg: max active ${maxActive}, ` +
            `max idle in transaction ${maxIdleInTransaction}, max connections ${maxConnections}, ` +
            `oldest transaction ${fmt(oldestTransaction, 3)} s; at most ${maxInFlight} calls waiting upstream at once`,
        );
      }
      await sampler.end();
      await stop(promptmintSoak);
      await stop(baselineSoak);
      await sectionDone(`soak (${SOAK.toLocaleString("en-US")} calls)`);
    }

    const report = await reconcile(handle.db);
    await handle.close();
    await pgProbe.end();
    pgProbe = undefined;
    const pgVersion = sh(`psql "${adminUrl}" -Atc "select version()"`).split(" on ")[0] ?? "?";
    const section = render({
      startedAt,
      loadAtStart,
      levels,
      modelLevel,
      stageRuns,
      processRuns,
      firstCalls,
      floor,
      soaks,
      money: money.lines,
      ledger: report,
      pgVersion,
    });
    console.log(`\n${section}`);
    writeResults(section);
    if (!money.lines.every((l) => l.ok)) process.exitCode = 1;
  } finally {
    await Promise.all(children.map((child) => stop(child)));
    if (!process.env.BENCH_KEEP_DB)
      await adminQuery(`drop database if exists ${dbName} with (force)`).catch((err) =>
        console.error(`[bench] could not drop ${dbName}: ${err.message}`),
      );
  }
}

// ---------------------------------------------------------------- report

/** Per round: Promptmint's figure over Portkey's (or any two targets'), in the same round. */
function perRound(runs: RoundResult[], f: (byTarget: Partial<Record<Target, Measured>>) => number): number[] {
  const rounds = [...new Set(runs.map((x) => x.round))].sort((a, b) => a - b);
  return rounds.map((round) => {
    const byT: Partial<Record<Target, Measured>> = {};
    for (const x of runs) if (x.round === round) byT[x.target] = x.r;
    return f(byT);
  });
}

const added = (q: "p50" | "p99", t: Target) => (m: Partial<Record<Target, Measured>>) =>
  (m[t]?.[q] ?? Number.NaN) - (m.direct?.[q] ?? Number.NaN);

function range(xs: number[], digits = 2): string {
  const finite = xs.filter(Number.isFinite);
  if (!finite.length) return "—";
  const lo = Math.min(...finite);
  const hi = Math.max(...finite);
  return lo === hi ? lo.toFixed(digits) : `${lo.toFixed(digits)}–${hi.toFixed(digits)}`;
}

/** What each stage of lib/stage-timings.ts covers on the paid chat call. */
const STAGE_MEANING: Record<string, string> = {
  parse: "the body read and its JSON parsed",
  validate: "the request's schema",
  auth: "the API key, rate limits, admission (the route's hooks)",
  app: "the app `model` names, and whether the caller may call it",
  prepare: "the prompt version, messages rendered, the input's bound and worst case",
  pay: "payment: plan, wallet lease, key's spend limit",
  model: "the upstream call (instant here)",
  record: "the invocation and its charge, durable",
  respond: "the answer built and serialised",
  total: "first byte of the request to the answer's headers",
};

function render(r: {
  startedAt: Date;
  loadAtStart: string;
  levels: LevelResult[];
  modelLevel: LevelResult;
  stageRuns: Measured[];
  processRuns: ProcessRun[];
  firstCalls: FirstCallRun[];
  floor: DurableFloor;
  soaks: SoakResult[];
  money: MoneyLine[];
  ledger: Awaited<ReturnType<typeof reconcile>>;
  pgVersion: string;
}): string {
  const pass = (ok: boolean) => (ok ? "PASS" : "FAIL");
  const mem = Math.round(os.totalmem() / 1024 ** 3);
  const commit =
    sh("git rev-parse --short HEAD") + (sh("git status --porcelain -- apps") ? " (+ uncommitted)" : "");
  const lines: string[] = [
    "## Gateway (issue 20)",
    "",
    `Run ${r.startedAt.toISOString()} with \`npm run bench:gateway\` (bench/gateway/run.ts) at commit ${commit}` +
      `${BASELINE_DIR ? `; "baseline" is the checkout in ${BASELINE_DIR} (commit ${sh(`git -C "${BASELINE_DIR}" rev-parse --short HEAD`)}), run side by side` : ""}.`,
    "",
    `- Machine: ${os.cpus().length} CPU cores (${os.cpus()[0]?.model ?? "?"}), ${mem} GB RAM; ${r.pgVersion} on the same`,
    "  machine (default config, synchronous_commit on). Upstream, Promptmint, Portkey, PostgreSQL and the",
    "  load client share these cores, with whatever else runs on the machine.",
    `- Node ${process.version}${NODE_ARGS.length ? ` (${NODE_ARGS.join(" ")})` : ""}; Promptmint on PostgreSQL with LOG_LEVEL=${LOG_LEVEL}` +
      `${
        Object.keys(EXTRA_ENV).length
          ? ` and ${Object.entries(EXTRA_ENV)
              .map(([k, v]) => `${k}=${v}`)
              .join(" ")}`
          : ""
      };` +
      " @portkey-ai/gateway 1.15.2 (`build/start-server.js --headless`, `x-portkey-custom-host` to the same upstream).",
    `- Load average (1/5/15 min): ${r.loadAtStart} at the start, ${loadNow()} at the end; each run's 1-minute`,
    "  load and the cores it used are in the per-round table below.",
    `- Method: closed loops (bench/lib/load.ts, undici keep-alive pools): each of c connections sends one`,
    "  POST /v1/chat/completions, waits for the whole answer, sends the next, until the run's time is up;",
    `  each target runs ${SECONDS} s per round, ${ROUNDS} rounds, the targets' order rotated each round; calls/s =`,
    "  completed 2xx answers / elapsed seconds (performance.now() around the run); latency from a timer per",
    `  request. Every target had a ${WARMUP_SECONDS} s warm-up at c=50 first. Promptmint's call is a paid call (API key,`,
    "  its price from a wallet lease (decision 018), upstream, durable invocation record before the answer).",
    "- Ratios (÷ Portkey) are computed per round, between runs a few seconds apart; the table gives their",
    "  median and the min–max over the rounds. Added latency = the target's percentile minus direct's, same round.",
    "",
  ];

  // Throughput summary.
  lines.push(
    "| Concurrency | Target | Calls/s, median (min–max) | p50 ms | p99 ms | Errors + non-2xx | CPU, cores | CPU ms per call | PostgreSQL, cores | Peak RSS (MB) | ÷ Portkey per round, median (min–max) |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  );
  const ratios: Record<number, number[]> = {};
  for (const level of r.levels) {
    for (const target of TARGETS) {
      const mine = level.runs.filter((x) => x.target === target).map((x) => x.r);
      const vsPortkey = isPromptmint(target)
        ? perRound(level.runs, (m) => (m[target]?.rps ?? Number.NaN) / (m.portkey?.rps ?? Number.NaN))
        : [];
      if (target === "promptmint") ratios[level.connections] = vsPortkey;
      lines.push(
        `| ${level.connections} | ${target} | ${spread(
          mine.map((x) => x.rps),
          1,
        )} | ${fmt(median(mine.map((x) => x.p50)), 3)} | ${fmt(median(mine.map((x) => x.p99)), 3)} |` +
          ` ${mine.reduce((s, x) => s + x.errors + x.non2xx, 0)} | ${fmt(median(mine.map((x) => x.targetCores)), 2)} |` +
          ` ${fmt(median(mine.map((x) => x.cpuMsPerCall)), 3)} | ${isPromptmint(target) ? fmt(median(mine.map((x) => x.pgCores)), 2) : "—"} |` +
          ` ${fmt(Math.max(...mine.map((x) => x.rssMb)), 0)} | ${isPromptmint(target) ? `**${spread(vsPortkey)}**` : "—"} |`,
      );
    }
  }
  lines.push("");

  // c=1 added latency, per round.
  const c1 = r.levels.find((l) => l.connections === 1);
  const addedTable = (level: LevelResult, title: string) => {
    const cols = TARGETS.filter((t) => t !== "direct");
    const out = [
      title,
      "",
      `| Round | direct p50 / p99 (ms) | ${cols.map((t) => `${t} adds p50 / p99 (ms)`).join(" | ")} |`,
      `|---:|---:|${cols.map(() => "---:").join("|")}|`,
    ];
    const rounds = [...new Set(level.runs.map((x) => x.round))].sort((a, b) => a - b);
    for (const round of rounds) {
      const m: Partial<Record<Target, Measured>> = {};
      for (const x of level.runs) if (x.round === round) m[x.target] = x.r;
      out.push(
        `| ${round + 1} | ${fmt(m.direct?.p50 ?? Number.NaN, 3)} / ${fmt(m.direct?.p99 ?? Number.NaN, 3)} | ` +
          cols
            .map(
              (t) => `${fmt(added("p50", t)(m), 3)} / ${fmt(added("p99", t)(m), 3)} (${m[t]?.ok ?? 0} calls)`,
            )
            .join(" | ") +
          " |",
      );
    }
    out.push(
      `| median | ${fmt(median(level.runs.filter((x) => x.target === "direct").map((x) => x.r.p50)), 3)} / ${fmt(
        median(level.runs.filter((x) => x.target === "direct").map((x) => x.r.p99)),
        3,
      )} | ` +
        cols
          .map(
            (t) =>
              `**${fmt(median(perRound(level.runs, added("p50", t))), 3)} / ${fmt(median(perRound(level.runs, added("p99", t))), 3)}**`,
          )
          .join(" | ") +
        " |",
    );
    // All rounds' calls pooled: with few calls per round (a slow model), a round's p99 is its slowest call.
    const pooled = (t: Target, q: number) =>
      quantile(
        level.runs
          .filter((x) => x.target === t)
          .flatMap((x) => x.r.latencies)
          .sort((a, b) => a - b),
        q,
      );
    out.push(
      `| all rounds pooled | ${fmt(pooled("direct", 0.5), 3)} / ${fmt(pooled("direct", 0.99), 3)} | ` +
        cols
          .map(
            (t) =>
              `${fmt(pooled(t, 0.5) - pooled("direct", 0.5), 3)} / ${fmt(pooled(t, 0.99) - pooled("direct", 0.99), 3)}`,
          )
          .join(" | ") +
        " |",
      "",
    );
    return out;
  };
  if (c1)
    lines.push(
      ...addedTable(
        c1,
        `Added latency at concurrency 1, instant upstream (${SECONDS} s per target per round, every call timed):`,
      ),
    );
  if (r.modelLevel.runs.length)
    lines.push(
      ...addedTable(
        r.modelLevel,
        `Added latency at concurrency 1 with an upstream that answers after ${MODEL_MS} ms (${SECONDS} s per target per round,` +
          ` so about ${Math.floor((SECONDS * 1000) / MODEL_MS)} calls each: the p99 of a round is close to its slowest call):`,
      ),
    );

  // Stages.
  if (r.stageRuns.length) {
    const names = [...(r.stageRuns[0]?.stages?.keys() ?? [])];
    const direct = r.levels
      .find((level) => level.connections === 1)
      ?.runs.filter((x) => x.target === "direct");
    lines.push(
      "Where a paid call's time goes at c=1 with an instant upstream: a Promptmint process of its own with `SERVER_TIMING=true`" +
        " (lib/stage-timings.ts; its hooks cost time, so the processes measured above run without them), each stage read from" +
        ` every answer's \`Server-Timing\` header; ${r.stageRuns.length} rounds of ${SECONDS} s. \`total\` is the server's time from` +
        " the request's first byte to the answer's headers; the client's latency adds the sockets and the body.",
      "",
      "| Stage | What it covers | p50 ms, median of rounds (min–max) | p99 ms, all rounds |",
      "|---|---|---:|---:|",
      ...names.map((name) => {
        const pooled = r.stageRuns.flatMap((run) => run.stages?.get(name) ?? []).sort((a, b) => a - b);
        return `| ${name} | ${STAGE_MEANING[name] ?? ""} | ${spread(
          r.stageRuns.map((run) => quantile(run.stages?.get(name) ?? [], 0.5)),
          3,
        )} | ${fmt(quantile(pooled, 0.99), 3)} |`;
      }),
      `| (client) | the call's latency at the load client | ${spread(
        r.stageRuns.map((run) => run.p50),
        3,
      )} | ${fmt(
        quantile(
          r.stageRuns.flatMap((run) => run.latencies).sort((a, b) => a - b),
          0.99,
        ),
        3,
      )} |`,
      ...(direct?.length
        ? [
            `| (direct) | the upstream called directly, same section 1 | ${spread(
              direct.map((x) => x.r.p50),
              3,
            )} | — |`,
          ]
        : []),
      "",
    );
  }

  // Processes.
  if (r.processRuns.length) {
    const one = r.processRuns.filter((x) => x.processes === 1);
    lines.push(
      `Processes: N Promptmint processes (same code, same flags) on the one PostgreSQL database, each on its own port;` +
        ` the client spreads its ${PROCESS_CONNECTIONS} connections evenly over them (as a load balancer would);` +
        " the process counts interleaved, order rotated per round. CPU is the sum over the N processes.",
      "",
      "| Processes | Calls/s, median (min–max) | ÷ 1 process per round | p50 ms | p99 ms | Errors + non-2xx | Promptmint CPU, cores | CPU ms per call | PostgreSQL, cores | Machine busy, cores | Load (1 min) | Peak RSS, all (MB) |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    );
    for (const n of PROCESSES) {
      const mine = r.processRuns.filter((x) => x.processes === n);
      const scale = mine.map((x) => x.r.rps / (one.find((o) => o.round === x.round)?.r.rps ?? Number.NaN));
      lines.push(
        `| ${n} | ${spread(
          mine.map((x) => x.r.rps),
          1,
        )} | ${n === 1 ? "—" : spread(scale)} | ${fmt(median(mine.map((x) => x.r.p50)), 3)} |` +
          ` ${fmt(median(mine.map((x) => x.r.p99)), 3)} | ${mine.reduce((s, x) => s + x.r.errors + x.r.non2xx, 0)} |` +
          ` ${fmt(median(mine.map((x) => x.r.targetCores)), 2)} | ${fmt(median(mine.map((x) => x.r.cpuMsPerCall)), 3)} |` +
          ` ${fmt(median(mine.map((x) => x.r.pgCores)), 2)} | ${fmt(median(mine.map((x) => x.r.machineCores)), 2)} | ${range(mine.map((x) => x.r.load1))} |` +
          ` ${fmt(Math.max(...mine.map((x) => x.r.rssMb)), 0)} |`,
      );
    }
    lines.push("");
  }

  // The durable-write floor.
  {
    const f = r.floor;
    const pk = c1 ? median(perRound(c1.runs, added("p50", "portkey"))) : Number.NaN;
    const pkModel = r.modelLevel.runs.length
      ? median(perRound(r.modelLevel.runs, added("p50", "portkey")))
      : Number.NaN;
    lines.push(
      "The durable-write floor (bench/lib/durable-floor.ts): on this run's PostgreSQL, from node-postgres, one at a time. A call whose charge is made durable after the model answered and before the answer is sent cannot add less than one durable write; Portkey, which writes nothing, adds the figure on the right in this same run.",
      "",
      "| Query | p50 (ms) | p99 (ms) | Samples | Portkey's added p50 in this run (ms) |",
      "|---|---:|---:|---:|---:|",
      `| \`select 1\` (a round trip, nothing written) | ${fmt(f.roundTrip.p50, 3)} | ${fmt(f.roundTrip.p99, 3)} | ${f.roundTrip.samples} | |`,
      `| one-row insert, own transaction (WAL flush at commit), back to back | **${fmt(f.durableWrite.p50, 3)}** | ${fmt(f.durableWrite.p99, 3)} | ${f.durableWrite.samples} | **${fmt(pk, 3)}** (c=1, instant upstream) |`,
      `| the same after ${f.gapMs} ms of the client's CPU work (what a c=1 call's record meets) | **${fmt(f.durableWriteAfterGap.p50, 3)}** | ${fmt(f.durableWriteAfterGap.p99, 3)} | ${f.durableWriteAfterGap.samples} | **${fmt(pk, 3)}** (c=1, instant upstream) |`,
      `| the same after ${f.idleMs} ms idle | **${fmt(f.durableWriteAfterIdle.p50, 3)}** | ${fmt(f.durableWriteAfterIdle.p99, 3)} | ${f.durableWriteAfterIdle.samples} | **${fmt(pkModel, 3)}** (c=1, ${MODEL_MS} ms model) |`,
      "",
    );
  }

  // First call.
  if (r.firstCalls.length) {
    lines.push(
      `First call after start: ${r.firstCalls.length} fresh Promptmint processes (same database, the consumer's key and the app already exist),` +
        ` each timed from spawn to its port accepting connections, then ${FIRST_CALL_CALLS} paid calls one after another on one keep-alive connection,` +
        ` then one more after ${FIRST_CALL_IDLE_MS / 1000} s without calls (the lease returned and the client's and upstream connections closed, the cached rows kept: what the first call of a consumer and app pair costs in a process that has long been warm).`,
      "",
      `| Start | Listening after (ms) | 1st call (ms) | 2nd call (ms) | ${FIRST_CALL_CALLS}th call (ms) | Median of 2nd–${FIRST_CALL_CALLS}th (ms) | 1st ÷ ${FIRST_CALL_CALLS}th | Call after ${FIRST_CALL_IDLE_MS / 1000} s idle (ms) |`,
      "|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...r.firstCalls.map(
        (f, i) =>
          `| ${i + 1} | ${fmt(f.startMs, 0)} | ${fmt(f.firstMs, 2)} | ${fmt(f.secondMs, 2)} | ${fmt(f.lastMs, 2)} | ${fmt(f.steadyMedianMs, 2)} | ${fmt(f.firstMs / f.lastMs, 1)} | ${fmt(f.afterIdleMs, 2)} |`,
      ),
      `| median | ${fmt(median(r.firstCalls.map((f) => f.startMs)), 0)} | **${fmt(median(r.firstCalls.map((f) => f.firstMs)), 2)}** |` +
        ` ${fmt(median(r.firstCalls.map((f) => f.secondMs)), 2)} | **${fmt(median(r.firstCalls.map((f) => f.lastMs)), 2)}** |` +
        ` ${fmt(median(r.firstCalls.map((f) => f.steadyMedianMs)), 2)} | ${fmt(median(r.firstCalls.map((f) => f.firstMs / f.lastMs)), 1)} |` +
        ` **${fmt(median(r.firstCalls.map((f) => f.afterIdleMs)), 2)}** |`,
      "",
    );
  }

  // Soak.
  if (r.soaks.length)
    lines.push(
      `Soak: ${SOAK.toLocaleString("en-US")} concurrent calls (one per connection, autocannon) held open by a ${SLOW_MS} ms upstream;` +
        ` a call counts as an error after ${SOAK_TIMEOUT_S} s; pg_stat_activity of the scratch database sampled every ~50 ms.`,
      "",
      "| Target | 2xx | Errors | Non-2xx | Duration (s) | p50 (ms) | p99 (ms) | Peak RSS (MB) | Max active | Max idle in transaction | Max connections | Oldest transaction (s) | Max waiting upstream at once |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...r.soaks.map(
        (s) =>
          `| ${s.target} | ${s.ok} | ${s.errors} | ${s.non2xx} | ${fmt(s.seconds)} | ${s.p50} | ${s.p99} | ${fmt(s.rssMb, 0)} |` +
          ` ${!isPromptmint(s.target) ? "—" : s.maxActive} | ${!isPromptmint(s.target) ? "—" : s.maxIdleInTransaction} | ${!isPromptmint(s.target) ? "—" : s.maxConnections} |` +
          ` ${!isPromptmint(s.target) ? "—" : fmt(s.oldestTransaction, 3)} | ${s.upstreamMaxInFlight} |`,
      ),
      "",
    );

  // Money.
  const last = r.money[r.money.length - 1]?.counts;
  lines.push(
    "Money, after each section (leases closed: open holds 0): reconcile() of the whole ledger, and the charged invocations the section added against the 2xx answers Promptmint gave in it.",
    "",
    "| Section | Promptmint 2xx answers | Client gave up (may be charged) | Charged invocations added | Reconcile | Open holds | Result |",
    "|---|---:|---:|---:|---|---:|---|",
    ...r.money.map(
      (m) =>
        `| ${m.section} | ${int(m.answered)} | ${int(m.gaveUp)} | ${int(m.charged)} | ${m.reconcileOk ? "clean" : "NOT CLEAN"} (${int(m.transactions)} transactions) | ${m.counts.open_holds} | ${m.ok ? "every 2xx charged once" : "MISMATCH"} |`,
    ),
    "",
    last
      ? `In all: ${int(last.charged)} charged invocations = ${int(last.posted)} calls posted in ${int(last.settles)} settle transactions` +
          ` (one per lease, decision 020); cents spent from holds ${int(last.spent_cents)} = cents posted ${int(last.posted_cents)}` +
          ` = cents charged to invocations ${int(last.charged_cents)}; ledger total ${r.ledger.ledgerTotal}, reconcile ${r.ledger.ok ? "clean" : "NOT CLEAN"}.`
      : "",
    "",
  );

  // Targets.
  const addedMedian = (level: LevelResult | undefined, q: "p50" | "p99", t: Target) =>
    level ? median(perRound(level.runs, added(q, t))) : Number.NaN;
  const roundsWhere = (level: LevelResult | undefined, q: "p50" | "p99") =>
    level
      ? perRound(level.runs, (m) => (added(q, "promptmint")(m) <= added(q, "portkey")(m) ? 1 : 0)).reduce(
          (a, b) => a + b,
          0,
        )
      : 0;
  const nRounds = (level: LevelResult | undefined) =>
    level ? new Set(level.runs.map((x) => x.round)).size : 0;
  const rows: string[] = [];
  for (const c of [50, 500]) {
    const rs = ratios[c];
    if (!rs) continue;
    rows.push(
      `| Calls/s ahead of Portkey at c=${c} (ratio per round ${rs.map((x) => fmt(x, 2)).join(", ")}; median ${fmt(median(rs), 2)}) | ${pass(median(rs) > 1)}${Math.min(...rs) > 1 ? "" : " (not in every round)"} |`,
    );
  }
  for (const q of ["p50", "p99"] as const) {
    if (!c1) continue;
    const pm = addedMedian(c1, q, "promptmint");
    const pk = addedMedian(c1, q, "portkey");
    rows.push(
      `| Added ${q} at c=1 at most Portkey's (median ${fmt(pm, 3)} vs ${fmt(pk, 3)} ms; held in ${roundsWhere(c1, q)} of ${nRounds(c1)} rounds) | ${pass(pm <= pk)} |`,
    );
  }
  if (r.modelLevel.runs.length) {
    const pm = addedMedian(r.modelLevel, "p50", "promptmint");
    rows.push(
      `| Added p50 at c=1 with a ${MODEL_MS} ms model < 0.5 ms (median ${fmt(pm, 3)} ms; Portkey ${fmt(addedMedian(r.modelLevel, "p50", "portkey"), 3)} ms) | ${pass(pm < 0.5)} |`,
    );
  }
  if (r.firstCalls.length) {
    const first = median(r.firstCalls.map((f) => f.firstMs));
    const hundredth = median(r.firstCalls.map((f) => f.lastMs));
    rows.push(
      `| First paid call after start as fast as the ${FIRST_CALL_CALLS}th (median ${fmt(first, 2)} vs ${fmt(hundredth, 2)} ms; PASS if at most 2× or 1 ms more) | ${pass(first <= Math.max(2 * hundredth, hundredth + 1))} |`,
    );
    const idle = median(r.firstCalls.map((f) => f.afterIdleMs));
    if (Number.isFinite(idle))
      rows.push(
        `| First paid call after start as fast as a warm process's call of a key idle ${FIRST_CALL_IDLE_MS / 1000} s (median ${fmt(first, 2)} vs ${fmt(idle, 2)} ms; PASS if at most 1.5× or 1 ms more) | ${pass(first <= Math.max(1.5 * idle, idle + 1))} |`,
      );
  }
  const soak = r.soaks.find((s) => s.target === "promptmint");
  if (soak)
    rows.push(
      `| ${SOAK.toLocaleString("en-US")} concurrent slow calls: 0 errors (${soak.errors + soak.non2xx + (SOAK - soak.ok)}), RSS ≤ 512 MB (${fmt(soak.rssMb, 0)} MB) | ${pass(soak.ok === SOAK && soak.rssMb <= 512)} |`,
      `| … no connection or transaction held while waiting upstream (${soak.upstreamMaxInFlight} calls waited upstream at once with at most ${soak.maxConnections} connections) | ${pass(soak.upstreamMaxInFlight > soak.maxConnections)} |`,
    );
  rows.push(
    `| Every section: reconcile clean, charges = 2xx answers (${r.money.filter((m) => m.ok).length} of ${r.money.length}) | ${pass(r.money.every((m) => m.ok))} |`,
  );
  lines.push("| Target | Result |", "|---|---|", ...rows, "");

  // Every run, for the record.
  lines.push(
    "Every run (calls/s = 2xx ÷ elapsed; cores = CPU of the measured process(es); PostgreSQL = CPU of the bench database's backends; machine = busy cores of the whole machine, every process on it; client = the load client's own CPU; load = 1-minute load average at the end of the run):",
    "",
    "| Section | Round | Target | 2xx | Elapsed (s) | Calls/s | p50 ms | p99 ms | Cores | PostgreSQL | Machine | Client | Load |",
    "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  );
  const row = (section: string, round: number, target: string, x: Measured) =>
    `| ${section} | ${round + 1} | ${target} | ${x.ok} | ${fmt(x.elapsed, 3)} | ${fmt(x.rps, 1)} | ${fmt(x.p50, 3)} | ${fmt(x.p99, 3)} |` +
    ` ${fmt(x.targetCores, 2)} | ${target === "promptmint" || target === "baseline" ? fmt(x.pgCores, 2) : "—"} |` +
    ` ${fmt(x.machineCores, 2)} | ${fmt(x.clientCores, 2)} | ${fmt(x.load1, 2)} |`;
  for (const level of r.levels)
    for (const x of level.runs) lines.push(row(`c=${level.connections}`, x.round, x.target, x.r));
  for (const x of r.modelLevel.runs) lines.push(row(`c=1, ${MODEL_MS} ms model`, x.round, x.target, x.r));
  for (const x of r.processRuns)
    lines.push(row(`${x.processes} process(es), c=${PROCESS_CONNECTIONS}`, x.round, "promptmint", x.r));
  lines.push("");
  return lines.join("\n");
}

function writeResults(section: string) {
  if (process.env.BENCH_WRITE === "0") return log("BENCH_WRITE=0: bench/RESULTS.md left as it was");
  writeResultsSection("## Gateway (issue 20)\n", section);
  log(`wrote ${resultsFile}`);
}

// An idle pooled connection cut by `drop database ... with (force)` must not crash the run.
process.on("uncaughtException", (err) => console.error("[bench] ignored error:", err.message));
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    for (const child of children) child.kill("SIGTERM");
    process.exit(130);
  });

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
