/**
 * Gateway benchmark (issue 8): what a paid call through Promptmint costs over calling the upstream
 * directly, next to Portkey's open-source gateway as a pass-through reference, in one run.
 *
 * Not a test. It starts, each in its own process: a loopback OpenAI-compatible upstream (instant,
 * and a second one answering after a fixed delay), Promptmint on a scratch PostgreSQL database with
 * a paid prompt app whose model goes to the upstream (OPENAI_BASE_URL) and a funded consumer key,
 * and `@portkey-ai/gateway` with `x-portkey-custom-host` pointing at the same upstream. Then:
 *  1. autocannon at each concurrency, the three targets interleaved (direct, Promptmint, Portkey)
 *     for BENCH_ROUNDS rounds: requests/s, p50, p99, errors, peak RSS;
 *  2. latency at concurrency 1 with microsecond timers, one request to each target in turn;
 *  3. a soak of BENCH_SOAK (5,000) concurrent calls held open by a 2-second upstream, sampling
 *     pg_stat_activity for connections active or idle in transaction while calls wait upstream;
 *  4. reconcile() on the ledger once the leases have idled out, charged invocations == 2xx answers
 *     of Promptmint == calls posted by the leases' settle transactions, and cents spent from holds
 *     == cents posted == cents charged to invocations.
 * Prints a table and rewrites the "## Gateway (issue 8)" section of bench/RESULTS.md.
 *
 * Env: BENCH_DATABASE_URL (admin URL, default postgres://postgres@127.0.0.1:5432/test),
 *      BENCH_CONNECTIONS (1,50,500), BENCH_REQUESTS (requests per target per round at c>1, 3000),
 *      BENCH_REQUESTS_C1 (300), BENCH_ROUNDS (2), BENCH_LATENCY_SAMPLES (300 per target),
 *      BENCH_WARMUP (500), BENCH_SOAK (5000), BENCH_SOAK_TIMEOUT_S (300), BENCH_SLOW_MS (2000), BENCH_LOG_LEVEL (Promptmint's LOG_LEVEL, warn),
 *      BENCH_ENV (extra env for Promptmint, e.g. "WEB_CONCURRENCY=2"), BENCH_KEEP_DB=1,
 *      BENCH_NODE_ARGS (node flags for Promptmint; default those of `npm start`, "" for none),
 *      BENCH_PROFILE_DIR (write a --cpu-prof profile of the main Promptmint process there),
 *      BENCH_PORT_BASE (4260; seven ports from there), BENCH_WRITE=0 (print only, leave RESULTS.md),
 *      BENCH_UPSTREAM_DELAY_MS (0: the main upstream's delay, e.g. 200 for a model-like c=1 run).
 */
import { type ChildProcess, execSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { sql } from "drizzle-orm";
import pg from "pg";
import { openDatabase, queryRows } from "../../apps/api/src/db/client.ts";
import { creditTopUp } from "../../apps/api/src/modules/billing/postings.ts";
import { reconcile } from "../../apps/api/src/modules/billing/reconcile.ts";
import { createCaller } from "../../apps/api/src/test/caller.ts";
import { resultsFile, writeResultsSection } from "../lib/results.ts";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const LEVELS = (process.env.BENCH_CONNECTIONS ?? "1,50,500").split(",").map(Number);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const REQUESTS_C1 = Number(process.env.BENCH_REQUESTS_C1 ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 300);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 500);
const SOAK = Number(process.env.BENCH_SOAK ?? 5000);
/** How long one soak call may take before autocannon counts it as an error. */
const SOAK_TIMEOUT_S = Number(process.env.BENCH_SOAK_TIMEOUT_S ?? 300);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 2000);
/** The upstream of the throughput and c=1 runs answers after this long (0: at once). */
const UPSTREAM_DELAY_MS = Number(process.env.BENCH_UPSTREAM_DELAY_MS ?? 0);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? "warn";
const EXTRA_ENV = Object.fromEntries(
  (process.env.BENCH_ENV ?? "")
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => pair.split("=", 2) as [string, string]),
);
/** Writes a CPU profile of the Promptmint process here (summarise with bench/gateway/profile.ts). */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
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
/** Seven consecutive ports from here (BENCH_PORT_BASE), so two runs on one machine do not collide. */
const PORT_BASE = Number(process.env.BENCH_PORT_BASE ?? 4260);
const PORT = {
  upstream: PORT_BASE,
  slowUpstream: PORT_BASE + 1,
  portkey: PORT_BASE + 2,
  promptmint: PORT_BASE + 3,
  promptmintSlow: PORT_BASE + 4,
  baseline: PORT_BASE + 5,
  baselineSlow: PORT_BASE + 6,
};
const PRICE_CENTS = 1;

const dbName = `pm_gwbench_${process.pid}_${Date.now()}`;
const benchUrl = (() => {
  const u = new URL(adminUrl);
  u.pathname = `/${dbName}`;
  return u.toString();
})();

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "—");
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

type Target = "direct" | "promptmint" | "baseline" | "portkey";
const TARGETS: Target[] = BASELINE_DIR
  ? ["direct", "promptmint", "baseline", "portkey"]
  : ["direct", "promptmint", "portkey"];
const isPromptmint = (t: Target) => t === "promptmint" || t === "baseline";
const byTarget = <T>(make: () => T) =>
  Object.fromEntries(TARGETS.map((t) => [t, make()])) as Record<Target, T>;

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

async function waitForPort(port: number, timeoutMs = 60_000): Promise<void> {
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
    await sleep(200);
  }
  throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
}

/** RSS of a process and all its descendants (a cluster primary and its workers), in MB. */
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

function peakRss(pid: number | undefined) {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 100);
  return () => {
    clearInterval(timer);
    return Math.max(peak, rssMb(pid));
  };
}

// ---------------------------------------------------------------- requests

interface RequestSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
}

const messages = [{ role: "user", content: "Say hello in five words." }];

function specFor(target: Target, options: { apiKey: string; slug: string; slow?: boolean }): RequestSpec {
  const upstreamPort = options.slow ? PORT.slowUpstream : PORT.upstream;
  const json = { "content-type": "application/json" };
  if (target === "direct")
    return {
      url: `http://127.0.0.1:${upstreamPort}/v1/chat/completions`,
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
        "x-portkey-custom-host": `http://127.0.0.1:${upstreamPort}/v1`,
      },
      body: JSON.stringify({ model: "gpt-4o-mini", messages }),
    };
  const port =
    target === "baseline"
      ? options.slow
        ? PORT.baselineSlow
        : PORT.baseline
      : options.slow
        ? PORT.promptmintSlow
        : PORT.promptmint;
  return {
    url: `http://127.0.0.1:${port}/api/v1/chat/completions`,
    headers: { ...json, authorization: `Bearer ${options.apiKey}` },
    body: JSON.stringify({ model: options.slug, messages }),
  };
}

interface CannonResult {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  errors: number;
  non2xx: number;
  rssMb: number;
  seconds: number;
  /** Answers other than 2xx by status, e.g. "503×12". */
  statuses: string;
}

/** The fields of autocannon's result this benchmark reads (the package ships no types). */
interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  "2xx": number;
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  statusCodeStats?: Record<string, { count: number }>;
}

function cannon(
  spec: RequestSpec,
  options: { connections: number; amount: number; timeoutSeconds?: number; pid?: number },
): Promise<CannonResult> {
  const stopRss = peakRss(options.pid);
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: spec.url,
        method: "POST",
        headers: spec.headers,
        body: spec.body,
        connections: options.connections,
        amount: options.amount,
        timeout: options.timeoutSeconds ?? 120,
      },
      (err: Error | null, r: AutocannonResult) => {
        const rss = stopRss();
        if (err) return reject(err);
        resolve({
          rps: r.requests.average,
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

/** One request on a keep-alive agent, timed with hrtime; resolves to [status, ms]. */
function timedRequest(spec: RequestSpec, agent: http.Agent): Promise<[number, number]> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(spec.url, { method: "POST", headers: spec.headers, agent }, (res) => {
      res.resume();
      res.on("end", () => resolve([res.statusCode ?? 0, Number(process.hrtime.bigint() - t0) / 1e6]));
    });
    req.on("error", reject);
    req.end(spec.body);
  });
}

function quantile(sorted: number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}

const median = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

// ---------------------------------------------------------------- setup

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

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
    LLM_TIMEOUT_SECONDS: "60",
    LOG_LEVEL,
    ...EXTRA_ENV,
  };
}

async function setUpApp(baseUrl: string): Promise<{ slug: string; apiKey: string; consumerEmail: string }> {
  const creator = await createCaller(baseUrl, "Bench Creator");
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name: "Bench greeter",
      interaction_mode: "completion",
      visibility: "public",
      price_cents: PRICE_CENTS,
    },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4o-mini" } });
  const live = await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, {
    body: { status: "live" },
  });
  if (live.status !== 200) throw new Error(`could not publish the bench app: ${live.status}`);
  const consumer = await createCaller(baseUrl, "Bench Consumer");
  const key = await consumer.api("POST", "/api/keys/", { body: { name: "bench" } });
  return { slug: app.slug, apiKey: key.body.key, consumerEmail: consumer.email };
}

// ---------------------------------------------------------------- main

interface LevelResult {
  connections: number;
  rounds: Record<Target, CannonResult[]>;
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
  log(`scratch database ${dbName}`);
  await adminQuery(`create database ${dbName}`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pm-gwbench-"));
  let promptmint2xx = 0;
  // Calls the client gave up on (timeout): the server may still have answered and charged them.
  let promptmintGaveUp = 0;

  try {
    start("upstream", ["bench/gateway/upstream.ts", String(PORT.upstream), String(UPSTREAM_DELAY_MS)]);
    start("slow upstream", ["bench/gateway/upstream.ts", String(PORT.slowUpstream), String(SLOW_MS)]);
    const portkey = start("portkey", [
      "node_modules/@portkey-ai/gateway/build/start-server.js",
      `--port=${PORT.portkey}`,
      "--headless",
    ]);
    const promptmint = start(
      "promptmint",
      [
        ...NODE_ARGS,
        ...(PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : []),
        "apps/api/src/main.ts",
      ],
      promptmintEnv(PORT.promptmint, PORT.upstream, dataDir),
    );
    const baseline = BASELINE_DIR
      ? start(
          "baseline",
          [...NODE_ARGS, "apps/api/src/main.ts"],
          promptmintEnv(PORT.baseline, PORT.upstream, dataDir),
          BASELINE_DIR,
        )
      : undefined;
    for (const port of [PORT.upstream, PORT.slowUpstream, PORT.portkey, PORT.promptmint])
      await waitForPort(port);
    if (baseline) await waitForPort(PORT.baseline);
    log("upstreams, Portkey and Promptmint are listening");

    const baseUrl = `http://127.0.0.1:${PORT.promptmint}`;
    const { slug, apiKey, consumerEmail } = await setUpApp(baseUrl);
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

    const specs = Object.fromEntries(TARGETS.map((t) => [t, specFor(t, { apiKey, slug })])) as Record<
      Target,
      RequestSpec
    >;
    const pids: Record<Target, number | undefined> = {
      direct: children[0]?.pid,
      promptmint: promptmint.pid,
      baseline: baseline?.pid,
      portkey: portkey.pid,
    };
    for (const target of TARGETS) {
      const probe = await fetch(specs[target].url, {
        method: "POST",
        headers: specs[target].headers,
        body: specs[target].body,
      });
      const text = await probe.text();
      if (probe.status !== 200) throw new Error(`${target} answered ${probe.status}: ${text}`);
      if (isPromptmint(target)) promptmint2xx += 1;
    }
    log("each target answers; warming up");
    for (const target of TARGETS) {
      const warm = await cannon(specs[target], { connections: 50, amount: WARMUP, pid: pids[target] });
      if (isPromptmint(target)) {
        promptmint2xx += warm.ok;
        promptmintGaveUp += warm.errors;
      }
    }

    // 1. Throughput and latency at each concurrency, targets interleaved round by round.
    const levels: LevelResult[] = [];
    for (const connections of LEVELS) {
      const level: LevelResult = { connections, rounds: byTarget<CannonResult[]>(() => []) };
      for (let round = 0; round < ROUNDS; round++) {
        for (const target of TARGETS) {
          const r = await cannon(specs[target], {
            connections,
            amount: connections === 1 ? REQUESTS_C1 : REQUESTS,
            pid: pids[target],
          });
          if (isPromptmint(target)) {
            promptmint2xx += r.ok;
            promptmintGaveUp += r.errors;
          }
          level.rounds[target].push(r);
          log(
            `c=${connections} round ${round + 1} ${target}: ${fmt(r.rps, 0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ` +
              `${r.errors} errors, ${r.non2xx} non-2xx ${r.statuses}, RSS ${fmt(r.rssMb, 0)} MB, load ${fmt(os.loadavg()[0] ?? 0, 2)}`,
          );
        }
      }
      levels.push(level);
    }

    // 2. Added latency at concurrency 1: one request to each target in turn, microsecond timers.
    const samples = byTarget<number[]>(() => []);
    const agents = Object.fromEntries(
      TARGETS.map((t) => [t, new http.Agent({ keepAlive: true, maxSockets: 1 })]),
    ) as Record<Target, http.Agent>;
    let latencyFailures = 0;
    for (let i = 0; i < LATENCY_SAMPLES + 50; i++) {
      for (const target of TARGETS) {
        const [status, ms] = await timedRequest(specs[target], agents[target]);
        if (status !== 200) latencyFailures += 1;
        else if (isPromptmint(target)) promptmint2xx += 1;
        if (i >= 50) samples[target].push(ms);
      }
    }
    for (const agent of Object.values(agents)) agent.destroy();
    const latency = Object.fromEntries(
      TARGETS.map((t) => {
        const sorted = [...samples[t]].sort((a, b) => a - b);
        return [t, { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }];
      }),
    ) as Record<Target, { p50: number; p99: number }>;
    log(
      `c=1 latency p50/p99 ms: ${TARGETS.map((t) => `${t} ${fmt(latency[t].p50, 3)}/${fmt(latency[t].p99, 3)}`).join(", ")}`,
    );

    // 3. Soak: SOAK concurrent calls held open by a slow upstream.
    const promptmintSlow = start(
      "promptmint (slow upstream)",
      [...NODE_ARGS, "apps/api/src/main.ts"],
      promptmintEnv(PORT.promptmintSlow, PORT.slowUpstream, dataDir),
    );
    const baselineSlow = BASELINE_DIR
      ? start(
          "baseline (slow upstream)",
          [...NODE_ARGS, "apps/api/src/main.ts"],
          promptmintEnv(PORT.baselineSlow, PORT.slowUpstream, dataDir),
          BASELINE_DIR,
        )
      : undefined;
    await waitForPort(PORT.promptmintSlow);
    if (baselineSlow) await waitForPort(PORT.baselineSlow);
    const soaks: SoakResult[] = [];
    const sampler = new pg.Client({ connectionString: adminUrl });
    await sampler.connect();
    const soakTargets = TARGETS.filter((t) => t !== "direct");
    for (const target of SOAK > 0 ? soakTargets : []) {
      const spec = specFor(target, { apiKey, slug, slow: true });
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
      await fetch(`http://127.0.0.1:${PORT.slowUpstream}/stats?reset`);
      const r = await cannon(spec, {
        connections: SOAK,
        amount: SOAK,
        timeoutSeconds: SOAK_TIMEOUT_S,
        pid: { promptmint: promptmintSlow.pid, baseline: baselineSlow?.pid, portkey: portkey.pid, direct: 0 }[
          target
        ],
      });
      sampling = false;
      await sampleLoop;
      const { maxInFlight } = (await (await fetch(`http://127.0.0.1:${PORT.slowUpstream}/stats`)).json()) as {
        maxInFlight: number;
      };
      if (isPromptmint(target)) {
        promptmint2xx += r.ok;
        promptmintGaveUp += r.errors;
      }
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

    // 4. Money: the ledger reconciles and every 2xx answer was charged exactly once. Leases
    // (docs/decisions/018) go back to the wallet within a few seconds of the last call.
    const moneyCounts = async () => {
      const [
        row = {
          posted: -1,
          settles: -1,
          posted_cents: -1,
          charged: -1,
          open_holds: -1,
          spent_cents: -1,
          charged_cents: -2,
        },
      ] = await queryRows<MoneyCounts>(
        handle.db,
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
      return row;
    };
    let counts = await moneyCounts();
    for (let waited = 0; counts.open_holds !== 0 && waited < 15_000; waited += 250) {
      await sleep(250);
      counts = await moneyCounts();
    }
    const report = await reconcile(handle.db);
    await handle.close();
    const moneyOk =
      report.ok &&
      counts.posted === counts.charged &&
      counts.posted_cents === counts.spent_cents &&
      counts.spent_cents === counts.charged_cents &&
      counts.charged >= promptmint2xx &&
      counts.charged <= promptmint2xx + promptmintGaveUp &&
      counts.open_holds === 0;
    log(
      `reconcile ${report.ok ? "clean" : "NOT CLEAN"} (${report.accounts} accounts, ${report.transactions} transactions); ` +
        `calls posted ${counts.posted} (${counts.settles} settle transactions), charged invocations ${counts.charged}, Promptmint 2xx answers ${promptmint2xx} ` +
        `(+ ${promptmintGaveUp} the client gave up on), ` +
        `open holds ${counts.open_holds} — ${moneyOk ? "OK" : "MISMATCH"}`,
    );

    const pgVersion = sh(`psql "${adminUrl}" -Atc "select version()"`).split(" on ")[0] ?? "?";
    const section = render({
      levels,
      latency,
      latencyFailures,
      soaks,
      report,
      counts,
      promptmint2xx,
      promptmintGaveUp,
      moneyOk,
      pgVersion,
    });
    console.log(`\n${section}`);
    writeResults(section);
    if (!moneyOk) process.exitCode = 1;
  } finally {
    for (const child of children) child.kill("SIGTERM");
    await sleep(1000);
    if (!process.env.BENCH_KEEP_DB)
      await adminQuery(`drop database if exists ${dbName} with (force)`).catch((err) =>
        console.error(`[bench] could not drop ${dbName}: ${err.message}`),
      );
  }
}

// ---------------------------------------------------------------- report

/** What the money check counts once the leases have closed (see moneyCounts). */
interface MoneyCounts {
  /** Calls posted by settle transactions (the sum of their holds' `calls`). */
  posted: number;
  settles: number;
  /** Cents the settle transactions moved out of held accounts. */
  posted_cents: number;
  /** Successful invocations charged and naming their hold. */
  charged: number;
  open_holds: number;
  /** Cents spent from holds (`settled_cents`). */
  spent_cents: number;
  charged_cents: number;
}

function render(r: {
  levels: LevelResult[];
  latency: Record<Target, { p50: number; p99: number }>;
  latencyFailures: number;
  soaks: SoakResult[];
  report: Awaited<ReturnType<typeof reconcile>>;
  counts: MoneyCounts;
  promptmint2xx: number;
  promptmintGaveUp: number;
  moneyOk: boolean;
  pgVersion: string;
}): string {
  const pass = (ok: boolean) => (ok ? "PASS" : "FAIL");
  const mem = sh("free -g | awk '/^Mem:/ {print $2}'");
  const commit =
    sh("git rev-parse --short HEAD") + (sh("git status --porcelain -- apps") ? " (+ uncommitted)" : "");
  const agg = (rs: CannonResult[]) => ({
    rps: median(rs.map((x) => x.rps)),
    p50: median(rs.map((x) => x.p50)),
    p99: median(rs.map((x) => x.p99)),
    errors: rs.reduce((s, x) => s + x.errors + x.non2xx, 0),
    rss: Math.max(...rs.map((x) => x.rssMb)),
  });
  const rows: string[] = [];
  const ratios: Record<number, number> = {};
  for (const level of r.levels) {
    const pk = agg(level.rounds.portkey);
    const direct = agg(level.rounds.direct);
    for (const target of TARGETS) {
      const a = agg(level.rounds[target]);
      if (target === "promptmint") ratios[level.connections] = a.rps / pk.rps;
      const vsPortkey = isPromptmint(target) ? fmt(a.rps / pk.rps, 2) : "—";
      rows.push(
        `| ${level.connections} | ${target} | ${fmt(a.rps, 0)} | ${a.p50} | ${a.p99} | ${a.errors} | ${fmt(a.rss, 0)} |` +
          ` ${target === "direct" ? "—" : fmt(a.rps / direct.rps, 2)} | ${vsPortkey} |`,
      );
    }
  }
  const added = (t: Target) => ({
    p50: r.latency[t].p50 - r.latency.direct.p50,
    p99: r.latency[t].p99 - r.latency.direct.p99,
  });
  const pm = added("promptmint");
  const pk = added("portkey");
  const before = BASELINE_DIR ? added("baseline") : undefined;
  const soak = r.soaks.find((s) => s.target === "promptmint");
  const ratio50 = ratios[50] ?? Number.NaN;
  const lines = [
    "## Gateway (issue 8)",
    "",
    `Run ${new Date().toISOString()} with \`npm run bench:gateway\` (bench/gateway/run.ts) at commit ${commit}.`,
    "",
    `- Machine: ${sh("nproc")} CPU cores (${os.cpus()[0]?.model ?? "?"}), ${mem} GB RAM; ${r.pgVersion} on the same`,
    "  machine (default config, synchronous_commit on). Upstream, Promptmint, Portkey, PostgreSQL and the",
    "  autocannon client all share the two cores.",
    `- Node ${process.version}${NODE_ARGS.length ? ` (${NODE_ARGS.join(" ")})` : ""}; Promptmint on PostgreSQL with LOG_LEVEL=${LOG_LEVEL}` +
      `${
        Object.keys(EXTRA_ENV).length
          ? ` and ${Object.entries(EXTRA_ENV)
              .map(([k, v]) => `${k}=${v}`)
              .join(" ")}`
          : ""
      };` +
      " @portkey-ai/gateway 1.15.2 (`build/start-server.js --headless`, `x-portkey-custom-host` to the same upstream).",
    `- Load average (1/5/15 min) at the end: ${os
      .loadavg()
      .map((x) => fmt(x, 2))
      .join(" / ")} — other sessions' work shares the two cores, so absolute figures are noisy;`,
    "  the three targets are measured interleaved, so their ratios are the figures to read.",
    `- Each row: median of ${ROUNDS} rounds of autocannon (${REQUESTS_C1} requests at c=1, ${REQUESTS} at higher`,
    `  concurrency), one POST /v1/chat/completions per request, after a ${WARMUP}-request warm-up of each target.`,
    "  Promptmint's request is a paid call (API key, its price from a wallet lease (decision 018), upstream, settle + invocation record).",
    "",
    "| Concurrency | Target | Requests/s | p50 (ms) | p99 (ms) | Errors | Peak RSS (MB) | ÷ direct | ÷ Portkey |",
    "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows,
    "",
    `Added latency at concurrency 1 (${LATENCY_SAMPLES} requests per target, one to each in turn, µs timers;` +
      ` ${r.latencyFailures} failures): direct p50 ${fmt(r.latency.direct.p50, 3)} ms / p99 ${fmt(r.latency.direct.p99, 3)} ms;` +
      ` Promptmint adds **${fmt(pm.p50, 3)} ms p50, ${fmt(pm.p99, 3)} ms p99**; Portkey adds ${fmt(pk.p50, 3)} ms p50, ${fmt(pk.p99, 3)} ms p99` +
      `${before ? `; the baseline build adds ${fmt(before.p50, 3)} ms p50, ${fmt(before.p99, 3)} ms p99` : ""}.`,
    "",
    `Soak: ${SOAK.toLocaleString()} concurrent calls (one per connection) held open by a ${SLOW_MS} ms upstream;` +
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
    `Money: reconcile ${r.report.ok ? "clean" : "NOT CLEAN"} (${r.report.accounts} accounts, ${r.report.transactions} transactions,` +
      ` ledger total ${r.report.ledgerTotal}, every hold's calls matched to its invocations and its posting); charged invocations` +
      ` ${r.counts.charged.toLocaleString()}, Promptmint 2xx answers ${r.promptmint2xx.toLocaleString()}` +
      ` (+ ${r.promptmintGaveUp.toLocaleString()} calls the client timed out on, which the server may still complete and charge),` +
      ` calls posted ${r.counts.posted.toLocaleString()} in ${r.counts.settles.toLocaleString()} settle transactions (one per lease, decision 020),` +
      ` open holds ${r.counts.open_holds} once the leases idled out,` +
      ` cents spent from holds ${r.counts.spent_cents.toLocaleString()} = cents posted ${r.counts.posted_cents.toLocaleString()}` +
      ` = cents charged to invocations ${r.counts.charged_cents.toLocaleString()}` +
      ` — ${r.moneyOk ? "every 2xx charged exactly once and posted, no charge without an invocation" : "MISMATCH"}.`,
    "",
    "| Target | Result |",
    "|---|---|",
    `| Paid-call throughput ≥ Portkey at concurrency 50 (ratio ${fmt(ratio50, 2)}) | ${pass(ratio50 >= 1)} |`,
    `| Added p50 at concurrency 1 ≤ 1 ms (${fmt(pm.p50, 3)} ms) | ${pass(pm.p50 <= 1)} |`,
    `| Added p99 at concurrency 1 ≤ 5 ms (${fmt(pm.p99, 3)} ms) | ${pass(pm.p99 <= 5)} |`,
    `| ${SOAK.toLocaleString()} concurrent slow calls: 0 errors (${soak ? soak.errors + soak.non2xx + (SOAK - soak.ok) : "?"}) | ${pass(!!soak && soak.ok === SOAK)} |`,
    `| … RSS ≤ 512 MB (${soak ? fmt(soak.rssMb, 0) : "?"} MB) | ${pass(!!soak && soak.rssMb <= 512)} |`,
    `| … no connection or transaction held while waiting upstream (${soak?.upstreamMaxInFlight ?? "?"} calls waited upstream at once with at most ${soak?.maxConnections ?? "?"} connections; oldest transaction ${soak ? fmt(soak.oldestTransaction, 3) : "?"} s) | ${pass(!!soak && soak.upstreamMaxInFlight > soak.maxConnections)} |`,
    `| Reconcile clean, charges = 2xx answers (+ client timeouts) | ${pass(r.moneyOk)} |`,
    "",
  ];
  return lines.join("\n");
}

function writeResults(section: string) {
  if (process.env.BENCH_WRITE === "0") return log("BENCH_WRITE=0: bench/RESULTS.md left as it was");
  writeResultsSection("## Gateway (issue 8)\n", section);
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
