import { randomUUID } from "node:crypto";
import { type SQL, sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { type Cursor, cursorAfter, HORIZON, type LoggedEvent, readEvents } from "./event-log.ts";

/**
 * A sink's relay (decision 068): at-least-once, in the log's order, any number of processes. A
 * relay leases its sink's cursor row for `leaseMs` (no transaction stays open while it sends),
 * reads the events after the cursor, hands them to the sink, and only when the sink acknowledged
 * moves the cursor, counting what it exported per day and type, in one transaction that checks it
 * still holds the lease. A process killed while sending leaves the cursor where it was: the next
 * lease sends the same events again with the same ids, which receivers deduplicate (the event id is
 * every sink's idempotency key). A relay whose lease expired mid-send cannot move the cursor: its
 * successor's sends count, never both.
 */
export interface Sink {
  name: string;
  /** Only these event types (all when absent). */
  types?: readonly string[];
  /** Most events per `send`. */
  batch: number;
  /**
   * Delivers the events or throws. With `tx`, the sink writes into the database (the webhook
   * fan-out): its writes commit together with the cursor's move, exactly once. A sink that sends
   * event by event throws a `PartlySent` naming how many of the first events were acknowledged, so
   * the cursor moves past those: a receiver refusing one request in seven still lets a batch of a
   * hundred make progress.
   */
  send(events: LoggedEvent[], tx: Database | undefined): Promise<void>;
  /** Whether `send` writes in the cursor's transaction (database sinks) or outside it (network sinks). */
  inTransaction?: boolean;
  /**
   * A condition (SQL) under which the sink has no one to deliver to (the fan-out with no enabled
   * endpoint): then the cursor moves past every readable event in one statement, reading none.
   * Such a sink keeps no export counts (`exportsUnlikeLog` leaves it out).
   */
  idleWhen?: SQL;
}

export interface RelayResult {
  sent: number;
  /** False when another process holds the lease (nothing was done). */
  leased: boolean;
}

const LEASE_MS = 60_000;

/** The app an export counts for when its event has none. */
export const NO_APP = sql.raw(`'00000000-0000-0000-0000-000000000000'::uuid`);

/** Relays up to `rounds` batches of the sink's events; stops early when the log is drained. */
export async function relay(db: Database, sink: Sink, options: { rounds?: number; leaseMs?: number } = {}) {
  const holder = randomUUID();
  const leaseMs = options.leaseMs ?? LEASE_MS;
  let sent = 0;
  for (let round = 0; round < (options.rounds ?? 20); round += 1) {
    const cursor = await lease(db, sink, holder, leaseMs);
    if (!cursor) {
      // Lost to another process after a round of ours (ours expired meanwhile): it goes on from here.
      return { sent, leased: round > 0 } satisfies RelayResult;
    }
    if (sink.idleWhen && (await passIdle(db, sink.name, sink.idleWhen, holder))) break;
    const events = await readEvents(db, cursor, { limit: sink.batch, types: sink.types });
    if (events.length === 0) break;
    try {
      if (sink.inTransaction) {
        await db.transaction(async (tx) => {
          await sink.send(events, tx as unknown as Database);
          await advance(tx as unknown as Database, sink.name, holder, cursor, events, !sink.idleWhen);
        });
      } else {
        try {
          await sink.send(events, undefined);
        } catch (error) {
          const sent = error instanceof PartlySent ? events.slice(0, error.acknowledged) : [];
          if (sent.length > 0)
            await db.transaction((tx) => advance(tx as unknown as Database, sink.name, holder, cursor, sent));
          throw error;
        }
        await db.transaction((tx) => advance(tx as unknown as Database, sink.name, holder, cursor, events));
      }
    } catch (error) {
      await failed(db, sink.name, holder, error);
      throw error;
    }
    sent += events.length;
    if (events.length < sink.batch) break;
  }
  // However the rounds ended (drained, or the round limit with more to send), the lease goes: the
  // next run, in this process or another, continues at once instead of waiting out the lease.
  await release(db, sink.name, holder);
  return { sent, leased: true } satisfies RelayResult;
}

/** Moves an idle sink's cursor to the last readable event, when `idle` holds; answers whether it did. */
async function passIdle(db: Database, sink: string, idle: SQL, holder: string): Promise<boolean> {
  const [moved] = await queryRows<{ sink: string }>(
    db,
    sql`with last as (
          select e.txid, e.seq from events e, event_cursors c
          where c.sink = ${sink} and (e.txid, e.seq) > (c.txid, c.seq) and e.txid < (${HORIZON})
          order by e.txid desc, e.seq desc limit 1)
        update event_cursors c set txid = last.txid, seq = last.seq, updated_at = now()
        from last
        where c.sink = ${sink} and c.leased_by = ${holder} and (${idle})
        returning c.sink`,
  );
  return moved !== undefined;
}

class LeaseLost extends Error {}

/** Thrown by a sink that delivered the first `acknowledged` events and then failed (`cause`). */
export class PartlySent extends Error {
  readonly acknowledged: number;

  constructor(acknowledged: number, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.acknowledged = acknowledged;
  }
}

/** Takes the sink's lease when free or expired; answers its cursor, or null when another holds it. */
async function lease(db: Database, sink: Sink, holder: string, leaseMs: number): Promise<Cursor | null> {
  await db.execute(sql`insert into event_cursors (sink) values (${sink.name}) on conflict do nothing`);
  // The sink's types are kept with its cursor: reconcile compares what it exported with the log's
  // events of those types up to the cursor.
  const types = sink.types
    ? sql`array[${sql.join(
        sink.types.map((t) => sql`${t}`),
        sql`, `,
      )}]::text[]`
    : sql`null`;
  const [row] = await queryRows<{ txid: string; seq: string }>(
    db,
    sql`update event_cursors set leased_by = ${holder}, types = ${types},
          leased_until = now() + make_interval(secs => ${leaseMs / 1000})
        where sink = ${sink.name} and (leased_by is null or leased_by = ${holder} or leased_until < now())
        returning txid::text, seq::text`,
  );
  return row ? { txid: row.txid, seq: Number(row.seq) } : null;
}

async function advance(
  tx: Database,
  sink: string,
  holder: string,
  from: Cursor,
  events: LoggedEvent[],
  counted = true,
) {
  const to = cursorAfter(from, events);
  const micros = events.reduce((sum, event) => sum + event.amountMicros, 0);
  const [moved] = await queryRows<{ sink: string }>(
    tx,
    sql`update event_cursors set txid = ${to.txid}::xid8, seq = ${to.seq}, exported = exported + ${events.length},
          exported_micros = exported_micros + ${micros}, last_error = null, last_error_at = null, updated_at = now()
        where sink = ${sink} and leased_by = ${holder} and txid = ${from.txid}::xid8 and seq = ${from.seq}
        returning sink`,
  );
  if (!moved) throw new LeaseLost(`the ${sink} relay lost its lease`);
  if (!counted) return;
  // Counted per day, type and app.
  const days = new Map<
    string,
    { day: string; type: string; app: string | null; events: number; micros: number }
  >();
  for (const event of events) {
    const day = event.occurredAt.toISOString().slice(0, 10);
    const key = `${day} ${event.type} ${event.applicationId}`;
    const entry = days.get(key) ?? { day, type: event.type, app: event.applicationId, events: 0, micros: 0 };
    entry.events += 1;
    entry.micros += event.amountMicros;
    days.set(key, entry);
  }
  const values = sql.join(
    [...days.values()].map(
      (d) => sql`(${d.day}::date, ${d.type}, ${d.app}::uuid, ${d.events}::bigint, ${d.micros}::bigint)`,
    ),
    sql`, `,
  );
  await tx.execute(
    sql`insert into event_exports (sink, day, type, application_id, events, amount_micros)
        select ${sink}, v.day, v.type, coalesce(v.app, ${NO_APP}), v.events, v.micros
        from (values ${values}) v(day, type, app, events, micros)
        on conflict (sink, day, type, application_id) do update set events = event_exports.events + excluded.events,
          amount_micros = event_exports.amount_micros + excluded.amount_micros`,
  );
}

async function release(db: Database, sink: string, holder: string) {
  await db.execute(
    sql`update event_cursors set leased_by = null, leased_until = null where sink = ${sink} and leased_by = ${holder}`,
  );
}

async function failed(db: Database, sink: string, holder: string, error: unknown) {
  const message = (error instanceof Error ? error.message : String(error)).slice(0, 500);
  await db.execute(
    sql`update event_cursors set leased_by = null, leased_until = null, last_error = ${message}, last_error_at = now()
        where sink = ${sink} and leased_by = ${holder}`,
  );
}

export interface SinkState {
  sink: string;
  exported: number;
  exportedMicros: number;
  /** Events of the sink's types not yet exported (readable now). */
  behind: number;
  lastError: string | null;
  lastErrorAt: Date | null;
  updatedAt: Date;
}

/** Each sink's place and what it still has to send (operator console, reconcile). */
export async function sinkStates(db: Database, types: Record<string, readonly string[] | undefined>) {
  const rows = await queryRows<{
    sink: string;
    txid: string;
    seq: string;
    exported: string;
    exported_micros: string;
    last_error: string | null;
    last_error_at: string | null;
    updated_at: string;
  }>(
    db,
    sql`select sink, txid::text, seq::text, exported::text, exported_micros::text, last_error, last_error_at, updated_at
        from event_cursors order by sink`,
  );
  const states: SinkState[] = [];
  for (const row of rows) {
    const only = types[row.sink];
    const filter = only?.length
      ? sql`and type in (${sql.join(
          only.map((t) => sql`${t}`),
          sql`, `,
        )})`
      : sql``;
    const [behind] = await queryRows<{ n: string }>(
      db,
      sql`select count(*)::text as n from events where (txid, seq) > (${row.txid}::xid8, ${row.seq}::bigint) ${filter}`,
    );
    states.push({
      sink: row.sink,
      exported: Number(row.exported),
      exportedMicros: Number(row.exported_micros),
      behind: Number(behind?.n ?? 0),
      lastError: row.last_error,
      lastErrorAt: row.last_error_at ? new Date(row.last_error_at) : null,
      updatedAt: new Date(row.updated_at),
    });
  }
  return states;
}
