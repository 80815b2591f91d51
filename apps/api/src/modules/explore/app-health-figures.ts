import { type AppHealth, HEALTH_MIN_CALLS } from "@promptmint/contracts";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { utcDay } from "../analytics/rollups.ts";
import { NOT_THE_APPS } from "../events/app-health.ts";

/** The health window: the last 30 UTC days, today included. */
export const HEALTH_WINDOW_DAYS = 30;

/** The window's first day for `today` (YYYY-MM-DD). */
export function windowStart(today: string): string {
  const start = new Date(`${today}T00:00:00Z`);
  start.setUTCDate(start.getUTCDate() - (HEALTH_WINDOW_DAYS - 1));
  return utcDay(start);
}

/** A Postgres uuid[] literal of ids the database gave (never user input). */
const idArray = (ids: string[]) => `{${ids.join(",")}}`;

interface Counts {
  calls: number;
  errors: number;
  appFailures: number;
  medianLatencyMs: number | null;
}

/**
 * The measured health of apps over 30 days (docs/decisions/081), from the rollups only: calls and
 * failures from app_daily_stats, failures the app caused from app_daily_errors (every error type
 * but the caller's and payment's: NOT_THE_APPS, as the health alerts judge), the median latency of
 * answered calls from the app_daily_latency histogram (the lower median: the first bucket at which
 * half the calls are counted). Eval traffic is in none of them (decision 078).
 */
export async function healthOfApps(
  db: Database,
  applicationIds: string[],
  today: string = utcDay(new Date()),
): Promise<Map<string, AppHealth>> {
  const found = new Map<string, AppHealth>();
  if (applicationIds.length === 0) return found;
  const ids = idArray(applicationIds);
  const from = windowStart(today);
  const excluded = sql.join(
    NOT_THE_APPS.map((type) => sql`${type}`),
    sql`, `,
  );
  const [totals, failures, medians] = await Promise.all([
    queryRows<{ id: string; calls: number; errors: number }>(
      db,
      sql`select application_id as id, sum(invocations)::float8 as calls, sum(errors)::float8 as errors
          from app_daily_stats where application_id = any(${ids}::uuid[]) and day >= ${from}::date
          group by 1`,
    ),
    queryRows<{ id: string; failures: number }>(
      db,
      sql`select application_id as id, sum(count)::float8 as failures
          from app_daily_errors where application_id = any(${ids}::uuid[]) and day >= ${from}::date
            and error_type not in (${excluded})
          group by 1`,
    ),
    queryRows<{ id: string; latency_ms: number }>(
      db,
      sql`with buckets as (
            select application_id, latency_ms, sum(calls)::bigint as calls
            from app_daily_latency where application_id = any(${ids}::uuid[]) and day >= ${from}::date
            group by 1, 2),
          running as (
            select application_id, latency_ms,
              sum(calls) over (partition by application_id order by latency_ms) as below,
              sum(calls) over (partition by application_id) as total
            from buckets)
          select distinct on (application_id) application_id as id, latency_ms
          from running where below * 2 >= total order by application_id, latency_ms`,
    ),
  ]);
  const totalsOf = new Map(totals.map((row) => [row.id, row]));
  const failuresOf = new Map(failures.map((row) => [row.id, row.failures]));
  const medianOf = new Map(medians.map((row) => [row.id, row.latency_ms]));
  for (const id of applicationIds)
    found.set(
      id,
      healthFrom({
        calls: totalsOf.get(id)?.calls ?? 0,
        errors: totalsOf.get(id)?.errors ?? 0,
        appFailures: failuresOf.get(id) ?? 0,
        medianLatencyMs: medianOf.get(id) ?? null,
      }),
    );
  return found;
}

/** The figures of one app's counts; none below HEALTH_MIN_CALLS calls. */
export function healthFrom({ calls, errors, appFailures, medianLatencyMs }: Counts): AppHealth {
  const enough = calls >= HEALTH_MIN_CALLS;
  return {
    calls_30d: calls,
    enough_calls: enough,
    uptime: enough ? 1 - appFailures / calls : null,
    error_rate: enough ? errors / calls : null,
    median_latency_ms: enough ? medianLatencyMs : null,
  };
}
