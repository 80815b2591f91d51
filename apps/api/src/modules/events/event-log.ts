import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { invalidFields } from "../../lib/errors.ts";

/**
 * The event log (migration 0049, docs/decisions/068): one row per fact, appended by PostgreSQL
 * triggers in the transaction that makes the fact true, so no code path can write a fact without
 * its event. This module reads it; nothing in TypeScript writes it.
 */

/** Every event type the log holds, with what makes it true: the contract of webhooks and exports. */
export const EVENT_TYPES = {
  "call.charged": "A call was answered and charged (wallet, plan, x402 or an embedding owner's hold)",
  "call.charge_changed": "A call's charge changed after it was recorded (what it is now)",
  "wallet.topped_up": "Money reached a wallet (a card top-up)",
  "payment.reversed": "A payment was refunded or disputed and its money taken back",
  "subscription.paid": "A plan's period was paid",
  "subscription.started": "A subscription became active",
  "subscription.ended": "A subscription was canceled",
  "dispute.opened": "A card payment was disputed",
  "dispute.updated": "A dispute's status changed (won, lost, closed)",
  "payout.created": "A creator's earnings were set aside for a payout",
  "payout.paid": "A payout reached the creator's bank",
  "payout.failed": "A payout failed and its money went back to earnings",
  "x402.credited": "An x402 payment whose answer was never given was kept for its payer",
  "version.promoted": "An app's production label moved to a newer version",
  "version.rolled_back": "An app's production label moved back to an older version",
  "version.label_moved": "Another label of an app moved",
  "experiment.started": "An experiment started splitting an app's traffic",
  "experiment.ended": "An experiment ended (stopped or its winner promoted)",
  "experiment.rolled_back": "An experiment ended by rolling back to its control version",
  "release.rollout.started":
    "A guarded rollout started giving a candidate version its first share of traffic",
  "release.rollout.advanced": "A guarded rollout's candidate, within its bounds, got the next larger share",
  "release.rollout.rolled_back":
    "A guarded rollout ended by itself, a bound breached: production stays on the earlier version",
  "release.rollout.completed": "A guarded rollout reached 100%: its candidate was promoted to production",
  "release.rollout.stopped":
    "A guarded rollout was stopped by its creator: production returned to the earlier version",
  "eval_run.passed": "An eval run finished and passed",
  "eval_run.failed": "An eval run finished and failed, or could not run",
  "app.error_rate_jumped": "An app's calls failed far more often in the last 15 minutes than before",
} as const;

export type EventType = keyof typeof EVENT_TYPES;

/** The event types usage exports send by default: what a call was charged. */
export const USAGE_EVENT_TYPES: EventType[] = ["call.charged", "call.charge_changed"];

export interface LoggedEvent {
  seq: number;
  id: string;
  type: EventType;
  /** The writing transaction (xid8 as text): with `seq`, the order a cursor follows. */
  txid: string;
  occurredAt: Date;
  userIds: string[];
  applicationId: string | null;
  amountMicros: number;
  data: Record<string, unknown>;
}

/** A place in the log: after the event of transaction `txid` numbered `seq`. */
export interface Cursor {
  txid: string;
  seq: number;
}

export const START: Cursor = { txid: "0", seq: 0 };

/** A cursor as clients see it: opaque, `<txid>.<seq>` in base64url. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.txid}.${cursor.seq}`).toString("base64url");
}

export function decodeCursor(text: string | undefined, field = "cursor"): Cursor {
  if (!text) return START;
  const match = /^(\d{1,20})\.(\d{1,19})$/.exec(Buffer.from(text, "base64url").toString());
  if (!match) throw invalidFields({ [field]: "is not a cursor this API gave" });
  return { txid: match[1] as string, seq: Number(match[2]) };
}

interface EventRow {
  seq: string;
  id: string;
  type: EventType;
  txid: string;
  occurred_at: string | Date;
  user_ids: string[] | string;
  application_id: string | null;
  amount_micros: string;
  data: Record<string, unknown>;
}

/** PGlite answers uuid[] as `{a,b}` text on some paths: both shapes become a list. */
function uuidList(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, "");
  return inner ? inner.split(",") : [];
}

function toEvent(row: EventRow): LoggedEvent {
  return {
    seq: Number(row.seq),
    id: row.id,
    type: row.type,
    txid: row.txid,
    occurredAt: new Date(row.occurred_at),
    userIds: uuidList(row.user_ids),
    applicationId: row.application_id,
    amountMicros: Number(row.amount_micros),
    data: row.data,
  };
}

/**
 * Below this transaction id, every transaction of this database had ended when the statement's
 * snapshot was taken: the oldest transaction the snapshot saw running (`pg_snapshot_xip`), leaving
 * out only those that `pg_locks` shows are still running in another database (transaction ids are
 * the cluster's: a writing transaction in a neighbouring database must not stall this one's
 * exports). A transaction seen running that has ended since, wherever it was, still counts: the
 * horizon errs toward waiting, never toward passing an event over. Prepared transactions count too.
 */
export const HORIZON = sql`select coalesce(
    (select x from pg_snapshot_xip(pg_current_snapshot()) x
     where (x::text::numeric % 4294967296)::bigint not in (
       select l.transactionid::text::bigint from pg_locks l join pg_stat_activity a on a.pid = l.pid
       where l.locktype = 'transactionid' and l.mode = 'ExclusiveLock' and l.granted
         and a.datname is distinct from current_database())
     order by x limit 1),
    pg_snapshot_xmax(pg_current_snapshot()))`;

/**
 * The events after `cursor`, oldest first, up to `limit`: only those of transactions older than
 * every transaction of this database still running (`HORIZON`), so an event whose transaction
 * commits later than a newer one's is never passed over (it is read once that transaction ended).
 * Optionally of some types only.
 */
export async function readEvents(
  db: Database,
  cursor: Cursor,
  options: { limit: number; types?: readonly string[] },
): Promise<LoggedEvent[]> {
  const types = options.types?.length
    ? sql`and type in (${sql.join(
        options.types.map((type) => sql`${type}`),
        sql`, `,
      )})`
    : sql``;
  const rows = await queryRows<EventRow>(
    db,
    sql`select seq::text, id, type, txid::text, occurred_at, user_ids, application_id,
          amount_micros::text, data
        from events
        where (txid, seq) > (${cursor.txid}::xid8, ${cursor.seq}::bigint)
          and txid < (${HORIZON}) ${types}
        -- The columns, not the text the select list gives them: text would order "1000" before "999".
        order by events.txid, events.seq
        limit ${options.limit}`,
  );
  return rows.map(toEvent);
}

/** The cursor just past the last of these events (or `cursor` itself when there are none). */
export function cursorAfter(cursor: Cursor, events: LoggedEvent[]): Cursor {
  const last = events.at(-1);
  return last ? { txid: last.txid, seq: last.seq } : cursor;
}

/** An event as it leaves Promptmint (webhook body, NDJSON line): the Standard Webhooks shape. */
export function publicEvent(
  event: Pick<LoggedEvent, "id" | "type" | "occurredAt" | "data" | "amountMicros">,
) {
  return {
    id: event.id,
    type: event.type,
    timestamp: event.occurredAt.toISOString(),
    data: { ...event.data, amount_micros: event.amountMicros },
  };
}
