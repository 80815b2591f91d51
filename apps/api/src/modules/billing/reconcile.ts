import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { mismatchedX402Payments } from "./agent-payments/x402-checks.ts";
import { type CallChecks, callsReconciled, checkCalls } from "./call-checks.ts";

export interface ReconcileReport extends CallChecks {
  accounts: number;
  transactions: number;
  /** Sum of every entry ever posted: zero in a balanced ledger. */
  ledgerTotal: number;
  mismatches: { accountId: string; kind: string; balance: number; entries: number }[];
  unbalancedTransactions: string[];
  /**
   * Holds whose count of paid calls differs from the invocations charged to them, or whose close
   * posted something other than what they recorded as spent and left unspent (an empty list when
   * every charge is both recorded and posted).
   */
  mismatchedHolds: string[];
  /** Held accounts whose balance is not what their payer's open holds set aside. */
  mismatchedHeld: string[];
  /**
   * Model cost holds (decision 062) whose postings differ from what they recorded as spent and
   * released, or whose call's model cost (not paid by its price) is not what they posted.
   */
  mismatchedModelCostHolds: string[];
  /** Model cost postings of prepaid calls that moved money into a debt account (usage never makes debt). */
  usageDebts: string[];
  /**
   * Wallet payments whose chargeback parts (decision 045) do not add up to what was taken back
   * from them, or name a reversal the ledger does not have.
   */
  mismatchedChargebacks: string[];
  /** x402 payments whose settlement, call, charge and posting disagree (agent-payments/x402-checks.ts). */
  mismatchedX402Payments: string[];
  /**
   * Users whose wallet holds money while they are in debt (decision 028: money into a wallet pays
   * its owner's debt first, so the two never stand side by side; such a payer would be refused
   * `account_in_debt` with money in the wallet).
   */
  walletsBesideDebts: string[];
  ok: boolean;
}

/**
 * Every list of differences a reconcile reports, by name: each must be empty. They are the
 * report's array fields (the counts and `ok` are not lists), so a list added to the report is
 * judged without being named twice.
 */
export function reconcileLists(report: ReconcileReport): Record<string, unknown[]> {
  return Object.fromEntries(
    Object.entries(report).filter((entry): entry is [string, unknown[]] => Array.isArray(entry[1])),
  );
}

/**
 * Checks that every balance equals the sum of its entries, every transaction sums to zero, every
 * hold's paid calls are both recorded (invocations) and, once it is closed, posted, and every
 * answered call is charged exactly once or free (`checkCalls`, call-checks.ts).
 */
export async function reconcile(db: Database): Promise<ReconcileReport> {
  const rows = await queryRows<{ id: string; kind: string; balance: string; entries: string }>(
    db,
    sql`select a.id, a.kind, a.balance_micros::text as balance, coalesce(sum(e.amount_micros), 0)::text as entries
        from ledger_accounts a left join ledger_entries e on e.account_id = a.id group by a.id`,
  );
  const unbalanced = await queryRows<{ transaction_id: string }>(
    db,
    sql`select transaction_id from ledger_entries group by transaction_id having sum(amount_micros) <> 0`,
  );
  const [totals] = await queryRows<{ total: string; transactions: string }>(
    db,
    sql`select coalesce(sum(amount_micros), 0)::text as total, (select count(*) from ledger_transactions)::text as transactions from ledger_entries`,
  );
  // Every charged call names its hold, and a closed hold posted exactly what its calls spent.
  // (Holds from before decision 020 counted no calls and were posted call by call.) The calls of
  // days dropped by the retention count as what was folded of them before the drop (decision 038).
  const mismatchedHolds = await queryRows<{ id: string }>(
    db,
    sql`with charged as (
          select hold_id, sum(calls)::int as calls, sum(fee)::bigint as fee, sum(model_cost)::bigint as model_cost
          from (select hold_id, count(*) as calls, sum(fee_micros) as fee,
                  sum(model_cost_deducted_micros) as model_cost
                from invocations where hold_id is not null group by hold_id
                union all
                select hold_id, calls, fee_micros, model_cost_deducted_micros from dropped_hold_calls) c
          group by hold_id
        ), posted as (
          select t.reference,
            -sum(e.amount_micros) filter (where t.kind = 'settle') as settled,
            -sum(e.amount_micros) filter (where t.kind = 'release') as released
          from ledger_transactions t
          join ledger_entries e on e.transaction_id = t.id
          join ledger_accounts a on a.id = e.account_id and a.kind = 'held'
          where t.kind in ('settle', 'release') group by t.reference
        )
        select h.id from holds h
        left join charged c on c.hold_id = h.id
        left join posted p on p.reference = h.id::text
        where h.calls <> coalesce(c.calls, 0)
           or h.fee_micros <> coalesce(c.fee, 0) or h.model_cost_micros <> coalesce(c.model_cost, 0)
           or (h.calls > 0 and h.status <> 'held' and coalesce(p.settled, 0) <> h.settled_micros)
           or (h.status <> 'held' and coalesce(p.released, 0) <> h.amount_micros - h.settled_micros)
           or (h.status = 'held' and (p.settled is not null or p.released is not null))`,
  );
  // Money set aside and not yet posted is exactly what the open holds hold (one snapshot).
  const mismatchedHeld = await queryRows<{ id: string }>(
    db,
    sql`select a.id from ledger_accounts a
        left join (select payer_id, sum(micros) as micros from (
            select payer_id, amount_micros as micros from holds where status = 'held'
            -- A call's model cost held from its creator's wallet (decision 062) sits in the same account.
            union all select creator_id, amount_micros from model_cost_holds where status = 'held') h
          group by payer_id) o
          on o.payer_id = a.owner_id
        where a.kind = 'held' and a.balance_micros <> coalesce(o.micros, 0)`,
  );
  const modelCostHolds = await mismatchedModelCostHolds(db);
  // A refunded or disputed top-up: its parts (payer, creators) add up exactly to what
  // reversed_payments says was taken back, and each part names a posted reversal.
  const mismatchedChargebacks = await queryRows<{ id: string }>(
    db,
    sql`select p.id from payments p
        join reversed_payments r on r.payment_id = p.id
        left join (select payment_id, sum(amount_micros) as micros from chargeback_parts group by payment_id) c
          on c.payment_id = p.id
        where p.consumed_kind is distinct from 'subscription' and coalesce(c.micros, 0) <> r.reversed_cents * 10000
        union
        select distinct c.payment_id from chargeback_parts c
        where c.reference not like 'upgrade:%' and not exists (
          select 1 from ledger_transactions t where t.kind = 'reversal' and t.reference = c.reference)`,
  );
  const walletsBesideDebts = await queryRows<{ owner_id: string }>(
    db,
    sql`select w.owner_id::text from ledger_accounts w
        join ledger_accounts d on d.kind = 'debt' and d.owner_id = w.owner_id
        where w.kind = 'wallet' and w.balance_micros > 0 and d.balance_micros < 0
        order by w.owner_id`,
  );
  const mismatches = rows
    .filter((row) => row.balance !== row.entries)
    .map((row) => ({
      accountId: row.id,
      kind: row.kind,
      balance: Number(row.balance),
      entries: Number(row.entries),
    }));
  const ledgerTotal = Number(totals?.total ?? 0);
  const unbalancedTransactions = unbalanced.map((row) => row.transaction_id);
  const calls = await checkCalls(db);
  const x402 = await mismatchedX402Payments(db);
  return {
    ...calls,
    accounts: rows.length,
    transactions: Number(totals?.transactions ?? 0),
    ledgerTotal,
    mismatches,
    unbalancedTransactions,
    mismatchedHolds: mismatchedHolds.map((row) => row.id),
    mismatchedHeld: mismatchedHeld.map((row) => row.id),
    mismatchedModelCostHolds: modelCostHolds.mismatched,
    usageDebts: modelCostHolds.debts,
    mismatchedChargebacks: mismatchedChargebacks.map((row) => row.id),
    mismatchedX402Payments: x402,
    walletsBesideDebts: walletsBesideDebts.map((row) => row.owner_id),
    ok:
      mismatches.length === 0 &&
      unbalancedTransactions.length === 0 &&
      mismatchedHolds.length === 0 &&
      mismatchedHeld.length === 0 &&
      modelCostHolds.mismatched.length === 0 &&
      modelCostHolds.debts.length === 0 &&
      mismatchedChargebacks.length === 0 &&
      x402.length === 0 &&
      walletsBesideDebts.length === 0 &&
      ledgerTotal === 0 &&
      callsReconciled(calls),
  };
}

/**
 * Every closed model cost hold (decision 062) posted exactly what it recorded: `model_cost` =
 * `spent_micros`, `release` = what the hold did not spend, nothing while it is open; the call's
 * invocation (while its day is kept) cost its price did not pay = `spent + overrun`, and is marked
 * posted so the sweep of model costs never takes it again. And no such posting touched a debt.
 */
async function mismatchedModelCostHolds(db: Database): Promise<{ mismatched: string[]; debts: string[] }> {
  const mismatched = await queryRows<{ id: string }>(
    db,
    sql`with posted as (
          select t.reference,
            sum(e.amount_micros) filter (where t.kind = 'model_cost' and a.kind = 'model_cost') as cost,
            -sum(e.amount_micros) filter (where t.kind = 'model_cost' and a.kind = 'held') as from_held,
            sum(e.amount_micros) filter (where t.kind = 'release' and a.kind = 'wallet') as released
          from ledger_transactions t
          join ledger_entries e on e.transaction_id = t.id
          join ledger_accounts a on a.id = e.account_id
          where t.kind in ('model_cost', 'release') and t.reference in (select id::text from model_cost_holds)
          group by t.reference
        )
        select h.id::text from model_cost_holds h
        left join posted p on p.reference = h.id::text
        left join invocations i on i.id = h.id
        where (h.status = 'held' and (p.cost is not null or p.released is not null))
           or (h.status <> 'held' and (coalesce(p.cost, 0) <> h.spent_micros
               or coalesce(p.released, 0) <> h.amount_micros - coalesce(p.from_held, 0)))
           or (i.id is not null and h.status <> 'held' and (i.model_cost_posted_at is null
               or i.model_cost_micros - i.model_cost_deducted_micros <> h.spent_micros + h.overrun_micros))`,
  );
  const debts = await queryRows<{ reference: string }>(
    db,
    sql`select distinct t.reference from ledger_transactions t
        join ledger_entries e on e.transaction_id = t.id
        join ledger_accounts a on a.id = e.account_id and a.kind = 'debt'
        where t.kind in ('hold', 'model_cost', 'release') and t.reference in (select id::text from model_cost_holds)`,
  );
  return { mismatched: mismatched.map((row) => row.id), debts: debts.map((row) => row.reference) };
}
