import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import {
  callsWithoutTheirEvent,
  duplicateEvents,
  type ExportMismatch,
  exportsUnlikeTheLog,
  ledgerWithoutTheirEvent,
} from "../events/event-checks.ts";
import { mismatchedAgentRefunds, mismatchedMppPayments } from "./agent-payments/agent-checks.ts";
import { mismatchedX402Payments, x402TransferDifferences } from "./agent-payments/x402-checks.ts";
import type { ReceivedTransfer } from "./agent-payments/x402-rail.ts";
import {
  doubleCovered,
  mischargedPeriods,
  miscountedPeriods,
  overdueHolds,
  overusedPeriods,
  type PeriodCount,
  unchargedSuccesses,
  unconsumedPayments,
} from "./call-checks.ts";
import { sponsoredMisfits } from "./sponsored/sponsored-checks.ts";

/**
 * The reconcile is a list of named checks (`RECONCILE_CHECKS`). Each check is one entry:
 *
 *   check({
 *     name: "walletsBesideDebts",         // its list in the report, and its name in a FAIL line
 *     differs: "wallets holding money while their owner is in debt",   // what a row means
 *     rows: (db) => …,                    // the offending rows: empty when the check holds
 *     describe: (row) => `user ${row}`,  // one row with its ids and amounts (ids: `String`)
 *   }),
 *
 * Adding a check is adding an entry: the report gains its list (typed from `rows`), `ok` and
 * `npm run reconcile` judge it, and the money attack's judge flags its rows (`reconcileLists`).
 * A failing check prints one line, `FAIL <name>: <differs> (<rows>)` (reconcile-report.ts).
 * The checks run side by side, each its own query (its own snapshot, as before). A new check goes
 * at the end of the list, with a test in reconcile-report.test.ts that makes it fail.
 */
export interface ReconcileCheck<Name extends string, Row> {
  name: Name;
  differs: string;
  rows: (db: Database, options: ReconcileOptions) => Promise<Row[]>;
  describe: (row: Row) => string;
}

/** What a reconcile may compare the ledger with beyond the database. */
export interface ReconcileOptions {
  /**
   * The transfers to the x402 receiving address (X402Rail.transfersToPayTo, a test's chain),
   * compared with `x402_clearing` payment by payment (decision 064); not compared when absent.
   */
  x402Transfers?: ReceivedTransfer[];
}

function check<Name extends string, Row>(entry: ReconcileCheck<Name, Row>): ReconcileCheck<Name, Row> {
  return entry;
}

/** A user with money in the wallet beside a debt (micro-dollars; the debt is negative). */
export interface WalletBesideDebt {
  ownerId: string;
  walletMicros: number;
  debtMicros: number;
}

/**
 * A reversed wallet payment whose chargeback parts do not add up to what was taken back (micros),
 * or one of whose parts names a reversal the ledger does not have (`missingReversal`).
 */
export interface MismatchedChargeback {
  paymentId: string;
  reversedMicros: number | null;
  partsMicros: number | null;
  missingReversal: string | null;
}

/** An account whose balance is not the sum of its entries (micro-dollars). */
export interface AccountMismatch {
  accountId: string;
  kind: string;
  balance: number;
  entries: number;
}

const period = (row: PeriodCount) =>
  `subscription ${row.subscriptionId} period ${row.periodStart}: ${row.counted} ≠ ${row.expected}`;

export const RECONCILE_CHECKS = [
  check({
    name: "mismatches",
    differs: "accounts whose balance is not the sum of their entries",
    rows: accountMismatches,
    describe: (row: AccountMismatch) =>
      `${row.kind} account ${row.accountId}: balance ${row.balance} ≠ entries ${row.entries} micros`,
  }),
  check({
    name: "unbalancedTransactions",
    differs: "transactions whose entries do not sum to zero",
    rows: async (db) =>
      (
        await queryRows<{ transaction_id: string }>(
          db,
          sql`select transaction_id from ledger_entries group by transaction_id having sum(amount_micros) <> 0`,
        )
      ).map((row) => row.transaction_id),
    describe: String,
  }),
  check({
    name: "unbalancedLedger",
    differs: "every entry ever posted does not sum to zero",
    rows: async (db) => {
      const [row] = await queryRows<{ total: string }>(
        db,
        sql`select coalesce(sum(amount_micros), 0)::text as total from ledger_entries`,
      );
      const total = Number(row?.total ?? 0);
      return total === 0 ? [] : [{ totalMicros: total }];
    },
    describe: (row: { totalMicros: number }) => `entries sum to ${row.totalMicros} micros`,
  }),
  check({
    name: "mismatchedHolds",
    // Every charged call names its hold, and a closed hold posted exactly what its calls spent.
    // (Holds from before decision 020 counted no calls and were posted call by call.) The calls
    // of days dropped by the retention count as what was folded of them before the drop
    // (decision 038).
    differs:
      "holds whose paid calls differ from the invocations charged to them, or whose close posted something other than what they spent and left unspent",
    rows: (db) => ids(db, HOLDS_SQL),
    describe: String,
  }),
  check({
    name: "mismatchedHeld",
    // Money set aside and not yet posted is exactly what the open holds hold (one snapshot).
    differs: "held accounts whose balance is not what their payer's open holds set aside",
    rows: (db) => ids(db, HELD_SQL),
    describe: String,
  }),
  check({
    name: "mismatchedModelCostHolds",
    // Decision 062: a closed model cost hold posted exactly what it recorded (`model_cost` =
    // `spent_micros`, `release` = what it did not spend, nothing while open); its call's invocation
    // (while its day is kept) cost its price did not pay = spent + overrun, marked posted so the
    // sweep of model costs never takes it again.
    differs:
      "model cost holds whose postings differ from what they spent and released, or from their call's model cost",
    rows: (db) => ids(db, MODEL_COST_HOLDS_SQL),
    describe: String,
  }),
  check({
    name: "usageDebts",
    // Usage never makes debt (decision 062): only reversals (refunds, disputes) do.
    differs: "model cost holds whose postings moved money into a debt account",
    rows: (db) => ids(db, USAGE_DEBTS_SQL),
    describe: String,
  }),
  check({
    name: "mismatchedChargebacks",
    // A refunded or disputed top-up: its parts (payer, creators) add up exactly to what
    // reversed_payments says was taken back, and each part names a posted reversal (decision 045).
    differs:
      "reversed payments whose chargeback parts do not add up to what was taken back, or name a reversal the ledger does not have",
    rows: mismatchedChargebacks,
    describe: (row: MismatchedChargeback) =>
      row.missingReversal === null
        ? `payment ${row.paymentId}: took back ${row.reversedMicros} micros, its parts ${row.partsMicros}`
        : `payment ${row.paymentId}: a part names reversal ${row.missingReversal}, not in the ledger`,
  }),
  check({
    name: "mismatchedX402Payments",
    differs:
      "x402 payments whose settlement, answered call, charge and posting disagree, or that are unpaid (agent-payments/x402-checks.ts)",
    rows: mismatchedX402Payments,
    describe: String,
  }),
  check({
    name: "mismatchedMppPayments",
    differs:
      "MPP payments whose status and `mpp_credit` posting disagree (agent-payments/agent-checks.ts, decision 070)",
    rows: mismatchedMppPayments,
    describe: String,
  }),
  check({
    name: "mismatchedAgentRefunds",
    differs:
      "agents' refunds whose amount, postings and status disagree, or `refunds_owed` unlike what is owed (decision 070)",
    rows: mismatchedAgentRefunds,
    describe: String,
  }),
  check({
    name: "x402TransfersDiffer",
    differs:
      "x402 payments whose cleared amount differs from what reached the receiving address on chain (decision 064)",
    rows: (db, options) =>
      options.x402Transfers ? x402TransferDifferences(db, options.x402Transfers) : Promise.resolve([]),
    describe: String,
  }),
  check({
    name: "walletsBesideDebts",
    // Decision 028: money into a wallet pays its owner's debt first, so the two never stand side
    // by side; such a payer would be refused `account_in_debt` with money in the wallet.
    differs: "users whose wallet holds money while they are in debt",
    rows: walletsBesideDebts,
    describe: (row: WalletBesideDebt) =>
      `user ${row.ownerId}: wallet ${row.walletMicros} micros, debt ${row.debtMicros} micros`,
  }),
  check({
    name: "unchargedSuccesses",
    differs: "successful, non-free invocations nothing paid for",
    rows: unchargedSuccesses,
    describe: String,
  }),
  check({
    name: "doubleCovered",
    differs: "invocations paid by both a hold and a plan, or whose price disagrees with how they were paid",
    rows: doubleCovered,
    describe: String,
  }),
  check({
    name: "overusedPeriods",
    differs: "plan periods that covered more included calls than their terms allow (counted ≠ allowed)",
    rows: overusedPeriods,
    describe: period,
  }),
  check({
    name: "mischargedPeriods",
    differs: "plan periods charged other than their terms' price (charged ≠ price, cents)",
    rows: mischargedPeriods,
    describe: period,
  }),
  check({
    name: "miscountedPeriods",
    differs: "current plan periods whose calls_used differs from the calls counted (counted ≠ calls_used)",
    rows: miscountedPeriods,
    describe: period,
  }),
  check({
    name: "overdueHolds",
    differs: "holds still open more than a sweep interval after they expired",
    rows: overdueHolds,
    describe: String,
  }),
  check({
    name: "unconsumedPayments",
    differs: "succeeded payments not turned into exactly one subscription or wallet credit",
    rows: unconsumedPayments,
    describe: String,
  }),
  // The event log (decision 068): every fact has exactly one event with its money, every sink
  // exported exactly the log's events up to its cursor.
  check({
    name: "callsWithoutEvents",
    differs: "charged calls whose event does not say their charge, or call events without their call",
    rows: callsWithoutTheirEvent,
    describe: String,
  }),
  check({
    name: "ledgerWithoutEvents",
    differs: "visible ledger movements without exactly their event (or events without their movement)",
    rows: ledgerWithoutTheirEvent,
    describe: String,
  }),
  check({
    name: "duplicateEvents",
    differs: "event ids written more than once",
    rows: duplicateEvents,
    describe: String,
  }),
  check({
    name: "exportsUnlikeLog",
    differs: "sinks whose exported events or money differ from the log's up to their cursor",
    rows: exportsUnlikeTheLog,
    describe: (row: ExportMismatch) =>
      `${row.sink} ${row.day} ${row.type} app ${row.applicationId}: exported ${row.exported} (${row.exportedMicros} micros) ≠ logged ${row.logged} (${row.loggedMicros} micros)`,
  }),
  // Online evals (decision 076): each judged row's cost is what its judge calls took from its
  // creator's wallet (never a consumer's), and no app's day spent more than its cap.
  check({
    name: "onlineEvalMismatches",
    differs: "online eval rows whose cost is not what their judge calls took from the creator's wallet",
    rows: onlineEvalMismatches,
    describe: (row: OnlineEvalMismatch) =>
      `online eval ${row.result_id}: row ${row.row_micros} ≠ charged ${row.charged_micros} micros`,
  }),
  check({
    name: "onlineEvalDaysOverCap",
    differs: "apps whose online evals spent more on a UTC day than its daily cap",
    rows: onlineEvalDaysOverCap,
    describe: (row: OnlineEvalDayOverCap) =>
      `app ${row.application_id} on ${row.day}: spent ${row.spent_micros} > cap ${row.cap_micros} micros`,
  }),
  // Free trials and promotion codes (decision 080): every sponsored call paid by its creator and
  // charged 0 to its consumer, no code past its limit, no grant below zero, one trial per account.
  check({
    name: "sponsoredMisfits",
    differs:
      "sponsored calls not paid by their creator, codes past their limit, grants below zero, or trials taken twice",
    rows: sponsoredMisfits,
    describe: String,
  }),
] as const;

/** An online eval row whose cost differs from what its judges' holds took from its app's owner. */
export interface OnlineEvalMismatch {
  result_id: string;
  row_micros: number;
  charged_micros: number;
}

/** An app's online eval spend on a day above the highest cap reserved against that day. */
export interface OnlineEvalDayOverCap {
  application_id: string;
  day: string;
  spent_micros: number;
  cap_micros: number;
}

/**
 * Closed online eval rows against their judge calls' model cost holds (the hold id is the judge's
 * invocation id): only holds of the app's owner count, so a judge charged to anyone else shows.
 */
async function onlineEvalMismatches(db: Database): Promise<OnlineEvalMismatch[]> {
  const rows = await queryRows<{ result_id: string; row_micros: string; charged_micros: string }>(
    db,
    sql`select r.id as result_id, r.cost_micros::text as row_micros,
               coalesce((select sum(h.spent_micros + h.overrun_micros) from model_cost_holds h
                         where h.id = any(r.judge_invocation_ids) and h.creator_id = a.owner_id), 0)::text
                 as charged_micros
        from online_eval_results r join applications a on a.id = r.application_id
        where r.status not in ('pending', 'running')
          and (r.cost_micros <> 0 or cardinality(r.judge_invocation_ids) > 0)`,
  );
  return rows
    .map((row) => ({
      result_id: row.result_id,
      row_micros: Number(row.row_micros),
      charged_micros: Number(row.charged_micros),
    }))
    .filter((row) => row.row_micros !== row.charged_micros);
}

async function onlineEvalDaysOverCap(db: Database): Promise<OnlineEvalDayOverCap[]> {
  const rows = await queryRows<{ application_id: string; day: string; spent: string; cap: string | null }>(
    db,
    sql`select r.application_id, r.cap_day::text as day, sum(r.cost_micros)::text as spent,
               max(d.cap_micros)::text as cap
        from online_eval_results r
        left join online_eval_days d on d.application_id = r.application_id and d.day = r.cap_day
        where r.cap_day is not null
        group by r.application_id, r.cap_day
        having sum(r.cost_micros) > coalesce(max(d.cap_micros), 0)`,
  );
  return rows.map((row) => ({
    application_id: row.application_id,
    day: row.day,
    spent_micros: Number(row.spent),
    cap_micros: Number(row.cap ?? 0),
  }));
}

type Check = (typeof RECONCILE_CHECKS)[number];

/** Each check's offending rows under its name: every list empty in a reconciled ledger. */
export type ReconcileLists = { [C in Check as C["name"]]: Awaited<ReturnType<C["rows"]>> };

export type ReconcileReport = ReconcileLists & {
  accounts: number;
  transactions: number;
  /** Sum of every entry ever posted, in micro-dollars: zero in a balanced ledger. */
  ledgerTotal: number;
  /** True when every check's list is empty. */
  ok: boolean;
};

/** Every list of differences a reconcile reports, by its check's name: each must be empty. */
export function reconcileLists(report: ReconcileReport): Record<string, unknown[]> {
  return Object.fromEntries(RECONCILE_CHECKS.map((entry) => [entry.name, report[entry.name] as unknown[]]));
}

/** Runs every check of `RECONCILE_CHECKS`, with the ledger's counts. */
export async function reconcile(db: Database, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const [totals] = await queryRows<{ accounts: string; total: string; transactions: string }>(
    db,
    sql`select (select count(*) from ledger_accounts)::text as accounts,
          (select coalesce(sum(amount_micros), 0) from ledger_entries)::text as total,
          (select count(*) from ledger_transactions)::text as transactions`,
  );
  const found = await Promise.all(RECONCILE_CHECKS.map((entry) => entry.rows(db, options)));
  const lists = Object.fromEntries(RECONCILE_CHECKS.map((entry, i) => [entry.name, found[i]]));
  return {
    ...(lists as ReconcileLists),
    accounts: Number(totals?.accounts ?? 0),
    transactions: Number(totals?.transactions ?? 0),
    ledgerTotal: Number(totals?.total ?? 0),
    ok: found.every((rows) => rows.length === 0),
  };
}

/** The report with every list empty: a clean ledger (for tests that build reports by hand). */
export function cleanReconcileReport(): ReconcileReport {
  const lists = Object.fromEntries(RECONCILE_CHECKS.map((entry) => [entry.name, []]));
  return { ...(lists as unknown as ReconcileLists), accounts: 0, transactions: 0, ledgerTotal: 0, ok: true };
}

async function accountMismatches(db: Database): Promise<AccountMismatch[]> {
  const rows = await queryRows<{ id: string; kind: string; balance: string; entries: string }>(
    db,
    sql`select a.id, a.kind, a.balance_micros::text as balance, coalesce(sum(e.amount_micros), 0)::text as entries
        from ledger_accounts a left join ledger_entries e on e.account_id = a.id group by a.id
        having a.balance_micros <> coalesce(sum(e.amount_micros), 0)`,
  );
  return rows.map((row) => ({
    accountId: row.id,
    kind: row.kind,
    balance: Number(row.balance),
    entries: Number(row.entries),
  }));
}

async function ids(db: Database, query: ReturnType<typeof sql>): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(db, query);
  return rows.map((row) => row.id);
}

const HOLDS_SQL = sql`with charged as (
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
           or (h.status = 'held' and (p.settled is not null or p.released is not null))`;

const HELD_SQL = sql`select a.id from ledger_accounts a
        left join (select payer_id, sum(micros) as micros from (
            select payer_id, amount_micros as micros from holds where status = 'held'
            -- A call's model cost held from its creator's wallet (decision 062) sits in the same account.
            union all select creator_id, amount_micros from model_cost_holds where status = 'held') h
          group by payer_id) o
          on o.payer_id = a.owner_id
        where a.kind = 'held' and a.balance_micros <> coalesce(o.micros, 0)`;

const MODEL_COST_HOLDS_SQL = sql`with posted as (
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
        select h.id::text as id from model_cost_holds h
        left join posted p on p.reference = h.id::text
        left join invocations i on i.id = h.id
        where (h.status = 'held' and (p.cost is not null or p.released is not null))
           or (h.status <> 'held' and (coalesce(p.cost, 0) <> h.spent_micros
               or coalesce(p.released, 0) <> h.amount_micros - coalesce(p.from_held, 0)))
           or (i.id is not null and h.status <> 'held' and (i.model_cost_posted_at is null
               or i.model_cost_micros - i.model_cost_deducted_micros <> h.spent_micros + h.overrun_micros)
               -- Superseded: released for a sponsored call whose creator could not pay, which its
               -- caller then paid (their wallet or plan, decision 080), so the call's model cost
               -- never went through this hold.
               and h.superseded_at is null)`;

const USAGE_DEBTS_SQL = sql`select distinct t.reference as id from ledger_transactions t
        join ledger_entries e on e.transaction_id = t.id
        join ledger_accounts a on a.id = e.account_id and a.kind = 'debt'
        where t.kind in ('hold', 'model_cost', 'release') and t.reference in (select id::text from model_cost_holds)`;

async function mismatchedChargebacks(db: Database): Promise<MismatchedChargeback[]> {
  const rows = await queryRows<{
    id: string;
    reversed: string | null;
    parts: string | null;
    missing_reversal: string | null;
  }>(
    db,
    sql`select p.id, (r.reversed_cents * 10000)::text as reversed, coalesce(c.micros, 0)::text as parts,
          null as missing_reversal
        from payments p
        join reversed_payments r on r.payment_id = p.id
        left join (select payment_id, sum(amount_micros) as micros from chargeback_parts group by payment_id) c
          on c.payment_id = p.id
        where p.consumed_kind is distinct from 'subscription' and coalesce(c.micros, 0) <> r.reversed_cents * 10000
        union
        select c.payment_id, null, null, c.reference from chargeback_parts c
        where c.reference not like 'upgrade:%' and not exists (
          select 1 from ledger_transactions t where t.kind = 'reversal' and t.reference = c.reference)`,
  );
  return rows.map((row) => ({
    paymentId: row.id,
    reversedMicros: row.reversed === null ? null : Number(row.reversed),
    partsMicros: row.parts === null ? null : Number(row.parts),
    missingReversal: row.missing_reversal,
  }));
}

async function walletsBesideDebts(db: Database): Promise<WalletBesideDebt[]> {
  const rows = await queryRows<{ id: string; wallet: string; debt: string }>(
    db,
    sql`select w.owner_id::text as id, w.balance_micros::text as wallet, d.balance_micros::text as debt
        from ledger_accounts w
        join ledger_accounts d on d.kind = 'debt' and d.owner_id = w.owner_id
        where w.kind = 'wallet' and w.balance_micros > 0 and d.balance_micros < 0
        order by w.owner_id`,
  );
  return rows.map((row) => ({
    ownerId: row.id,
    walletMicros: Number(row.wallet),
    debtMicros: Number(row.debt),
  }));
}
