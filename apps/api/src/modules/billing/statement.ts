import type { StatementLine, WalletStatement } from "@promptmint/contracts";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { isDateInRange } from "../../lib/date-range.ts";
import { invalidFields } from "../../lib/errors.ts";
import { MICROS_PER_CENT } from "./money.ts";

/**
 * A consumer's wallet statement (docs/decisions/029): what moved their wallet, as they think of
 * it. The calls they paid for, one line per app and UTC day ("Haiku Writer — 12 calls"), from the
 * invocations charged (the price each call spent from its lease, as its answer said); an owner's
 * embedded widget, one line per app and day from its leases; and every other movement of the
 * wallet (top-ups, plan payments, refunds...) from the ledger; and a creator's calls no price
 * paid (decision 062), one line per app and day of their model cost, from its holds. The leases themselves (`hold`, and
 * the `release` of what they did not spend) are not lines: they net to what their calls spent.
 *
 * So the lines always add up to the wallet's unspent money as its owner reads it
 * (`walletBalances`: available plus held, less what calls spent from leases still open), and to
 * the balance once no lease is open (statement.test.ts).
 *
 * Newest first, paged by a cursor (the last line's moment and key), stable while calls go on: a
 * day still taking calls moves to the top, and a page already read is not repeated.
 */
export async function walletStatement(
  db: Database,
  userId: string,
  options: { cursor?: string; limit: number },
): Promise<WalletStatement> {
  const after = options.cursor === undefined ? undefined : parseCursor(options.cursor);
  const at = after?.at ?? null;
  const key = after?.key ?? null;
  const rows = await queryRows<StatementRow>(
    db,
    sql`with cutoff as (
          -- Calls lines are whole UTC days: none after the cursor's day can come after it.
          select case when ${at}::timestamptz is null then null
                      else (((${at}::timestamptz at time zone 'UTC')::date + 1)::timestamp at time zone 'UTC') end as before
        ), wallet as (
          select id from ledger_accounts where kind = 'wallet' and owner_id = ${userId}::uuid
        ), lines as (
          select 'calls:' || c.application_id || ':' || c.day as key, 'calls' as kind, null::text as description,
            c.application_id, c.day, c.calls, -c.cents * ${MICROS_PER_CENT}::bigint as amount_micros, c.at
          from (
            -- Days dropped by the retention are read as folded before the drop (decision 038).
            select application_id, day, sum(calls)::int as calls, sum(cents)::bigint as cents, max(at) as at
            from (
              select i.application_id, (i.created_at at time zone 'UTC')::date as day, count(*) as calls,
                sum(i.charged_cents) as cents, max(i.created_at) as at
              from invocations i, cutoff
              where i.caller_user_id = ${userId}::uuid and i.hold_id is not null and i.charged_cents > 0
                and (cutoff.before is null or i.created_at < cutoff.before)
              group by 1, 2
              union all
              select d.application_id, d.day, d.calls, d.charged_cents, d.last_at
              from dropped_payer_calls d, cutoff
              where d.caller_user_id = ${userId}::uuid and (cutoff.before is null or d.last_at < cutoff.before)
            ) u
            group by 1, 2
          ) c
          union all
          -- An owner's embedded widget: the owner pays the price, which is not the app's revenue, so
          -- its calls record no charge; its leases (payer = creator) say what they spent.
          select 'embed:' || e.application_id || ':' || e.day, 'embedded_calls', null,
            e.application_id, e.day, e.calls, -e.micros, e.at
          from (
            select h.application_id, (h.created_at at time zone 'UTC')::date as day, sum(h.calls)::int as calls,
              sum(h.settled_micros)::bigint as micros, max(h.created_at) as at
            from holds h, cutoff
            where h.payer_id = ${userId}::uuid and h.creator_id = ${userId}::uuid and h.settled_micros > 0
              and (cutoff.before is null or h.created_at < cutoff.before)
            group by 1, 2
          ) e
          union all
          -- The model cost of the creator's calls no price paid (their own, tests, evals, widgets:
          -- decision 062), one line per app and day from the holds that paid it. A model cost
          -- posting's wallet part (beyond a hold) is in spent_micros too, so not an entry line.
          select 'model:' || m.application_id || ':' || m.day, 'model_costs', null,
            m.application_id, m.day, m.calls, -m.micros, m.at
          from (
            select h.application_id, (h.created_at at time zone 'UTC')::date as day, count(*)::int as calls,
              sum(h.spent_micros)::bigint as micros, max(h.created_at) as at
            from model_cost_holds h, cutoff
            where h.creator_id = ${userId}::uuid and h.spent_micros > 0
              and (cutoff.before is null or h.created_at < cutoff.before)
            group by 1, 2
          ) m
          union all
          select 'entry:' || lpad(n.id::text, 20, '0'), t.kind, t.description, null, null, null,
            n.amount_micros, n.created_at
          from ledger_entries n join ledger_transactions t on t.id = n.transaction_id
          where n.account_id = (select id from wallet) and t.kind not in ('hold', 'release', 'model_cost')
        )
        select l.key, l.kind, l.description, l.calls, to_char(l.day, 'YYYY-MM-DD') as day,
          l.amount_micros::text as amount_micros,
          to_char(l.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at,
          a.slug, a.name
        from lines l left join applications a on a.id = l.application_id
        where ${at}::timestamptz is null or (l.at, l.key) < (${at}::timestamptz, ${key}::text)
        order by l.at desc, l.key desc
        limit ${options.limit + 1}`,
  );
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return {
    lines: page.map(toLine),
    next_cursor: rows.length > options.limit && last ? formatCursor({ at: last.at, key: last.key }) : null,
  };
}

/** One line of the statement as the query reads it: a day's calls of one app, or one entry. */
interface StatementRow {
  key: string;
  kind: string;
  description: string | null;
  calls: number | null;
  day: string | null;
  amount_micros: string;
  at: string;
  slug: string | null;
  name: string | null;
}

function toLine(row: StatementRow): StatementLine {
  const isCalls = row.kind === "calls" || row.kind === "embedded_calls" || row.kind === "model_costs";
  const name = row.name ?? "A deleted app";
  const calls = row.calls ?? 0;
  const counted = `${calls} ${calls === 1 ? "call" : "calls"}`;
  return {
    id: row.key,
    kind: row.kind,
    description: isCalls
      ? `${name}${row.kind === "embedded_calls" ? " (embedded)" : ""} — ${counted}${row.kind === "model_costs" ? ": model cost" : ""}`
      : (row.description ?? ""),
    application: isCalls && row.slug && row.name ? { slug: row.slug, name: row.name } : null,
    calls: isCalls ? calls : null,
    day: isCalls ? row.day : null,
    amount_micros: Number(row.amount_micros),
    created_at: new Date(row.at).toISOString(),
  };
}

const KEY = /^(calls|embed|model):[0-9a-f-]{36}:\d{4}-\d{2}-\d{2}$|^entry:\d{20}$/;
const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The cursor: the last line's moment (to the microsecond, as the database keeps it) and key. */
function formatCursor(cursor: { at: string; key: string }): string {
  return Buffer.from(`${cursor.at}|${cursor.key}`).toString("base64url");
}

function parseCursor(cursor: string): { at: string; key: string } {
  const [at = "", key = ""] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const day = /\d{4}-\d{2}-\d{2}$/.exec(key)?.[0];
  if (
    !AT.test(at) ||
    !KEY.test(key) ||
    !isDateInRange(new Date(at)) ||
    (day !== undefined && !isDateInRange(new Date(`${day}T00:00:00Z`)))
  )
    throw invalidFields({ cursor: "is not a cursor this statement gave" });
  return { at, key };
}
