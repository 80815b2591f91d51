import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../../db/client.ts";
import type { ReceivedTransfer } from "./x402-rail.ts";

/**
 * What reconcile checks of x402 payments (docs/decisions/052): every settled payment is one
 * answered call (while its day of invocations is kept), charged exactly the payment's amount, and posted once (one `x402_payment`
 * transaction, out of the x402 clearing account by that amount); nothing else is posted as one;
 * a payment that did not settle posted nothing and charged no answered call; no payment is
 * `unpaid` (an answered call whose payment the facilitator refused: the platform's loss, named).
 * Decision 064: a settled payment names a well-formed transaction (a facilitator's `success` with
 * an empty or made-up one is not a settlement); a `credited` payment (money that reached us for an
 * answer never given) posted exactly one `x402_credit` transaction moving its amount from the
 * clearing account to its payer's wallet, nothing else, and charged no answered call.
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
        ), credited as (
          select t.reference, count(distinct t.id) as transactions,
            -sum(e.amount_micros) filter (where a.kind = 'x402_clearing') as cleared,
            sum(e.amount_micros) filter (where a.kind = 'wallet') as kept,
            bool_and(a.kind = 'x402_clearing' or (a.kind = 'wallet' and a.owner_id = x.payer_user_id)) as to_payer
          from ledger_transactions t
          join ledger_entries e on e.transaction_id = t.id
          join ledger_accounts a on a.id = e.account_id
          left join x402_payments x on x.id::text = t.reference
          where t.kind = 'x402_credit' group by t.reference
        )
        select x.id::text as id from x402_payments x
        left join posted p on p.reference = x.id::text
        left join credited c on c.reference = x.id::text
        left join invocations i on i.id = x.invocation_id
        where (x.status = 'settled' and x.tx_hash !~ '^0x[0-9a-fA-F]{64}$')
           or (x.status = 'credited' and (
                 x.tx_hash !~ '^0x[0-9a-fA-F]{64}$' or coalesce(c.transactions, 0) <> 1
                 or coalesce(c.cleared, 0) <> x.amount_micros or coalesce(c.kept, 0) <> x.amount_micros
                 or not coalesce(c.to_payer, false) or (i.status = 'success' and i.charged_cents > 0)))
           or (x.status <> 'credited' and c.reference is not null)
           or (x.status = 'settled' and (
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
        where not exists (select 1 from x402_payments x where x.id::text = p.reference)
        union
        select c.reference from credited c
        where not exists (select 1 from x402_payments x where x.id::text = c.reference)`,
  );
  return rows.map((row) => row.id);
}

/**
 * What reached the receiving address on chain (`transfers`: the chain's or the facilitator's
 * account of it) against what the ledger says came in through `x402_clearing`, one line per
 * difference, naming the payment, its transaction and both amounts (decision 064):
 * - a transfer no settled or credited payment names (money we got and do not show: a payment
 *   still pending, or one forgotten);
 * - a settled or credited payment whose transaction is not among the transfers, or moved another
 *   amount (money we show and did not get);
 * - the clearing account's total against the transfers' total (what the lines above add up to,
 *   and any posting to it outside x402 payments).
 * Only transfers from payers this platform has payments of count: the address may receive other
 * money. Empty when they agree to the micro-dollar.
 */
export async function x402TransferDifferences(
  db: Database,
  transfers: ReceivedTransfer[],
): Promise<string[]> {
  const payments = await queryRows<{
    id: string;
    status: string;
    tx_hash: string | null;
    amount: string;
    payer: string;
  }>(
    db,
    sql`select id::text, status, tx_hash, amount_micros::text as amount, payer from x402_payments
        where status in ('settled', 'credited', 'settling', 'unpaid') or tx_hash is not null`,
  );
  const [clearing] = await queryRows<{ balance: string }>(
    db,
    sql`select coalesce(sum(balance_micros), 0)::text as balance from ledger_accounts where kind = 'x402_clearing'`,
  );
  const payers = new Set(payments.map((row) => row.payer));
  const ours = transfers.filter((transfer) => payers.has(transfer.from.toLowerCase()));
  const byTransaction = new Map(ours.map((transfer) => [transfer.transaction.toLowerCase(), transfer]));
  const counted = new Set<string>();
  const differences: string[] = [];
  for (const row of payments) {
    const transfer = row.tx_hash ? byTransaction.get(row.tx_hash.toLowerCase()) : undefined;
    const cleared = row.status === "settled" || row.status === "credited";
    if (transfer) counted.add(transfer.transaction.toLowerCase());
    if (cleared && !transfer)
      differences.push(
        `x402 payment ${row.id} (${row.status}, tx ${row.tx_hash}): cleared ${row.amount} µ$, no transfer to the receiving address`,
      );
    else if (cleared && transfer && transfer.valueMicros !== Number(row.amount))
      differences.push(
        `x402 payment ${row.id} (${row.status}, tx ${row.tx_hash}): cleared ${row.amount} µ$, transferred ${transfer.valueMicros} µ$`,
      );
    else if (!cleared && transfer)
      differences.push(
        `x402 payment ${row.id} (${row.status}, tx ${row.tx_hash}): cleared 0 µ$, transferred ${transfer.valueMicros} µ$`,
      );
  }
  for (const transfer of ours)
    if (!counted.has(transfer.transaction.toLowerCase()))
      differences.push(
        `transfer ${transfer.transaction} from ${transfer.from}: ${transfer.valueMicros} µ$ reached the receiving address, no x402 payment clears it`,
      );
  const received = ours.reduce((sum, transfer) => sum + transfer.valueMicros, 0);
  const inClearing = -Number(clearing?.balance ?? 0);
  if (received !== inClearing)
    differences.push(
      `x402_clearing shows ${inClearing} µ$ received, the receiving address got ${received} µ$`,
    );
  return differences;
}

/**
 * The SQL condition, on an invocation aliased `i`, that an x402 payment paid for it: settled, or
 * settling (answered and charged while its settlement was unknown: only rows from before decision
 * 064, which the sweep posts once confirmed; today an answer is given only once settled).
 */
export const PAID_BY_X402_SQL = `exists (select 1 from x402_payments x where x.invocation_id = i.id
  and x.status in ('settled', 'settling'))`;
