import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../../db/client.ts";
import { centsToMicros, splitFee } from "../money.ts";

/** An included call taken from a plan: the subscription and the period it was counted in. */
export interface IncludedCall {
  subscriptionId: string;
  /** The period's start as PostgreSQL wrote it (microseconds: a JS Date would round it). */
  periodStart: string;
  /** The call it was taken for, when taken before the call ran (an `included_calls` row). */
  callId?: string;
}

/**
 * Counts a call against the caller's active plan if it has quota left (one conditional update, so
 * concurrent calls cannot exceed it). The subscription row is locked, never skipped: a call that
 * skipped a row another call was updating would be charged to the wallet while the plan still had
 * calls (decision 025). Taken before a call runs (`reserve`), it is also written down as the
 * call's (`included_calls`), so a crash before the call is recorded cannot keep it: the sweeper
 * gives it back once `reserve.ttlSeconds` passed. Returns what to give back if the call fails.
 */
export async function useIncludedCall(
  db: Database,
  applicationId: string,
  subscriberId: string,
  reserve?: { callId: string; ttlSeconds: number },
): Promise<IncludedCall | undefined> {
  const [row] = await queryRows<{ subscription_id: string; period_start: string }>(
    db,
    sql`with taken as (
          update subscriptions set calls_used = calls_used + 1
          where id = (
            select id from subscriptions
            where application_id = ${applicationId} and subscriber_id = ${subscriberId} and status = 'active'
              and current_period_end > now() and calls_used < calls_included
            order by current_period_end limit 1
            for update)
            and calls_used < calls_included
          returning id, current_period_start
        ), reserved as (
          insert into included_calls (id, subscription_id, period_start, expires_at)
          select ${reserve?.callId ?? null}::uuid, id, current_period_start,
            now() + ${reserve?.ttlSeconds ?? 0}::int * interval '1 second'
          from taken where ${reserve !== undefined}::boolean
          returning 1
        )
        select id as subscription_id, current_period_start::text as period_start from taken`,
  );
  if (!row) return undefined;
  return { subscriptionId: row.subscription_id, periodStart: row.period_start, callId: reserve?.callId };
}

/**
 * Gives back an included call of a call that was not answered, to the period it was taken from
 * (a renewal since then started a new count, which it must not lower), once: a call taken before
 * it ran gives back only while its `included_calls` row is there.
 */
export async function refundIncludedCall(db: Database, taken: IncludedCall): Promise<void> {
  await queryRows(
    db,
    taken.callId
      ? sql`with gone as (delete from included_calls where id = ${taken.callId}::uuid
                          returning subscription_id, period_start)
            update subscriptions s set calls_used = s.calls_used - 1 from gone
            where s.id = gone.subscription_id and s.current_period_start = gone.period_start
              and s.calls_used > 0`
      : sql`update subscriptions set calls_used = calls_used - 1
            where id = ${taken.subscriptionId} and current_period_start = ${taken.periodStart}::timestamptz
              and calls_used > 0`,
  );
}

/**
 * Gives back the included calls that calls in flight on a crashed process took and never
 * recorded (their `included_calls` rows expired: no call can still be recorded against them).
 */
export async function sweepExpiredIncludedCalls(db: Database): Promise<void> {
  await queryRows(
    db,
    sql`with gone as (delete from included_calls where expires_at < now()
                      returning subscription_id, period_start),
        per as (select subscription_id, period_start, count(*)::int as n from gone
                group by subscription_id, period_start)
        update subscriptions s set calls_used = greatest(s.calls_used - per.n, 0) from per
        where s.id = per.subscription_id and s.current_period_start = per.period_start`,
  );
}

/**
 * What the creator is paid for one included call of this subscription's current period, in
 * micros: the period's price (its terms', else the plan's) less the fee, divided by its included
 * calls. A covered call's input is bounded by it (decision 063). Undefined if it is gone.
 */
export async function includedCallShareMicros(
  db: Database,
  subscriptionId: string,
  feePercent: number,
): Promise<number | undefined> {
  const [row] = await queryRows<{ price_cents: number; calls_included: number }>(
    db,
    sql`select coalesce(t.price_cents, p.price_cents) as price_cents, s.calls_included
        from subscriptions s
        join packages p on p.id = s.package_id
        left join plan_terms t on t.id = s.terms_id
        where s.id = ${subscriptionId}`,
  );
  if (!row || row.calls_included <= 0) return undefined;
  const { net } = splitFee(centsToMicros(Number(row.price_cents)), feePercent);
  return Math.floor(net / row.calls_included);
}
