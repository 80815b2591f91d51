import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { PAID_BY_X402_SQL } from "./agent-payments/x402-checks.ts";
import { PLAN_PAYMENT_WAIT_MS } from "./plan-payments.ts";

/**
 * How often each server closes the holds a crashed process left behind (app.ts). A hold still
 * open longer than this past its expiry means no sweeper is closing it.
 */
export const HOLD_SWEEP_INTERVAL_MS = 30_000;

/** A plan period and how many included calls it counted against what it allows or recorded. */
export interface PeriodCount {
  subscriptionId: string;
  periodStart: string;
  /** Successful invocations that name this subscription and period. */
  counted: number;
  /** `calls_included` (overused) or `calls_used` (miscounted) of the subscription. */
  expected: number;
}

/**
 * The reconcile's checks of calls against charges (docs/decisions/025): every answered call is
 * charged exactly once, from a hold or as one included call of a plan's period, or is free.
 */
export interface CallChecks {
  /**
   * Successful invocations nothing paid for: neither a hold, nor a plan, nor a per-call settle
   * (calls from before decision 020), although the call was not free. A call is free when its
   * caller owns the app (not embedded traffic, which the owner pays, decision 009) or the app's
   * price is 0. The price is the app's current one: an uncharged call has no price of its own.
   */
  unchargedSuccesses: string[];
  /**
   * Invocations paid twice or described inconsistently: both a hold and a plan, a hold but no
   * price (except embedded calls, which record 0, decision 009), or a plan and a price.
   */
  doubleCovered: string[];
  /**
   * Plan periods that covered more calls than they allow: each period by the terms it started
   * under (`subscription_periods`), never the plan's current ones (decision 044). Periods that
   * ended before migration 0033 have no record and are not judged.
   */
  overusedPeriods: PeriodCount[];
  /**
   * Periods paid by a ledger transaction that took something other than their terms' price
   * (`counted` and `expected` in cents): a period is charged by the terms it started under.
   */
  mischargedPeriods: PeriodCount[];
  /**
   * Subscriptions whose current period's `calls_used` differs from the calls counted in it: its
   * invocations, and the included calls taken for calls in flight (`included_calls`).
   */
  miscountedPeriods: PeriodCount[];
  /** Holds still open more than a sweep interval after they expired. */
  overdueHolds: string[];
  /**
   * Succeeded payments not consumed exactly once (decision 023): a top-up not credited, a plan
   * payment neither subscribed with nor credited once its wait (and a sweep) passed, or one whose
   * consumer (subscription, wallet credit) does not exist.
   */
  unconsumedPayments: string[];
}

/** Embedded traffic: the owner calls on a visitor's behalf (end user `embed:<visitor>`) and pays. */
const embedded = sql`(i.caller_user_id = a.owner_id and i.end_user like 'embed:%')`;
/**
 * A call its creator sponsored (a free trial, promotional credit: decision 080): paid from the
 * creator's hold, charged 0 to its caller. Its row is written before the call is paid for.
 */
const sponsored = sql`exists (select 1 from sponsored_calls sc where sc.call_id = i.id)`;

/** Every call check at once (the reconcile runs them as entries of its list, reconcile.ts). */
export async function checkCalls(db: Database): Promise<CallChecks> {
  const [
    unchargedSuccessesFound,
    doubleCoveredFound,
    overusedPeriodsFound,
    mischargedPeriodsFound,
    miscountedPeriodsFound,
    overdueHoldsFound,
    unconsumedPaymentsFound,
  ] = await Promise.all([
    unchargedSuccesses(db),
    doubleCovered(db),
    overusedPeriods(db),
    mischargedPeriods(db),
    miscountedPeriods(db),
    overdueHolds(db),
    unconsumedPayments(db),
  ]);
  return {
    unchargedSuccesses: unchargedSuccessesFound,
    doubleCovered: doubleCoveredFound,
    overusedPeriods: overusedPeriodsFound,
    mischargedPeriods: mischargedPeriodsFound,
    miscountedPeriods: miscountedPeriodsFound,
    overdueHolds: overdueHoldsFound,
    unconsumedPayments: unconsumedPaymentsFound,
  };
}

export async function unchargedSuccesses(db: Database): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select i.id from invocations i join applications a on a.id = i.application_id
            where i.status = 'success' and i.hold_id is null and i.subscription_id is null
              and (i.charged_cents > 0 or (a.price_cents > 0
                   and (i.caller_user_id is distinct from a.owner_id or ${embedded})))
              and not exists (select 1 from ledger_transactions t
                              where t.kind = 'settle' and t.reference = i.id::text)
              and not ${sql.raw(PAID_BY_X402_SQL)}
            order by i.created_at`,
  );
  return rows.map((row) => row.id);
}

export async function doubleCovered(db: Database): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select i.id from invocations i join applications a on a.id = i.application_id
            where (i.hold_id is not null and i.subscription_id is not null)
               or (i.hold_id is not null and i.charged_cents = 0 and not ${embedded} and not ${sponsored})
               or (i.subscription_id is not null and i.charged_cents > 0)
            order by i.created_at`,
  );
  return rows.map((row) => row.id);
}

export function overusedPeriods(db: Database): Promise<PeriodCount[]> {
  return periodRows(
    db,
    sql`select c.subscription_id, c.plan_period_start::text as period_start,
              sum(c.calls)::int as counted, min(p.calls_included) as expected
            from (select subscription_id, plan_period_start, count(*) as calls from invocations
                  where status = 'success' and subscription_id is not null
                  group by subscription_id, plan_period_start
                  union all
                  select subscription_id, plan_period_start, calls from dropped_plan_calls) c
            join subscription_periods p
              on p.subscription_id = c.subscription_id and p.period_start = c.plan_period_start
            group by c.subscription_id, c.plan_period_start
            having sum(c.calls) > min(p.calls_included)`,
  );
}

export function mischargedPeriods(db: Database): Promise<PeriodCount[]> {
  return periodRows(
    db,
    sql`select p.subscription_id, p.period_start::text as period_start,
              (-sum(e.amount_micros) filter (where e.amount_micros < 0) / 10000)::int as counted,
              min(t.price_cents) as expected
            from subscription_periods p
            join plan_terms t on t.id = p.terms_id
            join ledger_entries e on e.transaction_id = p.transaction_id
            group by p.subscription_id, p.period_start
            having -sum(e.amount_micros) filter (where e.amount_micros < 0) <> min(t.price_cents)::bigint * 10000`,
  );
}

export function miscountedPeriods(db: Database): Promise<PeriodCount[]> {
  return periodRows(
    db,
    // Counted: the period's invocations (those of dropped days as folded before the drop,
    // decision 038) and the included calls taken for calls not yet recorded (in flight, or
    // left by a crash until the sweeper gives them back).
    sql`select s.id as subscription_id, s.current_period_start::text as period_start,
              (count(i.id) + r.taken + d.calls)::int as counted, s.calls_used as expected
            from subscriptions s
            cross join lateral (select count(*)::int as taken from included_calls c
                                where c.subscription_id = s.id
                                  and c.period_start = s.current_period_start) r
            cross join lateral (select coalesce(sum(calls), 0)::int as calls from dropped_plan_calls p
                                where p.subscription_id = s.id
                                  and p.plan_period_start = s.current_period_start) d
            left join invocations i on i.subscription_id = s.id
              and i.plan_period_start = s.current_period_start and i.status = 'success'
            group by s.id, r.taken, d.calls having count(i.id) + r.taken + d.calls <> s.calls_used`,
  );
}

export async function overdueHolds(db: Database): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select id from holds
            where status = 'held'
              and expires_at < now() - make_interval(secs => ${HOLD_SWEEP_INTERVAL_MS / 1000})
            order by expires_at`,
  );
  return rows.map((row) => row.id);
}

export async function unconsumedPayments(db: Database): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select p.id from payments p
            where p.status = 'succeeded' and (
              (p.consumed_kind is null and (p.purpose = 'top_up' or p.created_at < now()
                - make_interval(secs => ${(PLAN_PAYMENT_WAIT_MS + HOLD_SWEEP_INTERVAL_MS) / 1000})))
              or (p.consumed_kind = 'subscription'
                  and not exists (select 1 from subscriptions s where s.id::text = p.consumed_ref))
              or (p.consumed_kind = 'wallet'
                  and not exists (select 1 from ledger_transactions t where t.id::text = p.consumed_ref)))
            order by p.created_at`,
  );
  return rows.map((row) => row.id);
}

async function periodRows(db: Database, query: ReturnType<typeof sql>): Promise<PeriodCount[]> {
  const rows = await queryRows<{
    subscription_id: string;
    period_start: string | null;
    counted: number;
    expected: number;
  }>(db, query);
  return rows.map((row) => ({
    subscriptionId: row.subscription_id,
    periodStart: row.period_start ?? "(no period)",
    counted: Number(row.counted),
    expected: Number(row.expected),
  }));
}
