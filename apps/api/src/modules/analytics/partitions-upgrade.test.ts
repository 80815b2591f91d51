import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { legacyPayerCreatorApp } from "../../test/legacy-ledger.ts";
import { useDatabaseBefore } from "../../test/upgrade-database.ts";
import {
  invocationPartitions,
  maintainInvocationPartitions,
  PARTITION_DAYS_AHEAD,
} from "./invocation-partitions.ts";

// Migration 0028 (issue 20) on a database with calls in the single invocations table: every call
// is kept, each in the partition of its UTC day, the days ahead exist, and the key is (id, time).

const upgraded = useDatabaseBefore("0028_invocation_partitions");

const DAY_MS = 86_400_000;
const dayOf = (at: Date) => at.toISOString().slice(0, 10);

it("keeps every call, each in its day's partition, with partitions for the days ahead", async () => {
  const { payer, app } = await legacyPayerCreatorApp(upgraded.db, 7);
  const now = new Date();
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const times = [
    new Date(today.getTime() - 40 * DAY_MS + 1_000),
    new Date(today.getTime() - 2 * DAY_MS - 1),
    new Date(today.getTime() - 2 * DAY_MS),
    now,
  ];
  for (const [n, at] of times.entries())
    await queryRows(
      upgraded.db,
      sql`insert into invocations (application_id, caller_user_id, mode, status, latency_ms, charged_cents,
            fee_micros, model_cost_micros, model_cost_deducted_micros, created_at)
          select ${app.id}, ${payer.id}, 'completion', 'success', 10 + ${n}::int, 7, 7000, 100, 100,
            ${at.toISOString()}::timestamptz
          from generate_series(1, 3)`,
    );
  const before = await queryRows<{ id: string; created_at: string; latency_ms: number }>(
    upgraded.db,
    sql`select id, created_at::text, latency_ms from invocations order by id`,
  );
  expect(before).toHaveLength(12);

  await upgraded.upgrade();

  const [kind] = await queryRows<{ partitioned: boolean }>(
    upgraded.db,
    sql`select exists (select 1 from pg_partitioned_table t join pg_class c on c.oid = t.partrelid
                       where c.relname = 'invocations') as partitioned`,
  );
  expect(kind?.partitioned).toBe(true);
  const after = await queryRows<{ id: string; created_at: string; latency_ms: number; part: string }>(
    upgraded.db,
    sql`select id, created_at::text, latency_ms, tableoid::regclass::text as part from invocations order by id`,
  );
  expect(after.map(({ part: _, ...row }) => row)).toEqual(before);
  for (const row of after)
    expect(row.part).toBe(`invocations_p${dayOf(new Date(row.created_at)).replaceAll("-", "")}`);
  const [totals] = await queryRows<{ fee: string; cost: string }>(
    upgraded.db,
    sql`select sum(fee_micros)::text as fee, sum(model_cost_micros)::text as cost from invocations`,
  );
  expect(totals).toEqual({ fee: "84000", cost: "1200" });

  const days = (await invocationPartitions(upgraded.db)).map((p) => p.day);
  expect(days[0]).toBe(dayOf(times[0] as Date));
  expect(days).toHaveLength(40 + PARTITION_DAYS_AHEAD + 1);
  expect(days.at(-1)).toBe(dayOf(new Date(today.getTime() + PARTITION_DAYS_AHEAD * DAY_MS)));

  // The key is the call's id and time: the same call again is refused, as before the upgrade.
  const [first] = after;
  await expect(
    queryRows(
      upgraded.db,
      sql`insert into invocations (id, application_id, mode, status, latency_ms, created_at)
          values (${first?.id}::uuid, ${app.id}, 'completion', 'error', 1, ${first?.created_at}::timestamptz)`,
    ),
  ).rejects.toThrow();

  // The first maintenance with a 30-day retention drops the days 31 to 40 days old (the first
  // with calls, the others empty), and keeps the rest.
  const done = await maintainInvocationPartitions(upgraded.db, { retentionDays: 30 });
  expect(done.dropped).toEqual(
    Array.from({ length: 10 }, (_, i) => dayOf(new Date(today.getTime() - (40 - i) * DAY_MS))),
  );
  expect((await invocationPartitions(upgraded.db))[0]?.day).toBe(
    dayOf(new Date(today.getTime() - 30 * DAY_MS)),
  );
  const [left] = await queryRows<{ n: number }>(upgraded.db, sql`select count(*)::int as n from invocations`);
  expect(left?.n).toBe(9);
});
