import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { ledgerAccounts } from "../../db/schema/index.ts";
import { centsToMicros } from "./money.ts";

/**
 * Per user: `wallet`, `held` (set aside for calls in flight), `earnings`, `debt` (what they owe, as
 * a negative balance). The platform's: `platform_fee`, `model_cost` (creators' shares paid to the
 * model vendors), `payouts` (on its way to creators' banks), `clearing` (money from outside).
 */
export type AccountKind =
  | "wallet"
  | "held"
  | "earnings"
  | "debt"
  | "platform_fee"
  | "clearing"
  | "x402_clearing"
  | "model_cost"
  | "payouts"
  /** What account-less payers asked back of their balances, until their rail pays it (issue 40). */
  | "refunds_owed";
export type TransactionKind =
  | "top_up"
  | "hold"
  | "settle"
  | "release"
  | "reversal"
  | "subscription"
  | "model_cost"
  | "payout"
  | "payout_paid"
  | "payout_return"
  | "x402_payment"
  /** An x402 payment kept for its payer: no answer was given for it (decision 064). */
  | "x402_credit"
  /** An MPP payment paid into its payer's balance (issue 40). */
  | "mpp_credit"
  /** An account-less payer's balance asked back: wallet → refunds_owed. */
  | "agent_refund"
  /** A refund paid on the payer's rail: refunds_owed → clearing. */
  | "agent_refund_paid";

export class InsufficientFunds extends Error {}

/** The account of a kind for an owner (null for platform accounts), created on first use. */
export async function accountFor(db: Database, kind: AccountKind, ownerId: string | null): Promise<string> {
  const owner = ownerId ? eq(ledgerAccounts.ownerId, ownerId) : sql`${ledgerAccounts.ownerId} is null`;
  const [existing] = await db
    .select({ id: ledgerAccounts.id })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, kind), owner))
    .limit(1);
  if (existing) return existing.id;
  await db.insert(ledgerAccounts).values({ kind, ownerId }).onConflictDoNothing();
  const [created] = await db
    .select({ id: ledgerAccounts.id })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, kind), owner))
    .limit(1);
  if (!created) throw new Error(`could not create ${kind} account`);
  return created.id;
}

// Account ids never change once created, so the paid path resolves each (kind, owner) once per
// process and database (keyed by handle: tests run several databases in one process).
/**
 * Account ids remembered (they never change once made): the paid path's wallet and held accounts,
 * read once per payer. Only for the root handle, never for a transaction's. One per server (built
 * with the call payments, billing/call-payment/index.ts); start-up fills it with the recent
 * payers' accounts (warm-up.ts).
 */
export class AccountIds {
  private readonly ids = new Map<string, string>();
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /** accountFor, remembered. */
  async get(kind: AccountKind, ownerId: string | null): Promise<string> {
    const key = `${kind}:${ownerId ?? ""}`;
    const known = this.ids.get(key);
    if (known) return known;
    const id = await accountFor(this.db, kind, ownerId);
    this.ids.set(key, id);
    return id;
  }

  /**
   * Start-up (warm-up.ts): remembers the existing accounts of these kinds for these owners, in one
   * query, as `get` would have one by one. Answers how many.
   */
  async preload(kinds: AccountKind[], ownerIds: string[]): Promise<number> {
    if (ownerIds.length === 0) return 0;
    const rows = await this.db
      .select({ id: ledgerAccounts.id, kind: ledgerAccounts.kind, ownerId: ledgerAccounts.ownerId })
      .from(ledgerAccounts)
      .where(and(inArray(ledgerAccounts.kind, kinds), inArray(ledgerAccounts.ownerId, ownerIds)));
    for (const row of rows) this.ids.set(`${row.kind}:${row.ownerId ?? ""}`, row.id);
    return rows.length;
  }
}

/**
 * Posts one balanced transaction inside the caller's DB transaction. Balances move by conditional
 * updates (never below zero except `clearing`), in account-id order so concurrent postings cannot
 * deadlock. Returns the transaction's id, or undefined when a transaction with this (kind,
 * reference) was already posted.
 */
export async function postTransaction(
  tx: Database,
  posting: {
    kind: TransactionKind;
    reference: string;
    description: string;
    entries: { accountId: string; amountMicros: number }[];
  },
): Promise<string | undefined> {
  checkBalanced(posting.kind, posting.entries);
  // One statement: the transaction, its entries and the balances are written together, so the
  // event its kind may have (migration 0049's trigger, at commit) always sees its entries.
  const [row] = await queryRows<{ id: string | null; moved: number }>(
    tx,
    sql`with posted as (
          insert into ledger_transactions (kind, reference, description)
          values (${posting.kind}, ${posting.reference}, ${posting.description})
          on conflict do nothing returning id),
        ${balanceMoves(posting.entries)}
        select (select id from posted)::text as id, (select count(*) from moved)::int as moved`,
  );
  if (!row?.id) return undefined;
  if (row.moved < posting.entries.length) throw new InsufficientFunds("an account cannot cover its entry");
  return row.id;
}

function checkBalanced(kind: TransactionKind, entries: { amountMicros: number }[]) {
  const total = entries.reduce((sum, entry) => sum + entry.amountMicros, 0);
  if (total !== 0) throw new Error(`unbalanced ${kind} transaction: entries sum to ${total}`);
  if (entries.some((entry) => !Number.isSafeInteger(entry.amountMicros)))
    throw new Error("amounts must be integer micro-dollars");
}

type Entry = { accountId: string; amountMicros: number };

/**
 * The SQL that writes a posted transaction's entries and moves its balances, as CTEs to append to
 * a `with` list (`posted` must name the transaction's row). The accounts are locked in id order
 * first, so concurrent postings cannot deadlock; a balance may not go below zero except
 * `clearing` (nor above it for a `debt`). The statement's `moved` count below the number of entries means insufficient funds.
 */
function balanceMoves(entries: Entry[]): SQL {
  const ids = sql.join(
    entries.map((e) => sql`${e.accountId}::uuid`),
    sql`, `,
  );
  const values = sql.join(
    entries.map((e) => sql`(${e.accountId}::uuid, ${e.amountMicros}::bigint)`),
    sql`, `,
  );
  return sql`locked as (
      select id from ledger_accounts where id in (${ids}) order by id for update),
    deltas as (select * from (values ${values}) v(id, delta)),
    moved as (${sql.raw(moveBalancesSql("deltas", "locked", "exists (select 1 from posted)"))}),
    entries as (
      insert into ledger_entries (transaction_id, account_id, amount_micros)
      select posted.id, d.id, d.delta from posted, deltas d
      returning 1)`;
}

/**
 * The one way a statement moves ledger balances (postings here, and the call payment's hold and
 * close statements, billing/call-payment/holds.ts): each account in `totals` (a relation of `id,
 * delta`, one row per account) moves by its delta, only if the statement has locked it (`locked`,
 * taken in id order so no two statements deadlock) and `only` holds, and only within the balance
 * rule: a clearing account may go below zero (money on its way from outside), a debt account never
 * above zero, any other never below zero. Answers the ids it moved: a statement compares their
 * count with the accounts it meant to move, and aborts when one could not.
 */
export function moveBalancesSql(totals: string, locked: string, only = "true"): string {
  return `update ledger_accounts a set balance_micros = a.balance_micros + t.delta
     from ${totals} t
     where a.id = t.id and a.id in (select id from ${locked}) and ${only}
       and case a.kind when 'clearing' then true when 'x402_clearing' then true
                       when 'debt' then a.balance_micros + t.delta <= 0
                       else a.balance_micros + t.delta >= 0 end
     returning a.id`;
}

/**
 * Money from outside (a paid top-up) into a wallet, inside the caller's transaction, once per
 * reference; the transaction's id, or undefined when this reference was already posted.
 */
export async function postTopUp(
  tx: Database,
  options: { userId: string; amountCents: number; reference: string; description: string },
): Promise<string | undefined> {
  const [wallet, clearing] = await Promise.all([
    accountFor(tx, "wallet", options.userId),
    accountFor(tx, "clearing", null),
  ]);
  const amount = centsToMicros(options.amountCents);
  return postTransaction(tx, {
    kind: "top_up",
    reference: options.reference,
    description: options.description,
    entries: [
      { accountId: clearing, amountMicros: -amount },
      { accountId: wallet, amountMicros: amount },
    ],
  });
}

/** A top-up in its own transaction (seed data, tests). */
export async function creditTopUp(
  db: Database,
  options: { userId: string; amountCents: number; reference: string; description: string },
): Promise<boolean> {
  return (await db.transaction((tx) => postTopUp(tx as unknown as Database, options))) !== undefined;
}
