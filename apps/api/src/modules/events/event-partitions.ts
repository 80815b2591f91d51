import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import {
  addDays,
  beginStep,
  dayOf,
  dayPartitions,
  ensureDaysAhead,
  type PartitionMaintenance,
  unlessLockTimeout,
} from "../analytics/invocation-partitions.ts";

/**
 * The event log partitioned and pruned like invocations (decisions 038 and 068): a partition per
 * UTC day of `created_at`, made ahead of time; a day older than the retention is dropped only once
 * every sink's cursor is past every event of it (a sink down for longer keeps its days), and the
 * day it ends is written to `event_retention`, from which reconcile compares facts and exports.
 */
export async function maintainEventPartitions(
  db: Database,
  options: { retentionDays: number; now?: Date },
): Promise<PartitionMaintenance> {
  const today = dayOf(options.now ?? new Date());
  const result: PartitionMaintenance = { created: [], dropped: [], deferred: [] };
  result.created = await ensureDaysAhead(db, "events", today, (day) =>
    db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      if (!(await beginStep(t))) return false;
      const [row] = await queryRows<{ created: boolean }>(
        t,
        sql`select pm_day_partition('events', ${day}::date) as created`,
      );
      return row?.created === true;
    }),
  );
  if (options.retentionDays > 0) {
    const oldestKept = addDays(today, -options.retentionDays);
    for (const partition of await dayPartitions(db, "events")) {
      if (partition.day >= oldestKept) break;
      const dropped = await dropEventPartition(db, partition.name, partition.day).catch(unlessLockTimeout);
      (dropped ? result.dropped : result.deferred).push(partition.day);
      if (!dropped) break; // days are dropped oldest first: the horizon never has a hole
    }
  }
  return result;
}

async function dropEventPartition(db: Database, partition: string, day: string): Promise<boolean> {
  if (!/^events_p\d{8}$/.test(partition)) throw new Error(`not an events day partition: ${partition}`);
  const table = sql.identifier(partition);
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    if (!(await beginStep(t))) return false;
    const [behind] = await queryRows<{ found: boolean }>(
      t,
      sql`select exists (select 1 from ${table} e join event_cursors c
            on (e.txid, e.seq) > (c.txid, c.seq) and (c.types is null or e.type = any(c.types))) as found`,
    );
    if (behind?.found) return false;
    const keptFrom = `${addDays(day, 1)}T00:00:00Z`;
    await t.execute(
      sql`insert into event_retention (id, kept_from) values (true, ${keptFrom}::timestamptz)
          on conflict (id) do update set kept_from = greatest(event_retention.kept_from, excluded.kept_from)`,
    );
    await t.execute(sql`drop table ${table}`);
    return true;
  });
}
