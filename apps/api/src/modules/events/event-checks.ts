import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";

/**
 * The event log's checks, run by reconcile (billing/reconcile.ts): every fact has exactly one event
 * and every event its fact, with the fact's money; and each sink exported exactly the log's events
 * up to its cursor (decision 068).
 */

/** Ledger transaction kinds a person sees: each has a `ledger_<id>` event (migration 0049's trigger). */
export const LEDGER_EVENT_KINDS = [
  "top_up",
  "reversal",
  "subscription",
  "payout",
  "payout_paid",
  "payout_return",
  "x402_credit",
] as const;

/**
 * Where the log begins: days before it were dropped by its retention (event-partitions.ts), and
 * facts and exports are compared from then on.
 */
const KEPT_FROM = sql`coalesce((select kept_from from event_retention), '-infinity'::timestamptz)`;

/** A charged call (still kept) whose last event does not say its charge, or an event without its call. */
export async function callsWithoutTheirEvent(db: Database): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`with latest as (
          select distinct on (data->>'invocation_id') data->>'invocation_id' as inv, amount_micros,
                 coalesce((data->>'charged')::boolean, true) as charged, occurred_at
          from events where type in ('call.charged', 'call.charge_changed')
          order by data->>'invocation_id', txid desc, seq desc),
        calls as (
          select id::text as id, charged_cents, created_at,
                 pm_call_charged(status, charged_cents, hold_id, subscription_id) as charged
          from invocations)
        select coalesce(c.id, l.inv) as id
        from calls c full join latest l on l.inv = c.id
        where (c.id is not null and c.charged and c.created_at >= ${KEPT_FROM}
                 and (l.inv is null or not l.charged or l.amount_micros <> c.charged_cents * 10000))
           or (c.id is not null and not c.charged and l.charged)
           or (c.id is null and l.charged and l.occurred_at >= (select min(created_at) from invocations))
        order by 1 limit 100`,
  );
  return rows.map((row) => row.id);
}

/** A visible ledger movement without its event (or with another amount), or an event without it. */
export async function ledgerWithoutTheirEvent(db: Database): Promise<string[]> {
  const kinds = sql.join(
    LEDGER_EVENT_KINDS.map((kind) => sql`${kind}`),
    sql`, `,
  );
  const rows = await queryRows<{ id: string }>(
    db,
    sql`with moved as (
          select t.id, coalesce(sum(le.amount_micros) filter (where le.amount_micros > 0), 0) as micros
          from ledger_transactions t left join ledger_entries le on le.transaction_id = t.id
          where t.kind in (${kinds}) and t.created_at >= ${KEPT_FROM} group by t.id),
        logged as (select substr(id, 8) as id, amount_micros from events
                   where id like 'ledger\\_%' and occurred_at >= ${KEPT_FROM})
        select coalesce(m.id::text, l.id) as id
        from moved m full join logged l on l.id = m.id::text
        where m.id is null or l.id is null or l.amount_micros <> m.micros
        order by 1 limit 100`,
  );
  return rows.map((row) => row.id);
}

/** Event ids written more than once. */
export async function duplicateEvents(db: Database): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select id from events group by id having count(*) > 1 order by id limit 100`,
  );
  return rows.map((row) => row.id);
}

/** A sink's export that differs from the log: per sink, day and type, events and money. */
export interface ExportMismatch {
  sink: string;
  day: string;
  type: string;
  logged: number;
  exported: number;
  loggedMicros: number;
  exportedMicros: number;
}

export async function exportsUnlikeTheLog(db: Database): Promise<ExportMismatch[]> {
  const rows = await queryRows<{
    sink: string;
    day: string;
    type: string;
    logged: string;
    exported: string;
    logged_micros: string;
    exported_micros: string;
  }>(
    db,
    sql`with logged as (
          select c.sink, (e.occurred_at at time zone 'UTC')::date as day, e.type,
                 count(*) as events, sum(e.amount_micros) as micros
          from event_cursors c
          join events e on (e.txid, e.seq) <= (c.txid, c.seq) and (c.types is null or e.type = any(c.types))
          group by 1, 2, 3)
        select coalesce(l.sink, x.sink) as sink, coalesce(l.day, x.day)::text as day,
               coalesce(l.type, x.type) as type,
               coalesce(l.events, 0)::text as logged, coalesce(x.events, 0)::text as exported,
               coalesce(l.micros, 0)::text as logged_micros, coalesce(x.amount_micros, 0)::text as exported_micros
        from logged l full join event_exports x on x.sink = l.sink and x.day = l.day and x.type = l.type
        where (coalesce(l.events, 0) <> coalesce(x.events, 0) or coalesce(l.micros, 0) <> coalesce(x.amount_micros, 0))
          and coalesce(l.day, x.day) >= (${KEPT_FROM} at time zone 'UTC')::date
        order by 1, 2, 3 limit 100`,
  );
  return rows.map((row) => ({
    sink: row.sink,
    day: row.day,
    type: row.type,
    logged: Number(row.logged),
    exported: Number(row.exported),
    loggedMicros: Number(row.logged_micros),
    exportedMicros: Number(row.exported_micros),
  }));
}
