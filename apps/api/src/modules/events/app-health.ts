import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";

/**
 * App health (decision 068): an app whose calls failed far more often in the last complete
 * 15-minute window than before gets one `app.error_rate_jumped` event for that window (the row in
 * `app_health_alerts` writes it; its key makes the check idempotent across processes and runs).
 *
 * A jump: at least MIN_CALLS calls in the window, at least MIN_RATE of them failed for the app's own
 * reasons (upstream errors, timeouts, bad output; not the caller's payment or departure), and the
 * rate is at least twice the app's rate over the rest of that day and the day before, plus five
 * points. Windows come from the invocations' (application_id, created_at) index; the baseline
 * from the daily rollups, so a busy app's day is never scanned.
 */
export const HEALTH_WINDOW_MS = 15 * 60_000;
const MIN_CALLS = 20;
const MIN_RATE = 0.2;

/** Errors a caller or payment caused, which say nothing of the app's health. */
export const NOT_THE_APPS = ["payment_failed", "payment_pending", "caller_left"];

export async function checkAppHealth(db: Database, now = new Date()): Promise<number> {
  const end = new Date(Math.floor(now.getTime() / HEALTH_WINDOW_MS) * HEALTH_WINDOW_MS);
  const start = new Date(end.getTime() - HEALTH_WINDOW_MS);
  const excluded = sql.join(
    NOT_THE_APPS.map((type) => sql`${type}`),
    sql`, `,
  );
  const rows = await queryRows<{ application_id: string }>(
    db,
    sql`with active as (
          select distinct application_id from app_daily_stats
          where day >= (${start.toISOString()}::timestamptz at time zone 'UTC')::date
            and last_invocation_at >= ${start.toISOString()}::timestamptz),
        windowed as (
          select i.application_id, count(*)::int as calls,
                 count(*) filter (where i.status = 'error')::int as all_errors,
                 count(*) filter (where i.status = 'error' and coalesce(i.error_type, '') not in (${excluded}))::int as errors
          from active a join invocations i on i.application_id = a.application_id
            and i.created_at >= ${start.toISOString()}::timestamptz and i.created_at < ${end.toISOString()}::timestamptz
            -- No eval traffic, as the rollups of the baseline count (docs/decisions/078).
            and i.purpose not in ('eval', 'online_eval')
          group by 1),
        baseline as (
          select s.application_id, sum(s.invocations)::bigint as calls, sum(s.errors)::bigint as errors
          from app_daily_stats s join windowed w on w.application_id = s.application_id
          where s.day >= (${start.toISOString()}::timestamptz at time zone 'UTC')::date - 1
          group by 1),
        judged as (
          select w.application_id, w.calls, w.errors, w.errors::float8 / w.calls as rate,
                 -- The rest of the two days: the window's own calls taken out.
                 coalesce((b.errors - w.all_errors)::float8 / nullif(b.calls - w.calls, 0), 0) as baseline_rate
          from windowed w left join baseline b on b.application_id = w.application_id)
        insert into app_health_alerts (application_id, window_start, window_end, calls, errors, error_rate, baseline_rate)
        select application_id, ${start.toISOString()}::timestamptz, ${end.toISOString()}::timestamptz, calls, errors,
               rate, baseline_rate
        from judged
        where calls >= ${MIN_CALLS} and rate >= ${MIN_RATE} and rate >= 2 * baseline_rate + 0.05
        on conflict (application_id, window_start) do nothing
        returning application_id`,
  );
  return rows.length;
}
