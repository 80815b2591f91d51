import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../../db/client.ts";

/**
 * What reconcile checks of the agents' balances beside x402's own checks (issue 40,
 * docs/decisions/070): every credited MPP payment posted exactly one `mpp_credit` of its amount
 * (clearing → its payer's wallet) and nothing else did; a payment that is not credited posted
 * nothing.
 */
export async function mismatchedMppPayments(db: Database): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`with credited as (
          select t.reference, count(distinct t.id) as transactions,
            sum(e.amount_micros) filter (where a.kind = 'wallet' and a.owner_id = m.payer_user_id) as kept,
            -sum(e.amount_micros) filter (where a.kind = 'clearing') as cleared
          from ledger_transactions t
          join ledger_entries e on e.transaction_id = t.id
          join ledger_accounts a on a.id = e.account_id
          left join mpp_payments m on m.id::text = t.reference
          where t.kind = 'mpp_credit' group by t.reference
        )
        select m.id::text as id from mpp_payments m
        left join credited c on c.reference = m.id::text
        where (m.status = 'credited' and (coalesce(c.transactions, 0) <> 1
                 or coalesce(c.kept, 0) <> m.amount_micros or coalesce(c.cleared, 0) <> m.amount_micros))
           or (m.status <> 'credited' and c.reference is not null)
        union
        select c.reference from credited c
        where not exists (select 1 from mpp_payments m where m.id::text = c.reference and m.status = 'credited')`,
  );
  return rows.map((row) => `MPP payment ${row.id}`);
}

/**
 * Every refund an agent asked for took exactly its amount out of its payer's wallet (`agent_refund`,
 * into `refunds_owed`), a refunded one paid exactly that back out (`agent_refund_paid`), an owed one
 * nothing yet; and `refunds_owed` holds exactly what is owed.
 */
export async function mismatchedAgentRefunds(db: Database): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`with taken as (
          select t.reference, count(distinct t.id) as transactions,
            -sum(e.amount_micros) filter (where a.kind = 'wallet' and a.owner_id = r.payer_user_id) as taken,
            sum(e.amount_micros) filter (where a.kind = 'refunds_owed') as owed
          from ledger_transactions t
          join ledger_entries e on e.transaction_id = t.id
          join ledger_accounts a on a.id = e.account_id
          left join agent_refunds r on r.id::text = t.reference
          where t.kind = 'agent_refund' group by t.reference
        ), paid as (
          select t.reference, count(distinct t.id) as transactions,
            -sum(e.amount_micros) filter (where a.kind = 'refunds_owed') as paid
          from ledger_transactions t
          join ledger_entries e on e.transaction_id = t.id
          join ledger_accounts a on a.id = e.account_id
          where t.kind = 'agent_refund_paid' group by t.reference
        )
        select r.id::text as id from agent_refunds r
        left join taken t on t.reference = r.id::text
        left join paid p on p.reference = r.id::text
        where coalesce(t.transactions, 0) <> 1 or coalesce(t.taken, 0) <> r.amount_micros
           or coalesce(t.owed, 0) <> r.amount_micros
           or (r.status = 'refunded' and (coalesce(p.transactions, 0) <> 1 or coalesce(p.paid, 0) <> r.amount_micros))
           or (r.status = 'owed' and p.reference is not null)
        union
        select t.reference from taken t where not exists (select 1 from agent_refunds r where r.id::text = t.reference)
        union
        select 'refunds_owed' where coalesce((select sum(balance_micros) from ledger_accounts where kind = 'refunds_owed'), 0)
          <> coalesce((select sum(amount_micros) from agent_refunds where status = 'owed'), 0)`,
  );
  return rows.map((row) => `agent refund ${row.id}`);
}
