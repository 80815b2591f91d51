import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../../db/client.ts";

/**
 * What reconcile checks of x402 payments (docs/decisions/052): every settled payment is one
 * answered call (while its day of invocations is kept), charged exactly the payment's amount, and posted once (one `x402_payment`
 * transaction, out of the x402 clearing account by that amount); nothing else is posted as one;
 * a payment that did not settle posted nothing and charged no answered call; no payment is
 * `unpaid` (an answered call whose payment the facilitator refused: the platform's loss, named).
 */
export async function mismatchedX402Payments(db: Database): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`with posted as (
          select t.reference, count(distinct t.id) as transactions,
            -sum(e.amount_micros) filter (where a.kind = 'x402_clearing') as cleared
          from ledger_transactions t
          join ledger_entries e on e.transaction_id = t.id
          join ledger_accounts a on a.id = e.account_id
          where t.kind = 'x402_payment' group by t.reference
        )
        select x.id::text as id from x402_payments x
        left join posted p on p.reference = x.id::text
        left join invocations i on i.id = x.invocation_id
        where (x.status = 'settled' and (
                 -- Its invocation, unless its day was dropped by the retention (decision 038).
                 (i.id is null and x.created_at >= (select coalesce(min(created_at), '-infinity') from invocations))
                 or i.status <> 'success'
                 or i.charged_cents * 10000 <> x.amount_micros or coalesce(p.transactions, 0) <> 1
                 or coalesce(p.cleared, 0) <> x.amount_micros))
           or (x.status <> 'settled' and p.reference is not null)
           or (x.status in ('verified', 'failed') and i.status = 'success' and i.charged_cents > 0)
           or x.status = 'unpaid'
        union
        select p.reference from posted p
        where not exists (select 1 from x402_payments x where x.id::text = p.reference)`,
  );
  return rows.map((row) => row.id);
}

/**
 * The SQL condition, on an invocation aliased `i`, that an x402 payment paid for it: settled, or
 * settling (answered and charged, the settlement on its way: the sweep posts it).
 */
export const PAID_BY_X402_SQL = `exists (select 1 from x402_payments x where x.invocation_id = i.id
  and x.status in ('settled', 'settling'))`;
