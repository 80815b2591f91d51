/**
 * The durable-write floor (issue 20, c=1 target): the least time any design that makes a charge
 * durable after the model answered, and before the answer is sent, must add to a call, measured on
 * the bench's own PostgreSQL from a Node client (node-postgres, the driver Promptmint uses), one at
 * a time: a round trip that writes nothing (`select 1`), and the smallest durable write (one-row
 * insert in its own transaction: a WAL flush at commit), hot (back to back) and after an idle pause
 * (as between a slow model's calls). Not Promptmint code: what the disk and the server allow.
 */
import { performance } from "node:perf_hooks";
import pg from "pg";
import { quantile } from "./load.ts";

export interface FloorFigure {
  p50: number;
  p99: number;
  samples: number;
}

export interface DurableFloor {
  roundTrip: FloorFigure;
  durableWrite: FloorFigure;
  /** The durable write after `idleMs` without queries. */
  durableWriteAfterIdle: FloorFigure;
  idleMs: number;
  /**
   * The durable write after `gapMs` of the client's CPU work (a busy loop): what the record of a
   * call at c=1 meets, the process having spent that long on the call's other stages since the last
   * commit. On some disks a flush costs more the longer the disk idled (issue 38).
   */
  durableWriteAfterGap: FloorFigure;
  gapMs: number;
}

const figure = (times: number[]): FloorFigure => {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), samples: sorted.length };
};

export async function measureDurableFloor(options: {
  connectionString: string;
  seconds: number;
  idleMs: number;
  idleSamples: number;
  gapMs: number;
}): Promise<DurableFloor> {
  const client = new pg.Client({ connectionString: options.connectionString });
  await client.connect();
  try {
    await client.query(
      "create table if not exists bench_durable_floor (id bigserial primary key, at timestamptz not null default now())",
    );
    const timed = async (text: string, seconds: number) => {
      const times: number[] = [];
      const until = performance.now() + seconds * 1000;
      while (performance.now() < until) {
        const t0 = performance.now();
        await client.query(text);
        times.push(performance.now() - t0);
      }
      return times;
    };
    const insert = "insert into bench_durable_floor default values";
    await timed(insert, 1);
    const roundTrip = figure(await timed("select 1", options.seconds / 2));
    const durableWrite = figure(await timed(insert, options.seconds / 2));
    const afterGap: number[] = [];
    const gapUntil = performance.now() + (options.seconds / 2) * 1000;
    while (performance.now() < gapUntil) {
      const busyUntil = performance.now() + options.gapMs;
      while (performance.now() < busyUntil) {
        // The call's other stages: CPU, no queries.
      }
      const t0 = performance.now();
      await client.query(insert);
      afterGap.push(performance.now() - t0);
    }
    const afterIdle: number[] = [];
    for (let i = 0; i < options.idleSamples; i++) {
      await new Promise((resolve) => setTimeout(resolve, options.idleMs));
      const t0 = performance.now();
      await client.query(insert);
      afterIdle.push(performance.now() - t0);
    }
    await client.query("drop table bench_durable_floor");
    return {
      roundTrip,
      durableWrite,
      durableWriteAfterIdle: figure(afterIdle),
      idleMs: options.idleMs,
      durableWriteAfterGap: figure(afterGap),
      gapMs: options.gapMs,
    };
  } finally {
    await client.end();
  }
}
