import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DatabaseHandle, queryRows } from "../../db/client.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { dayOf } from "../analytics/invocation-partitions.ts";
import { exportsUnlikeTheLog } from "./event-checks.ts";
import { maintainEventPartitions } from "./event-partitions.ts";
import { relay } from "./relay.ts";
import { webhookFanOut } from "./webhooks.ts";

// The event log partitioned by day and pruned like invocations (decision 068): a day past the
// retention is dropped only once every sink has passed it, and reconcile compares from there on.
// And the fan-out's idle pass: no endpoint, nothing read.

let testDb: TestDatabase;
let handle: DatabaseHandle;
const DAY = 86_400_000;

beforeAll(async () => {
  testDb = await createTestDatabase();
  handle = await testDb.open();
});
afterAll(async () => {
  await handle?.close();
  await testDb?.destroy();
});

const count = async (table: string) =>
  Number(
    (
      await queryRows<{ n: string }>(handle.db, sql`select count(*)::text as n from ${sql.identifier(table)}`)
    )[0]?.n,
  );

it("moves strays into their day, keeps an old day a sink has not passed, drops it once every sink has", async () => {
  const { db } = handle;
  const old = new Date(Date.now() - 100 * DAY);
  const oldDay = dayOf(old);
  // Three events of a day long past (a server down, a backfill) and two of today, in the default partition.
  await db.execute(
    sql`insert into events (id, type, occurred_at, created_at, amount_micros, data)
        select 'old_' || g, 'call.charged', ${old.toISOString()}::timestamptz, ${old.toISOString()}::timestamptz, 70000, '{}'
        from generate_series(1, 3) g`,
  );
  await db.execute(
    sql`insert into events (id, type, occurred_at, amount_micros, data)
        select 'new_' || g, 'call.charged', now(), 70000, '{}' from generate_series(1, 2) g`,
  );
  // A sink that has exported nothing yet.
  await db.execute(sql`insert into event_cursors (sink) values ('lagging')`);

  const first = await maintainEventPartitions(db, { retentionDays: 90 });
  expect(first.created).toContain(oldDay);
  // Today's and the next days' partitions were made by the migration already (or by this run).
  const today = `events_p${dayOf(new Date()).replaceAll("-", "")}`;
  expect(await queryRows(db, sql`select 1 from pg_class where relname = ${today}`)).toHaveLength(1);
  expect(await count("events_default")).toBe(0);
  expect(first.deferred).toEqual([oldDay]);
  expect(await count(`events_p${oldDay.replaceAll("-", "")}`)).toBe(3);

  // The sink catches up: now the day goes, and the log begins the day after it.
  const lagging = { name: "lagging", batch: 2, send: async () => {} };
  expect((await relay(db, lagging)).sent).toBe(5);
  const second = await maintainEventPartitions(db, { retentionDays: 90 });
  expect(second.dropped).toEqual([oldDay]);
  expect(await count("events")).toBe(2);
  const [retention] = await queryRows<{ kept_from: string }>(
    db,
    sql`select to_char(kept_from at time zone 'UTC', 'YYYY-MM-DD') as kept_from from event_retention`,
  );
  expect(retention?.kept_from).toBe(dayOf(new Date(old.getTime() + DAY)));
  // What the sink exported of the dropped day is no difference: the log begins after it.
  expect(await exportsUnlikeTheLog(db)).toEqual([]);
  // Retention 0 keeps every day.
  expect((await maintainEventPartitions(db, { retentionDays: 0 })).dropped).toEqual([]);
});

it("moves the webhook fan-out past the log without reading it while no endpoint is enabled, then fans out to a new one", async () => {
  const { db } = handle;
  await db.execute(
    sql`insert into events (id, type, occurred_at, amount_micros, data)
        select 'idle_' || g, 'call.charged', now(), 70000, '{}' from generate_series(1, 5) g`,
  );
  const fanOut = webhookFanOut();
  expect(await relay(db, fanOut)).toEqual({ sent: 0, leased: true });
  const [cursor] = await queryRows<{ at_end: boolean }>(
    db,
    sql`select (c.txid, c.seq) = (select txid, seq from events order by txid desc, seq desc limit 1) as at_end
        from event_cursors c where sink = 'webhooks'`,
  );
  expect(cursor?.at_end).toBe(true);
  // An endpoint, then an event of a later transaction: fanned out to it.
  const [owner] = await queryRows<{ id: string }>(
    db,
    sql`insert into users (issuer, subject, username, email) values ('t', 'fan', 'fan-out', 'fan@example.test') returning id`,
  );
  await db.execute(
    sql`insert into webhook_endpoints (owner_id, url, event_types, secret) values (${owner?.id}, 'https://example.test/h', '{*}', 'x')`,
  );
  await db.execute(
    sql`insert into events (id, type, occurred_at, user_ids, amount_micros, data)
        values ('after_endpoint', 'wallet.topped_up', now(), array[${owner?.id}::uuid], 1, '{}')`,
  );
  expect((await relay(db, fanOut)).sent).toBe(1);
  expect(await count("webhook_deliveries")).toBe(1);
});
