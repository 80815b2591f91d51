/**
 * A closed-loop HTTP load client for the benchmarks, timed by the clock rather than by a request
 * count: `connections` loops each send one request, wait for the whole answer, and send the next,
 * until `seconds` have passed; the calls in flight at the deadline are finished and counted.
 * Throughput is completed 2xx answers divided by the elapsed time measured with performance.now()
 * around the whole run (not a whole number of seconds), and every request has its own timer.
 *
 * It also records what the machine was doing: the load average, the CPU time of the processes
 * named by `pids` (from /proc/<pid>/stat), the machine's busy CPU (from /proc/stat) and the
 * client's own CPU, so each figure carries the conditions it was measured under.
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { Pool } from "undici";

export interface RequestSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface LoadResult {
  connections: number;
  /** Completed 2xx answers. */
  ok: number;
  non2xx: number;
  /** Requests that failed without an answer (connection reset, timeout). */
  errors: number;
  /** Answers other than 2xx by status, e.g. "503×12". */
  statuses: string;
  /** Wall-clock seconds from the first request to the last answer. */
  elapsed: number;
  /** ok / elapsed. */
  rps: number;
  /** Per-request latency of the 2xx answers, ms, sorted ascending. */
  latencies: number[];
  p50: number;
  p99: number;
  /** 1-minute load average when the run ended. */
  load1: number;
  /** Cores used by the measured processes (sum over `pids`) during the run. */
  targetCores: number;
  /** Their CPU time per completed call, ms. */
  cpuMsPerCall: number;
  /** Cores busy on the whole machine during the run (all processes, ours and others'). */
  machineCores: number;
  /** Cores used by this client process during the run. */
  clientCores: number;
  /**
   * With `stages`: each stage's durations (ms) from the 2xx answers' `Server-Timing` headers
   * (a Promptmint process with SERVER_TIMING on, lib/stage-timings.ts), sorted ascending.
   */
  stages?: Map<string, number[]>;
}

/** Adds a `Server-Timing` header's stages (`name;dur=ms, …`) to `into`. */
export function addServerTiming(header: string | string[] | undefined, into: Map<string, number[]>): void {
  if (typeof header !== "string") return;
  for (const part of header.split(",")) {
    const [name, dur] = part.trim().split(";dur=");
    if (!name || dur === undefined) continue;
    const list = into.get(name) ?? [];
    list.push(Number(dur));
    into.set(name, list);
  }
}

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}

/** The middle value; with an even count, the mean of the two middle values. */
export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const mid = Math.floor(n / 2);
  return n % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Median with the min–max spread, e.g. "2.07 (1.81–2.30)". */
export function spread(xs: number[], digits = 2): string {
  const finite = xs.filter(Number.isFinite);
  if (finite.length === 0) return "—";
  const f = (n: number) => n.toFixed(digits);
  if (finite.length === 1) return f(finite[0] as number);
  return `${f(median(finite))} (${f(Math.min(...finite))}–${f(Math.max(...finite))})`;
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** CPU seconds (user + system) used so far by a process, 0 if it is gone. */
export function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which is in parentheses and may contain spaces).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS; // utime, stime
  } catch {
    return 0;
  }
}

/** Busy and total jiffies of the whole machine (all cores). */
function machineJiffies(): { busy: number; total: number } {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

/** Starts counting CPU; the returned function gives the figures since then. */
export function cpuMeter(pids: (number | undefined)[]) {
  const t0 = performance.now();
  const target0 = pids.reduce<number>((s, p) => s + cpuSeconds(p), 0);
  const machine0 = machineJiffies();
  const client0 = process.cpuUsage();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const target = pids.reduce<number>((s, p) => s + cpuSeconds(p), 0) - target0;
    const machine1 = machineJiffies();
    const client = process.cpuUsage(client0);
    const dTotal = machine1.total - machine0.total;
    return {
      seconds,
      targetCpuSeconds: target,
      targetCores: target / seconds,
      machineCores: dTotal > 0 ? ((machine1.busy - machine0.busy) / dTotal) * os.cpus().length : Number.NaN,
      clientCores: (client.user + client.system) / 1e6 / seconds,
    };
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `connections` closed loops for `seconds`. With several specs (one per API process), loop i
 * sends to specs[i % specs.length], so the connections are spread evenly over the processes.
 */
export async function closedLoop(
  specs: RequestSpec[],
  options: { connections: number; seconds: number; pids?: (number | undefined)[]; stages?: boolean },
): Promise<LoadResult> {
  const { connections, seconds } = options;
  const pools = new Map<string, Pool>();
  const perOrigin = new Map<string, number>();
  specs.forEach((spec, i) => {
    const origin = new URL(spec.url).origin;
    const loops = Math.ceil((connections - i) / specs.length);
    perOrigin.set(origin, (perOrigin.get(origin) ?? 0) + Math.max(loops, 0));
  });
  for (const [origin, n] of perOrigin)
    pools.set(
      origin,
      new Pool(origin, {
        connections: Math.max(n, 1),
        pipelining: 1,
        keepAliveTimeout: 60_000,
        headersTimeout: 300_000,
        bodyTimeout: 300_000,
      }),
    );
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  const stages = options.stages ? new Map<string, number[]>() : undefined;
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  const meter = cpuMeter(options.pids ?? []);
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async (_, i) => {
      const spec = specs[i % specs.length] as RequestSpec;
      const url = new URL(spec.url);
      const pool = pools.get(url.origin) as Pool;
      const path = url.pathname + url.search;
      while (performance.now() < deadline) {
        const start = performance.now();
        try {
          const res = await pool.request({ path, method: "POST", headers: spec.headers, body: spec.body });
          await res.body.arrayBuffer();
          const ms = performance.now() - start;
          if (res.statusCode >= 200 && res.statusCode < 300) {
            ok += 1;
            latencies.push(ms);
            if (stages) addServerTiming(res.headers["server-timing"], stages);
          } else {
            non2xx += 1;
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          }
        } catch {
          errors += 1;
          await sleep(10);
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = meter();
  await Promise.all([...pools.values()].map((p) => p.close()));
  latencies.sort((a, b) => a - b);
  for (const list of stages?.values() ?? []) list.sort((a, b) => a - b);
  return {
    connections,
    ok,
    non2xx,
    errors,
    statuses: [...statuses].map(([code, n]) => `${code}×${n}`).join(" "),
    elapsed,
    rps: ok / elapsed,
    latencies,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    load1: os.loadavg()[0] ?? Number.NaN,
    targetCores: cpu.targetCores,
    cpuMsPerCall: ok > 0 ? (cpu.targetCpuSeconds * 1000) / ok : Number.NaN,
    machineCores: cpu.machineCores,
    clientCores: cpu.clientCores,
    ...(stages ? { stages } : {}),
  };
}
