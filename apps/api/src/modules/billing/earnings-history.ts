import type { EarningsHistory, EarningsLine } from "@promptmint/contracts";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { isDateInRange } from "../../lib/date-range.ts";
import { invalidFields } from "../../lib/errors.ts";

/**
 * A creator's earnings history, one line per UTC day and kind (issue 32: a busy creator's
 * history was one row per paid call). A day's paid calls are one line, "Earned from 37 paid
 * calls", whether a wallet paid them (a `settle` of a lease, whose description counts its
 * calls: "12 paid calls") or x402 did (one call each), and it says how many x402 paid. Any other
 * movement of the earnings (a payout, its return, a refund taken back) is its own line per day
 * and kind. Grouped in SQL, paged by whole days: `cursor` is the last day already read.
 */
export async function earningsHistory(
  db: Database,
  userId: string,
  options: { cursor?: string; days: number },
): Promise<EarningsHistory> {
  const before = options.cursor === undefined ? null : parseCursor(options.cursor);
  const rows = await queryRows<EarningsRow>(
    db,
    sql`with moves as (
          select (n.created_at at time zone 'UTC')::date as day,
            case when t.kind in ('settle', 'x402_payment') then 'calls' else t.kind end as kind,
            t.kind as ledger_kind, t.description, n.amount_micros, n.created_at
          from ledger_entries n
          join ledger_accounts a on a.id = n.account_id and a.kind = 'earnings' and a.owner_id = ${userId}::uuid
          join ledger_transactions t on t.id = n.transaction_id
        ), days as (
          select distinct day from moves
          where ${before}::date is null or day < ${before}::date
          order by day desc
          limit ${options.days + 1}
        )
        select to_char(m.day, 'YYYY-MM-DD') as day, m.kind, count(*)::int as entries,
          -- A lease's settle says how many calls it paid ("12 paid calls"; "Paid call" before leases).
          coalesce(sum(case when m.ledger_kind = 'settle'
                            then coalesce(substring(m.description from '^(\\d+) paid call')::int, 1)
                            when m.ledger_kind = 'x402_payment' then 1 end), 0)::int as calls,
          (count(*) filter (where m.ledger_kind = 'x402_payment'))::int as x402_calls,
          sum(m.amount_micros)::text as amount_micros,
          to_char(max(m.created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at,
          (array_agg(m.description order by m.created_at desc))[1] as description
        from moves m
        where m.day in (select day from days)
        group by m.day, m.kind
        order by m.day desc, max(m.created_at) desc, m.kind`,
  );
  const days = [...new Set(rows.map((row) => row.day))];
  const more = days.length > options.days;
  const kept = new Set(days.slice(0, options.days));
  return {
    lines: rows.filter((row) => kept.has(row.day)).map(toLine),
    next_cursor: more ? (days[options.days - 1] ?? null) : null,
  };
}

interface EarningsRow {
  day: string;
  kind: string;
  entries: number;
  calls: number;
  x402_calls: number;
  amount_micros: string;
  at: string;
  description: string;
}

function toLine(row: EarningsRow): EarningsLine {
  const isCalls = row.kind === "calls";
  return {
    id: `${row.day}:${row.kind}`,
    kind: row.kind,
    day: row.day,
    description: isCalls
      ? earnedFrom(row.calls, row.x402_calls)
      : row.entries === 1
        ? row.description
        : `${row.description} and ${row.entries - 1} more`,
    calls: isCalls ? row.calls : null,
    x402_calls: isCalls ? row.x402_calls : null,
    amount_micros: Number(row.amount_micros),
    created_at: new Date(row.at).toISOString(),
  };
}

/** "Earned from 1 paid call", "Earned from 37 paid calls (12 paid by x402)". */
export function earnedFrom(calls: number, x402Calls: number): string {
  const counted = `Earned from ${calls} paid ${calls === 1 ? "call" : "calls"}`;
  if (x402Calls === 0) return counted;
  if (calls === 1) return `${counted} (paid by x402)`;
  return `${counted} (${x402Calls === calls ? "all" : x402Calls} paid by x402)`;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function parseCursor(cursor: string): string {
  if (!DAY.test(cursor) || !isDateInRange(new Date(`${cursor}T00:00:00Z`)))
    throw invalidFields({ cursor: "is not a cursor this history gave" });
  return cursor;
}
