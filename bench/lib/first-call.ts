/**
 * "Warm from the first call": start a fresh API process several times and time its first paid
 * call against its 100th. Separate from bench/gateway/run.ts so another measurement of the same
 * thing (e.g. bench/gateway/first-call.ts) can replace it without touching the rest of the bench.
 *
 * `launch` starts one fresh process and resolves once it accepts connections; `stop` ends it.
 * The calls go one at a time on one keep-alive connection (opened by the first call), each timed
 * with performance.now() from sending the request to reading the whole answer.
 */
import { performance } from "node:perf_hooks";
import { Client } from "undici";
import { quantile, type RequestSpec } from "./load.ts";

export interface FirstCallRun {
  /** From spawning the process to its port accepting connections, ms. */
  startMs: number;
  /** The first paid call after that, ms. */
  firstMs: number;
  /** The second call, ms. */
  secondMs: number;
  /** The `calls`-th (by default the 100th) call, ms. */
  lastMs: number;
  /** The first ten calls, ms: how quickly the process gets to its steady pace. */
  firstTenMs: number[];
  /**
   * One more call after `idleMs` without calls, ms: the same process, warm, but its per-key
   * caches expired and its lease returned: what any call of a key idle that long costs.
   */
  afterIdleMs: number;
  /** Median of calls 2..`calls`, ms. */
  steadyMedianMs: number;
  /** Status of every call that was not 2xx. */
  failures: number[];
  /** 2xx answers (each one a charged call). */
  ok: number;
}

export async function measureFirstCalls(options: {
  starts: number;
  calls?: number;
  spec: RequestSpec;
  launch: () => Promise<{ stop: () => Promise<void> }>;
  /** How long to wait before the extra call (`afterIdleMs`); 0 skips it. */
  idleMs?: number;
}): Promise<FirstCallRun[]> {
  const calls = options.calls ?? 100;
  const runs: FirstCallRun[] = [];
  const url = new URL(options.spec.url);
  const path = url.pathname + url.search;
  for (let i = 0; i < options.starts; i++) {
    const t0 = performance.now();
    const proc = await options.launch();
    const startMs = performance.now() - t0;
    const client = new Client(url.origin, { keepAliveTimeout: 60_000 });
    const times: number[] = [];
    const failures: number[] = [];
    let ok = 0;
    try {
      const idleMs = options.idleMs ?? 0;
      for (let n = 0; n < calls + (idleMs > 0 ? 1 : 0); n++) {
        if (n === calls) await new Promise((resolve) => setTimeout(resolve, idleMs));
        const s = performance.now();
        const res = await client.request({
          path,
          method: "POST",
          headers: options.spec.headers,
          body: options.spec.body,
        });
        await res.body.arrayBuffer();
        times.push(performance.now() - s);
        if (res.statusCode >= 200 && res.statusCode < 300) ok += 1;
        else failures.push(res.statusCode);
      }
    } finally {
      await client.close();
      await proc.stop();
    }
    const afterIdleMs = (options.idleMs ?? 0) > 0 ? (times.pop() ?? Number.NaN) : Number.NaN;
    const steady = times.slice(1).sort((a, b) => a - b);
    runs.push({
      startMs,
      firstMs: times[0] ?? Number.NaN,
      secondMs: times[1] ?? Number.NaN,
      lastMs: times[times.length - 1] ?? Number.NaN,
      firstTenMs: times.slice(0, 10),
      afterIdleMs,
      steadyMedianMs: quantile(steady, 0.5),
      failures,
      ok,
    });
  }
  return runs;
}
