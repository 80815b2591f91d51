import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { centsToMicros } from "../../lib/money.ts";
import { type AccountKind, accountFor, postTransaction } from "../billing/postings.ts";

/**
 * Every ledger movement of a payout, and the availability of a creator's earnings: the only file
 * of the payouts module that reads or writes ledger amounts (docs/decisions/027). A payout is whole
 * cents (what can leave the platform); the ledger counts micro-dollars (decision 030).
 */

/** The ledger transaction kinds of payouts; each is posted once per payout (its id is the reference). */
export const PAYOUT_TRANSACTION_KINDS = ["payout", "payout_paid", "payout_return"] as const;
type PayoutTransactionKind = (typeof PAYOUT_TRANSACTION_KINDS)[number];

async function post(
  tx: Database,
  kind: PayoutTransactionKind,
  payoutId: string,
  description: string,
  from: string,
  to: string,
  cents: number,
): Promise<boolean> {
  const units = centsToMicros(cents);
  const posted = await postTransaction(tx, {
    kind,
    reference: payoutId,
    description,
    entries: [
      { accountId: from, amountMicros: -units },
      { accountId: to, amountMicros: units },
    ],
  });
  return posted !== undefined;
}

const account = (tx: Database, kind: AccountKind, ownerId: string | null) => accountFor(tx, kind, ownerId);

/**
 * Locks the creator's earnings, their debt (decision 045) and the platform's payouts account, in
 * id order like every posting, for the rest of the caller's transaction: two withdrawals of one
 * creator run one after the other, and the second sees what the first took.
 */
export async function lockPayoutAccounts(tx: Database, creatorId: string): Promise<void> {
  const ids = [
    await account(tx, "earnings", creatorId),
    await account(tx, "payouts", null),
    await account(tx, "debt", creatorId),
  ];
  await queryRows(
    tx,
    sql`select id from ledger_accounts where id in (${ids[0]}::uuid, ${ids[1]}::uuid, ${ids[2]}::uuid) order by id for update`,
  );
}

/**
 * A creator's debt (a chargeback took back earnings already paid out, decision 045) is paid from
 * their available earnings before anything is paid out: earnings → debt, in the caller's
 * transaction, under `lockPayoutAccounts`. Answers what it settled.
 */
export async function settleDebtFromEarnings(
  tx: Database,
  creatorId: string,
  availableMicros: number,
): Promise<number> {
  const debt = await account(tx, "debt", creatorId);
  const [row] = await queryRows<{ balance: string }>(
    tx,
    sql`select balance_micros::text as balance from ledger_accounts where id = ${debt}::uuid`,
  );
  const amount = Math.min(Math.max(0, -Number(row?.balance ?? 0)), availableMicros);
  if (amount <= 0) return 0;
  await postTransaction(tx, {
    kind: "reversal",
    reference: `debt:earnings:${crypto.randomUUID()}`,
    description: "Owed after a chargeback, settled from your earnings",
    entries: [
      { accountId: await account(tx, "earnings", creatorId), amountMicros: -amount },
      { accountId: debt, amountMicros: amount },
    ],
  });
  return amount;
}

/** Withdraw: the creator's earnings → the platform's payouts account (money on its way out). */
export async function postWithdrawal(
  tx: Database,
  payout: { id: string; creatorId: string; amountCents: number },
) {
  const earnings = await account(tx, "earnings", payout.creatorId);
  const payouts = await account(tx, "payouts", null);
  return post(tx, "payout", payout.id, "Payout to your bank account", earnings, payouts, payout.amountCents);
}

/** The bank received it: the payouts account → clearing (money that left the platform). */
export async function postPayoutPaid(tx: Database, payout: { id: string; amountCents: number }) {
  const payouts = await account(tx, "payouts", null);
  const clearing = await account(tx, "clearing", null);
  return post(tx, "payout_paid", payout.id, "Payout paid", payouts, clearing, payout.amountCents);
}

/**
 * A failed or reversed payout's money back to the creator's earnings, available at once; once per
 * payout whatever events report it. From the payouts account, or from clearing when it had been
 * reported paid (a payout can fail after `payout.paid`; the money came back from outside).
 */
export async function postPayoutReturn(
  tx: Database,
  payout: { id: string; creatorId: string; amountCents: number },
  options: { wasPaid: boolean; reason: string },
) {
  const from = await account(tx, options.wasPaid ? "clearing" : "payouts", null);
  const earnings = await account(tx, "earnings", payout.creatorId);
  return post(
    tx,
    "payout_return",
    payout.id,
    `Payout returned: ${options.reason}`,
    from,
    earnings,
    payout.amountCents,
  );
}

export interface Availability {
  /** Ledger units of the earnings account. */
  balance: number;
  /** What can be paid out now (ledger units). */
  available: number;
  /**
   * What stays unpaid while plans' included calls are still to come (ledger units; issue 37,
   * docs/decisions/062): the share of each current prompt-app plan period's earnings its unused
   * included calls stand for. Their model cost is taken from the earnings when they are made,
   * so it must still be there: usage never makes debt.
   */
  reserved: number;
  /** Money still in its hold period, by the moment it becomes available (ledger units). */
  pending: { amount: number; availableAt: Date }[];
}

/**
 * What a creator may be paid: credits to their earnings older than the hold period, and a
 * returned payout's money at once; every debit (a payout, a reversed plan payment) comes out of
 * the available part first. The ledger credits earnings only from paid calls and plan payments, and
 * wallets only from succeeded payments, so only money that was really received is paid out.
 * `now` is the payouts clock (the sandbox's test clock moves it ahead).
 */
export async function availability(
  db: Database,
  creatorId: string,
  now: Date,
  holdDays: number,
): Promise<Availability> {
  const holdMs = Math.round(holdDays * 86_400_000);
  const cutoff = new Date(now.getTime() - holdMs);
  const rows = await queryRows<{ day: string | null; amount: string; latest: string | Date | null }>(
    db,
    sql`with acct as (
          select id, balance_micros as balance from ledger_accounts where kind = 'earnings' and owner_id = ${creatorId}
        )
        select null::text as day, coalesce((select balance from acct), 0)::text as amount, null::timestamptz as latest
        union all
        select to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD') as day, sum(e.amount_micros)::text as amount,
          max(e.created_at) as latest
        from ledger_entries e join ledger_transactions t on t.id = e.transaction_id
        where e.account_id = (select id from acct) and e.amount_micros > 0
          and e.created_at > ${cutoff.toISOString()}::timestamptz and t.kind <> 'payout_return'
        group by 1`,
  );
  const balance = Number(rows.find((row) => row.day === null)?.amount ?? 0);
  const reserve = await includedCallsReserve(db, creatorId, now);
  const recent = rows
    .filter((row) => row.day !== null)
    .map((row) => ({
      amount: Number(row.amount),
      availableAt: new Date(new Date(row.latest ?? 0).getTime() + holdMs),
    }))
    .sort((a, b) => a.availableAt.getTime() - b.availableAt.getTime());
  const recentTotal = recent.reduce((sum, part) => sum + part.amount, 0);
  const matured = Math.max(0, balance - recentTotal);
  const reserved = Math.min(matured, reserve);
  const available = matured - reserved;
  // Debits beyond the matured money come out of the earliest pending parts (they become
  // available later, never sooner).
  let shortfall = Math.max(0, recentTotal - balance);
  const pending: Availability["pending"] = [];
  for (const part of recent) {
    const taken = Math.min(shortfall, part.amount);
    shortfall -= taken;
    if (part.amount - taken > 0) pending.push({ amount: part.amount - taken, availableAt: part.availableAt });
  }
  return { balance, available, reserved, pending };
}

/**
 * The part of a creator's plan earnings whose included calls are still to come: for each active
 * subscription to one of their prompt apps (a workflow's provider bills its creator, not the
 * platform) whose period has not ended, what the period's payment credited to their earnings ×
 * unused included calls / included calls. The price guard keeps a plan's share per included call
 * at or above that call's worst-case model cost (decision 026), so what is reserved covers the
 * model cost the sweep will take for those calls (billing/model-costs.ts) even after every other
 * cent is paid out. It shrinks as calls are made and is released whole when the period ends.
 */
async function includedCallsReserve(db: Database, creatorId: string, now: Date): Promise<number> {
  const [row] = await queryRows<{ reserve: string }>(
    db,
    sql`select coalesce(sum(floor(credited.micros * greatest(s.calls_included - s.calls_used, 0)::numeric
              / s.calls_included)), 0)::text as reserve
        from subscriptions s
        join applications a on a.id = s.application_id and a.owner_id = ${creatorId}::uuid and a.type = 'prompt'
        cross join lateral (
          select coalesce(sum(e.amount_micros), 0) as micros from ledger_entries e
          join ledger_accounts acct on acct.id = e.account_id and acct.kind = 'earnings' and acct.owner_id = a.owner_id
          where e.transaction_id = s.period_transaction_id
        ) credited
        where s.status = 'active' and s.current_period_end > ${now.toISOString()}::timestamptz
          and s.calls_included > 0 and s.period_transaction_id is not null`,
  );
  return Math.max(0, Number(row?.reserve ?? 0));
}

/** A creator's earnings lines for the statement: every entry of their earnings account, oldest first. */
export async function earningsLines(
  db: Database,
  creatorId: string,
): Promise<{ at: Date; kind: string; reference: string; description: string; amount: number }[]> {
  const rows = await queryRows<{
    at: string | Date;
    kind: string;
    reference: string;
    description: string;
    amount: string;
  }>(
    db,
    sql`select e.created_at as at, t.kind, t.reference, t.description, e.amount_micros::text as amount
        from ledger_entries e
        join ledger_transactions t on t.id = e.transaction_id
        join ledger_accounts a on a.id = e.account_id
        where a.kind = 'earnings' and a.owner_id = ${creatorId}
        order by e.id`,
  );
  return rows.map((row) => ({ ...row, at: new Date(row.at), amount: Number(row.amount) }));
}
