import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { openDatabase } from "../../apps/api/src/db/client.ts";
import { createSafeFetch } from "../../apps/api/src/lib/safe-fetch.ts";
import type { InvocationRecord } from "../../apps/api/src/modules/analytics/call-records.ts";
import { CallRecorder } from "../../apps/api/src/modules/billing/call-payment/record.ts";
import { relay } from "../../apps/api/src/modules/events/relay.ts";
import { cloudEventsSink } from "../../apps/api/src/modules/events/usage-sinks.ts";
import { webhookFanOut } from "../../apps/api/src/modules/events/webhooks.ts";
import { quantile } from "../lib/load.ts";
import { loadAverage, machineSummary, writeResultsSection } from "../lib/results.ts";
import { databaseUrl, queryOnce } from "../lib/scratch-database.ts";

/**
 * Issue 39 item 6 (decision 068): what the event log costs a paid call, and what a process relays.
 *
 * 1. The record statement with its event trigger on and off, side by side in one run: ROUNDS
 *    alternating rounds (on/off, then off/on), each SECONDS at c=1 (latency of one record) and at
 *    c=50 (calls recorded per second through the batch recorder), on PostgreSQL with synchronous
 *    commit (what a paid call waits for). Ratios per round, reported as median and range.
 * 2. A relay's throughput: events/s the webhook fan-out and a CloudEvents sink (loopback receiver)
 *    move, alone and while c=50 records run beside them, and what the relay costs those records.
 *
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres): a scratch database is
 * created beside it and dropped after.
 */
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const HEADING = "## Event log (issue 39)";
const log = (line: string) => console.log(`[bench:events] ${line}`);
const fmt = (n: number, digits = 2) => n.toFixed(digits);
const median = (values: number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

async function main() {
  const name = `pm_bench_events_${Date.now()}`;
  await queryOnce(ADMIN_URL, `create database ${name}`);
  const url = databaseUrl(ADMIN_URL, name);
  const handle = await openDatabase({ databaseUrl: url, pgliteDir: "" });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const db = handle.db;
    const {
      rows: [owner],
    } = await client.query<{ id: string }>(
      `insert into users (issuer, subject, username, email) values ('bench', 'c', 'bench-c', 'c@bench.invalid') returning id`,
    );
    const {
      rows: [app],
    } = await client.query<{ id: string }>(
      `insert into applications (owner_id, name, slug, type, price_cents, status)
       values ($1, 'Bench', 'bench', 'prompt', 7, 'live') returning id`,
      [owner?.id],
    );
    const record = (): InvocationRecord => ({
      id: randomUUID(),
      applicationId: app?.id as string,
      callerUserId: owner?.id as string,
      apiKeyId: null,
      endUser: "bench",
      mode: "completion",
      model: "gpt-4o-mini",
      status: "success",
      latencyMs: 5,
      inputTokens: 3,
      outputTokens: 4,
      // A price with no hold: a charged call (the x402 shape), so the trigger writes its event.
      chargedCents: 7,
    });
    const trigger = (on: boolean) =>
      client.query(
        `alter table invocations ${on ? "enable" : "disable"} trigger invocations_events_inserted`,
      );

    /** c callers recording back to back for `seconds`: latencies (ms) and calls per second. */
    async function load(c: number, seconds: number) {
      const recorder = new CallRecorder(db);
      const latencies: number[] = [];
      const until = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: c }, async () => {
          while (performance.now() < until) {
            const t = performance.now();
            await recorder.record(record());
            latencies.push(performance.now() - t);
          }
        }),
      );
      latencies.sort((a, b) => a - b);
      return {
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
        perSecond: latencies.length / seconds,
      };
    }

    log(`warming up; ${ROUNDS} rounds of ${SECONDS} s per side and concurrency`);
    await load(1, 2);
    await load(50, 2);
    const rounds: { on: Record<string, number>; off: Record<string, number> }[] = [];
    for (let r = 0; r < ROUNDS; r += 1) {
      const order = r % 2 === 0 ? [true, false] : [false, true];
      const round = { on: {}, off: {} } as (typeof rounds)[number];
      for (const on of order) {
        await trigger(on);
        const one = await load(1, SECONDS);
        const fifty = await load(50, SECONDS);
        round[on ? "on" : "off"] = { p50: one.p50, p99: one.p99, c50: fifty.perSecond, c50p50: fifty.p50 };
      }
      rounds.push(round);
      log(
        `round ${r + 1}: c=1 p50 ${fmt(round.on.p50 ?? 0, 3)} vs ${fmt(round.off.p50 ?? 0, 3)} ms; c=50 ${fmt(round.on.c50 ?? 0, 0)} vs ${fmt(round.off.c50 ?? 0, 0)} calls/s`,
      );
    }
    await trigger(true);

    // The relay: a backlog of events, moved by the fan-out (one endpoint that wants them) and a
    // CloudEvents sink answering at once on loopback.
    const receiver = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const sinkUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/events`;
    await client.query(
      `insert into webhook_endpoints (owner_id, url, event_types, secret) values ($1, 'https://example.invalid/hook', '{call.charged}', 'x')`,
      [owner?.id],
    );
    const safeFetch = createSafeFetch({ allowPrivate: true, timeoutMs: 30_000 });
    const sinks = [webhookFanOut(), cloudEventsSink({ url: sinkUrl, source: "bench" }, safeFetch)];
    const drain = async (until?: () => boolean) => {
      let moved = 0;
      const t = performance.now();
      for (;;) {
        let round = 0;
        for (const sink of sinks) round += (await relay(db, sink, { rounds: 1_000 })).sent;
        moved += round;
        if (round === 0 && (!until || until())) break;
      }
      return { moved, seconds: (performance.now() - t) / 1000 };
    };
    await drain(); // what the rounds above wrote
    // Alone: a backlog of 20,000 calls' events.
    const backlog = 20_000;
    const recorder = new CallRecorder(db);
    for (let i = 0; i < backlog; i += 500)
      await Promise.all(Array.from({ length: 500 }, () => recorder.record(record())));
    // Everything readable: the backlog's events for both sinks (a transaction elsewhere in this
    // database would hold them back; nothing else runs here).
    const alone = await drain(() => true);
    if (alone.moved < backlog * sinks.length) {
      const state = await client.query(
        `select sink, txid::text, seq, leased_by, leased_until, now() as now, last_error,
           (select count(*) from events e where (e.txid, e.seq) > (c.txid, c.seq)) as behind,
           (select max(txid)::text from events) as max_txid,
           pg_snapshot_xmin(pg_current_snapshot())::text as xmin, pg_snapshot_xmax(pg_current_snapshot())::text as xmax
         from event_cursors c`,
      );
      console.log(state.rows);
      throw new Error(`the relay moved ${alone.moved} of ${backlog * sinks.length} sink-events`);
    }
    log(`relay alone: ${alone.moved} sink-events in ${fmt(alone.seconds)} s`);
    // Beside c=50 records: both at once, then the records without a relay (side by side).
    const besideRounds: { with: number; without: number; relayed: number; relaySeconds: number }[] = [];
    for (let r = 0; r < Math.max(3, Math.ceil(ROUNDS / 2)); r += 1) {
      let done = false;
      const relayed = drain(() => done);
      const withRelay = await load(50, SECONDS);
      done = true;
      const moved = await relayed;
      const without = await load(50, SECONDS);
      await drain();
      besideRounds.push({
        with: withRelay.perSecond,
        without: without.perSecond,
        relayed: moved.moved,
        relaySeconds: moved.seconds,
      });
      log(
        `beside c=50: ${fmt(withRelay.perSecond, 0)} calls/s with the relay, ${fmt(without.perSecond, 0)} without; relayed ${moved.moved}`,
      );
    }
    receiver.close();

    const ratio = (pick: (round: (typeof rounds)[number]) => number) => {
      const values = rounds.map(pick).sort((a, b) => a - b);
      return `${fmt(median(values), 3)} (${fmt(values[0] ?? 0, 3)}–${fmt(values.at(-1) ?? 0, 3)})`;
    };
    const section = [
      HEADING,
      "",
      `Run ${new Date().toISOString().slice(0, 16)}Z on ${machineSummary()}; load ${loadAverage()}; PostgreSQL ${(await client.query("show server_version")).rows[0]?.server_version}, synchronous commit.`,
      `${ROUNDS} alternating rounds of ${SECONDS} s per side (\`npm run bench:events\`). Ratios are trigger on ÷ off per round: median (range).`,
      "",
      "| | trigger on (median) | trigger off (median) | on ÷ off |",
      "|---|---|---|---|",
      `| record, c=1, p50 ms | ${fmt(median(rounds.map((r) => r.on.p50 ?? 0)), 3)} | ${fmt(median(rounds.map((r) => r.off.p50 ?? 0)), 3)} | ${ratio((r) => (r.on.p50 ?? 0) / (r.off.p50 ?? 1))} |`,
      `| record, c=1, p99 ms | ${fmt(median(rounds.map((r) => r.on.p99 ?? 0)), 3)} | ${fmt(median(rounds.map((r) => r.off.p99 ?? 0)), 3)} | ${ratio((r) => (r.on.p99 ?? 0) / (r.off.p99 ?? 1))} |`,
      `| record, c=50, calls/s | ${fmt(median(rounds.map((r) => r.on.c50 ?? 0)), 0)} | ${fmt(median(rounds.map((r) => r.off.c50 ?? 0)), 0)} | ${ratio((r) => (r.on.c50 ?? 0) / (r.off.c50 ?? 1))} |`,
      "",
      `Relay alone: ${alone.moved} sink-events (fan-out + CloudEvents, ${backlog} calls) in ${fmt(alone.seconds)} s = **${fmt(alone.moved / alone.seconds, 0)} events/s**.`,
      "",
      "| beside c=50 records | calls/s with the relay | without | with ÷ without | events relayed/s meanwhile |",
      "|---|---|---|---|---|",
      ...besideRounds.map(
        (r, i) =>
          `| round ${i + 1} | ${fmt(r.with, 0)} | ${fmt(r.without, 0)} | ${fmt(r.with / r.without, 3)} | ${fmt(r.relayed / r.relaySeconds, 0)} |`,
      ),
    ].join("\n");
    console.log(`\n${section}`);
    writeResultsSection(HEADING, section);
  } finally {
    await client.end();
    await handle.close();
    await queryOnce(ADMIN_URL, `drop database ${name} with (force)`);
  }
}

await main();
