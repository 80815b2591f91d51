import { sql } from "drizzle-orm";
import { type Database, NO_ROW, preparedStatement, queryRows } from "../../../db/client.ts";

/**
 * A call a creator sponsors (docs/decisions/080): a consumer's trial call or a call paid with
 * promotional credit. The invariant: a grant never goes below zero and pays each call at most
 * once. Taking the call (one trial call, or its price from the credit) and writing the call's
 * `sponsored_calls` row is one statement: two calls in any process cannot both take the last
 * call or the last credit (the grant's CHECKs stand behind it). The row is spent once the call is
 * recorded paid by its creator, or deleted and given back to the grant when it is not; a row a
 * crashed process left is settled by the sweeper from the call's invocation.
 */

export interface SponsoredCall {
  grantId: string;
  kind: "trial" | "promotion";
}

/**
 * The take, in one statement every paid call of a consumer runs (a named prepared statement,
 * planned once per connection: decision 012): the covering grant is locked, decremented under its
 * condition, and the call's row written; nothing when no grant covers the call.
 */
const takeStatement = preparedStatement<{ grant_id: string; kind: "trial" | "promotion" }>(
  "pm_take_sponsored_call_v1",
  `with g as (
     select id, kind from sponsored_grants
     where consumer_id = $1::uuid and creator_id = $2::uuid
       and (application_id = $3::uuid or application_id is null)
       and (expires_at is null or expires_at > now())
       and ((kind = 'trial' and calls_left > 0) or (kind = 'promotion' and credit_left_micros >= $4::bigint))
     order by (kind = 'trial') desc, expires_at nulls last, created_at
     limit 1
     for update
   ), taken as (
     update sponsored_grants s set
       calls_left = case when g.kind = 'trial' then s.calls_left - 1 else s.calls_left end,
       credit_left_micros = case when g.kind = 'promotion'
         then s.credit_left_micros - $4::bigint else s.credit_left_micros end
     from g where s.id = g.id
     returning s.id, s.kind
   )
   insert into sponsored_calls (call_id, grant_id, calls, micros, state, expires_at)
   select $5::uuid, id,
     case when kind = 'trial' then 1 else 0 end,
     case when kind = 'promotion' then $4::bigint else 0 end,
     'reserved', now() + $6::int * interval '1 second'
   from taken
   returning grant_id, (select kind from taken) as kind`,
  { params: () => [NO_ROW, NO_ROW, NO_ROW, 1, NO_ROW, 60] },
);

/**
 * Takes one call of the consumer's trial of the app, or the price from their promotional credit
 * on it (the trial first, then the credit that expires first); undefined when no grant covers it.
 */
export async function takeSponsoredCall(
  db: Database,
  call: {
    callId: string;
    consumerId: string;
    creatorId: string;
    applicationId: string;
    priceMicros: number;
    ttlSeconds: number;
  },
): Promise<SponsoredCall | undefined> {
  const [row] = await takeStatement(db, [
    call.consumerId,
    call.creatorId,
    call.applicationId,
    call.priceMicros,
    call.callId,
    call.ttlSeconds,
  ]);
  return row ? { grantId: row.grant_id, kind: row.kind } : undefined;
}

/**
 * The call was recorded paid by its creator: its row is spent, keeping `paidMicros` of the credit
 * (a price lowered meanwhile gives the difference back to the grant).
 */
export async function spendSponsoredCall(db: Database, callId: string, paidMicros: number): Promise<void> {
  await queryRows(
    db,
    sql`with old as (
          select call_id, grant_id, micros from sponsored_calls
          where call_id = ${callId}::uuid and state = 'reserved' for update
        ), spent as (
          update sponsored_calls s set state = 'spent', micros = least(old.micros, ${paidMicros}::bigint)
          from old where s.call_id = old.call_id
          returning s.call_id
        )
        update sponsored_grants g
        set credit_left_micros = g.credit_left_micros + (old.micros - ${paidMicros}::bigint)
        from old where g.id = old.grant_id and g.kind = 'promotion' and old.micros > ${paidMicros}::bigint
          and exists (select 1 from spent)`,
  );
}

/** The call was not paid by its creator: its row goes, and what it took goes back to the grant. Once. */
export async function giveBackSponsoredCall(db: Database, callId: string): Promise<void> {
  await queryRows(
    db,
    sql`with gone as (
          delete from sponsored_calls where call_id = ${callId}::uuid and state = 'reserved'
          returning grant_id, calls, micros
        )
        update sponsored_grants g set
          calls_left = case when g.kind = 'trial' then g.calls_left + gone.calls else g.calls_left end,
          credit_left_micros = case when g.kind = 'promotion'
            then g.credit_left_micros + gone.micros else g.credit_left_micros end
        from gone where g.id = gone.grant_id`,
  );
}

/**
 * Settles the rows of calls that are over (past their deadline and margin) and were never settled
 * (their process crashed): a call recorded as answered and paid from its creator's hold is spent;
 * any other gives back what it took.
 */
export async function sweepSponsoredCalls(db: Database): Promise<void> {
  await queryRows(
    db,
    sql`with due as (
          select call_id, grant_id, calls, micros, expires_at from sponsored_calls
          where state = 'reserved' and expires_at < now()
          order by expires_at limit 500
          for update skip locked
        ), paid as (
          -- A call is recorded before its row expires, after it was taken: a day either side
          -- bounds the partitions looked in (decision 038).
          select d.call_id from due d join invocations i on i.id = d.call_id
          where i.status = 'success' and i.hold_id is not null
            and i.created_at > d.expires_at - interval '1 day' and i.created_at < d.expires_at + interval '1 day'
        ), spent as (
          update sponsored_calls set state = 'spent' where call_id in (select call_id from paid)
          returning 1
        ), gone as (
          delete from sponsored_calls
          where call_id in (select call_id from due) and call_id not in (select call_id from paid)
          returning grant_id, calls, micros
        ), back as (
          select grant_id, sum(calls)::int as calls, sum(micros)::bigint as micros from gone group by grant_id
        )
        update sponsored_grants g set
          calls_left = case when g.kind = 'trial' then g.calls_left + back.calls else g.calls_left end,
          credit_left_micros = case when g.kind = 'promotion'
            then g.credit_left_micros + back.micros else g.credit_left_micros end
        from back where g.id = back.grant_id`,
  );
}
