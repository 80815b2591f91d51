import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { NO_APP } from "./relay.ts";
import { FANOUT_SINK } from "./webhooks.ts";

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

/** A sink's export that differs from the log: per sink, day, type and app, events and money. */
export interface ExportMismatch {
  sink: string;
  day: string;
  type: string;
  applicationId: string;
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
    application_id: string;
    logged: string;
    exported: string;
    logged_micros: string;
    exported_micros: string;
  }>(
    db,
    sql`with logged as (
          select c.sink, (e.occurred_at at time zone 'UTC')::date as day, e.type,
                 coalesce(e.application_id, ${NO_APP}) as application_id,
                 count(*) as events, sum(e.amount_micros) as micros
          from event_cursors c
          join events e on (e.txid, e.seq) <= (c.txid, c.seq) and (c.types is null or e.type = any(c.types))
          where c.sink <> ${FANOUT_SINK}
          group by 1, 2, 3, 4)
        select coalesce(l.sink, x.sink) as sink, coalesce(l.day, x.day)::text as day,
               coalesce(l.type, x.type) as type, coalesce(l.application_id, x.application_id)::text as application_id,
               coalesce(l.events, 0)::text as logged, coalesce(x.events, 0)::text as exported,
               coalesce(l.micros, 0)::text as logged_micros, coalesce(x.amount_micros, 0)::text as exported_micros
        from logged l full join event_exports x
          on x.sink = l.sink and x.day = l.day and x.type = l.type and x.application_id = l.application_id
        where (coalesce(l.events, 0) <> coalesce(x.events, 0) or coalesce(l.micros, 0) <> coalesce(x.amount_micros, 0))
          and coalesce(l.day, x.day) >= (${KEPT_FROM} at time zone 'UTC')::date
        order by 1, 2, 3, 4 limit 100`,
  );
  return rows.map((row) => ({
    sink: row.sink,
    day: row.day,
    type: row.type,
    applicationId: row.application_id,
    logged: Number(row.logged),
    exported: Number(row.exported),
    loggedMicros: Number(row.logged_micros),
    exportedMicros: Number(row.exported_micros),
  }));
}

/**
 * Per creator and day (the operator console, decision 068): what the ledger's calls charged
 * (invocations), what the log holds for them, and what each sink exported, with the difference
 * named. Only days still kept by both retentions are compared.
 */
export interface CreatorDay {
  day: string;
  creatorId: string;
  creatorEmail: string | null;
  chargedCalls: number;
  chargedMicros: number;
  loggedCalls: number;
  loggedMicros: number;
  exported: Record<string, { events: number; micros: number }>;
  differences: string[];
}

export async function creatorDays(db: Database, options: { since: Date }): Promise<CreatorDay[]> {
  const charged = await queryRows<{
    day: string;
    creator_id: string;
    email: string | null;
    calls: string;
    micros: string;
  }>(
    db,
    sql`select (i.created_at at time zone 'UTC')::date::text as day, a.owner_id::text as creator_id, u.email,
          count(*)::text as calls, sum(i.charged_cents * 10000)::text as micros
        from invocations i join applications a on a.id = i.application_id left join users u on u.id = a.owner_id
        where i.created_at >= ${options.since.toISOString()}::timestamptz
          and pm_call_charged(i.status, i.charged_cents, i.hold_id, i.subscription_id)
        group by 1, 2, 3`,
  );
  const logged = await queryRows<{
    day: string;
    creator_id: string;
    calls: string;
    micros: string;
    changed: string;
  }>(
    db,
    sql`select (e.occurred_at at time zone 'UTC')::date::text as day, a.owner_id::text as creator_id,
          count(*) filter (where e.type = 'call.charged')::text as calls,
          coalesce(sum(e.amount_micros) filter (where e.type = 'call.charged'), 0)::text as micros,
          count(*) filter (where e.type = 'call.charge_changed')::text as changed
        from events e join applications a on a.id = e.application_id
        where e.type in ('call.charged', 'call.charge_changed') and e.occurred_at >= ${options.since.toISOString()}::timestamptz
        group by 1, 2`,
  );
  // Sinks with nothing left to send: what they exported must be the log's, to the call.
  const caughtUp = new Set(
    (
      await queryRows<{ sink: string }>(
        db,
        sql`select c.sink from event_cursors c where not exists (select 1 from events e
              where (e.txid, e.seq) > (c.txid, c.seq) and (c.types is null or e.type = any(c.types)))`,
      )
    ).map((r) => r.sink),
  );
  const exported = await queryRows<{
    sink: string;
    day: string;
    creator_id: string;
    events: string;
    micros: string;
  }>(
    db,
    sql`select x.sink, x.day::text, a.owner_id::text as creator_id, sum(x.events)::text as events,
          sum(x.amount_micros)::text as micros
        from event_exports x join applications a on a.id = x.application_id
        where x.type = 'call.charged' and x.day >= (${options.since.toISOString()}::timestamptz at time zone 'UTC')::date
        group by 1, 2, 3`,
  );
  const rows = new Map<string, CreatorDay>();
  const row = (day: string, creatorId: string) => {
    const key = `${day} ${creatorId}`;
    let found = rows.get(key);
    if (!found) {
      found = {
        day,
        creatorId,
        creatorEmail: null,
        chargedCalls: 0,
        chargedMicros: 0,
        loggedCalls: 0,
        loggedMicros: 0,
        exported: {},
        differences: [],
      };
      rows.set(key, found);
    }
    return found;
  };
  for (const r of charged) {
    const target = row(r.day, r.creator_id);
    target.creatorEmail = r.email;
    target.chargedCalls = Number(r.calls);
    target.chargedMicros = Number(r.micros);
  }
  const changed = new Map<string, number>();
  for (const r of logged) {
    const target = row(r.day, r.creator_id);
    target.loggedCalls = Number(r.calls);
    target.loggedMicros = Number(r.micros);
    changed.set(`${r.day} ${r.creator_id}`, Number(r.changed));
  }
  for (const r of exported)
    row(r.day, r.creator_id).exported[r.sink] = { events: Number(r.events), micros: Number(r.micros) };
  for (const target of rows.values()) {
    // A charge changed after its call (call.charge_changed) makes the day's sums differ by design:
    // reconcile's per-call check judges those.
    const changes = changed.get(`${target.day} ${target.creatorId}`) ?? 0;
    if (
      changes === 0 &&
      (target.loggedCalls !== target.chargedCalls || target.loggedMicros !== target.chargedMicros)
    )
      target.differences.push(
        `the log has ${target.loggedCalls} charged calls (${target.loggedMicros} micros), the ledger's calls ${target.chargedCalls} (${target.chargedMicros})`,
      );
    for (const sink of caughtUp) {
      const sent = target.exported[sink] ?? { events: 0, micros: 0 };
      if (sink !== "webhooks" && (sent.events !== target.loggedCalls || sent.micros !== target.loggedMicros))
        target.differences.push(
          `${sink} exported ${sent.events} (${sent.micros} micros), the log has ${target.loggedCalls} (${target.loggedMicros})`,
        );
    }
  }
  return [...rows.values()].sort(
    (a, b) => b.day.localeCompare(a.day) || a.creatorId.localeCompare(b.creatorId),
  );
}
