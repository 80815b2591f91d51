import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { databaseErrorOf } from "../../lib/database-errors.ts";

/** Days of partitions created ahead of today, so a day's calls never wait for its partition. */
export const PARTITION_DAYS_AHEAD = 7;

/**
 * How long the maintenance waits for a lock on `invocations` (attach, drop) before giving up until
 * its next run: recording waits behind a queued lock request, so the wait must stay short.
 */
const LOCK_TIMEOUT = "1s";

const PARTITION_NAME = /^invocations_p(\d{4})(\d{2})(\d{2})$/;

/** The advisory lock one maintenance step holds: several server processes never run one together. */
const MAINTENANCE_LOCK = 0x1e7a_0038;

/** Starts a maintenance step: its lock timeout, and whether it has the step to itself. */
export async function beginStep(tx: Database): Promise<boolean> {
  await queryRows(tx, sql.raw(`set local lock_timeout = '${LOCK_TIMEOUT}'`));
  const [row] = await queryRows<{ locked: boolean }>(
    tx,
    sql`select pg_try_advisory_xact_lock(${MAINTENANCE_LOCK}) as locked`,
  );
  return row?.locked === true;
}

export interface PartitionMaintenance {
  /** Days (YYYY-MM-DD) whose partition was created by this run. */
  created: string[];
  /** Days whose partition was dropped (older than the retention). */
  dropped: string[];
  /** Days older than the retention kept for now: calls whose model cost is still to be posted, or a lock not had. */
  deferred: string[];
}

export function dayOf(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function addDays(day: string, days: number): string {
  return dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000));
}

/** The day partitions of `invocations` (not the default one), oldest first. */
export function invocationPartitions(db: Database): Promise<{ name: string; day: string }[]> {
  return dayPartitions(db, "invocations");
}

/** The day partitions (`<parent>_pYYYYMMDD`) of a table partitioned by day, oldest first. */
export async function dayPartitions(db: Database, parent: string): Promise<{ name: string; day: string }[]> {
  const pattern = new RegExp(`^${parent}_p(\\d{4})(\\d{2})(\\d{2})$`);
  const rows = await queryRows<{ name: string }>(
    db,
    sql`select c.relname as name from pg_inherits i
          join pg_class c on c.oid = i.inhrelid
          join pg_class p on p.oid = i.inhparent
        where p.relname = ${parent} and p.relnamespace = current_schema()::regnamespace`,
  );
  return rows
    .flatMap((row) => {
      const match = pattern.exec(row.name);
      return match ? [{ name: row.name, day: `${match[1]}-${match[2]}-${match[3]}` }] : [];
    })
    .sort((a, b) => a.day.localeCompare(b.day));
}

/** Creates the partition of one UTC day if missing (moving its calls out of the default partition). */
export async function ensureInvocationPartition(db: Database, day: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    if (!(await beginStep(t))) return false;
    const [row] = await queryRows<{ created: boolean }>(
      t,
      sql`select pm_invocations_partition(${day}::date) as created`,
    );
    return row?.created === true;
  });
}

/**
 * Folds what the money checks need of one day's calls into the `dropped_*` tables and drops the
 * day's partition, in one transaction: a crash leaves both or neither (a day is never folded
 * twice). The folded columns are written when a call is recorded and never after, so the fold
 * needs no lock against recording; only the drop takes one (briefly, with LOCK_TIMEOUT). A day
 * with calls whose model cost is still to be taken from their creator (billing/model-costs.ts) is
 * kept until the sweep has posted it. Answers whether the day was dropped.
 */
export async function dropInvocationPartition(db: Database, partition: string): Promise<boolean> {
  if (!PARTITION_NAME.test(partition)) throw new Error(`not an invocations day partition: ${partition}`);
  const table = sql.identifier(partition);
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    // Another process maintaining now: this one leaves the day for its next run.
    if (!(await beginStep(t))) return false;
    const [due] = await queryRows<{ found: boolean }>(
      t,
      sql`select exists (select 1 from ${table}
            where model_cost_micros > model_cost_deducted_micros and model_cost_posted_at is null) as found`,
    );
    if (due?.found) return false;
    await queryRows(
      t,
      sql`insert into dropped_hold_calls as d (hold_id, calls, fee_micros, model_cost_deducted_micros)
          select hold_id, count(*), sum(fee_micros), sum(model_cost_deducted_micros)
          from ${table} where hold_id is not null group by hold_id
          on conflict (hold_id) do update set calls = d.calls + excluded.calls,
            fee_micros = d.fee_micros + excluded.fee_micros,
            model_cost_deducted_micros = d.model_cost_deducted_micros + excluded.model_cost_deducted_micros`,
    );
    await queryRows(
      t,
      sql`insert into dropped_payer_calls as d (caller_user_id, application_id, day, calls, charged_cents, last_at)
          select caller_user_id, application_id, (created_at at time zone 'UTC')::date, count(*),
            sum(charged_cents), max(created_at)
          from ${table} where caller_user_id is not null and hold_id is not null and charged_cents > 0
          group by 1, 2, 3
          on conflict (caller_user_id, application_id, day) do update set calls = d.calls + excluded.calls,
            charged_cents = d.charged_cents + excluded.charged_cents, last_at = greatest(d.last_at, excluded.last_at)`,
    );
    await queryRows(
      t,
      sql`insert into dropped_plan_calls as d (subscription_id, plan_period_start, calls)
          select subscription_id, plan_period_start, count(*)
          from ${table} where status = 'success' and subscription_id is not null and plan_period_start is not null
          group by 1, 2
          on conflict (subscription_id, plan_period_start) do update set calls = d.calls + excluded.calls`,
    );
    await queryRows(t, sql`drop table ${table}`);
    return true;
  });
}

/**
 * Keeps `invocations` partitioned for the days to come and within its retention (docs/decisions/038):
 * moves calls the default partition caught into partitions of their own days, creates the
 * partitions of today and the next PARTITION_DAYS_AHEAD days, and, when `retentionDays` > 0, drops
 * the partitions of days entirely older than `retentionDays` days before today (UTC). Rollups are
 * never touched. Each step is its own transaction; one that cannot have its lock now is retried
 * by the next run (the server runs this every 10 minutes).
 */
export async function maintainInvocationPartitions(
  db: Database,
  options: { retentionDays: number; now?: Date },
): Promise<PartitionMaintenance> {
  const today = dayOf(options.now ?? new Date());
  const result: PartitionMaintenance = { created: [], dropped: [], deferred: [] };
  result.created = await ensureDaysAhead(db, "invocations", today, (day) =>
    ensureInvocationPartition(db, day),
  );
  if (options.retentionDays > 0) {
    // The oldest day kept: today and the `retentionDays` days before it.
    const oldestKept = addDays(today, -options.retentionDays);
    for (const partition of await invocationPartitions(db)) {
      if (partition.day >= oldestKept) break;
      const dropped = await dropInvocationPartition(db, partition.name).catch(unlessLockTimeout);
      (dropped ? result.dropped : result.deferred).push(partition.day);
    }
  }
  return result;
}

/**
 * Makes the partitions of the days the default partition caught calls or events of, and of today
 * and the PARTITION_DAYS_AHEAD days after it, with `ensure` (one transaction each); answers the
 * days it created. A day whose lock was not had now is left for the next run.
 */
export async function ensureDaysAhead(
  db: Database,
  parent: "invocations" | "events",
  today: string,
  ensure: (day: string) => Promise<boolean>,
): Promise<string[]> {
  const stray = await queryRows<{ day: string }>(
    db,
    sql`select distinct to_char((created_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day
        from ${sql.identifier(`${parent}_default`)} order by 1`,
  );
  const days = new Set(stray.map((row) => row.day));
  for (let ahead = 0; ahead <= PARTITION_DAYS_AHEAD; ahead += 1) days.add(addDays(today, ahead));
  const created: string[] = [];
  for (const day of [...days].sort()) if (await ensure(day).catch(unlessLockTimeout)) created.push(day);
  return created;
}

/** A lock not had within LOCK_TIMEOUT (55P03) is "not now": the next run tries again. */
export function unlessLockTimeout(error: unknown): false {
  if (databaseErrorOf(error)?.code === "55P03") return false;
  throw error;
}
