import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { holds, ledgerAccounts, ledgerEntries, ledgerTransactions } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";

export type AccountKind = "wallet" | "held" | "earnings" | "platform_fee" | "clearing";
type TransactionKind = "top_up" | "hold" | "settle" | "release" | "reversal" | "subscription";

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

/**
 * Posts one balanced transaction inside the caller's DB transaction. Balances move by conditional
 * updates (never below zero except `clearing`), in account-id order so concurrent postings cannot
 * deadlock. Returns false when a transaction with this (kind, reference) was already posted.
 */
export async function postTransaction(
  tx: Database,
  posting: {
    kind: TransactionKind;
    reference: string;
    description: string;
    entries: { accountId: string; amountCents: number }[];
  },
): Promise<boolean> {
  const total = posting.entries.reduce((sum, entry) => sum + entry.amountCents, 0);
  if (total !== 0) throw new Error(`unbalanced ${posting.kind} transaction: entries sum to ${total}`);
  if (posting.entries.some((entry) => !Number.isSafeInteger(entry.amountCents)))
    throw new Error("amounts must be integer cents");
  const [transaction] = await tx
    .insert(ledgerTransactions)
    .values({ kind: posting.kind, reference: posting.reference, description: posting.description })
    .onConflictDoNothing()
    .returning({ id: ledgerTransactions.id });
  if (!transaction) return false;
  const ordered = [...posting.entries].sort((a, b) => a.accountId.localeCompare(b.accountId));
  for (const entry of ordered) {
    const [moved] = await tx
      .update(ledgerAccounts)
      .set({ balanceCents: sql`${ledgerAccounts.balanceCents} + ${entry.amountCents}` })
      .where(
        and(
          eq(ledgerAccounts.id, entry.accountId),
          sql`(${ledgerAccounts.kind} = 'clearing' or ${ledgerAccounts.balanceCents} + ${entry.amountCents} >= 0)`,
        ),
      )
      .returning({ id: ledgerAccounts.id });
    if (!moved)
      throw new InsufficientFunds(`account ${entry.accountId} cannot cover ${-entry.amountCents} cents`);
  }
  await tx
    .insert(ledgerEntries)
    .values(posting.entries.map((entry) => ({ transactionId: transaction.id, ...entry })));
  return true;
}

/** Money from outside (a paid top-up) into a wallet, inside the caller's transaction, once per reference. */
export async function postTopUp(
  tx: Database,
  options: { userId: string; amountCents: number; reference: string; description: string },
): Promise<boolean> {
  const [wallet, clearing] = await Promise.all([
    accountFor(tx, "wallet", options.userId),
    accountFor(tx, "clearing", null),
  ]);
  return postTransaction(tx, {
    kind: "top_up",
    reference: options.reference,
    description: options.description,
    entries: [
      { accountId: clearing, amountCents: -options.amountCents },
      { accountId: wallet, amountCents: options.amountCents },
    ],
  });
}

/** A top-up in its own transaction (seed data, tests). */
export async function creditTopUp(
  db: Database,
  options: { userId: string; amountCents: number; reference: string; description: string },
): Promise<boolean> {
  return db.transaction((tx) => postTopUp(tx as unknown as Database, options));
}

/**
 * Sets a paid call's price aside from the payer's wallet. The conditional update is what makes
 * concurrent calls unable to overspend: a wallet that cannot cover the price is a 402.
 */
export async function placeHold(
  db: Database,
  options: {
    payerId: string;
    applicationId: string;
    creatorId: string;
    amountCents: number;
    ttlSeconds: number;
    topUpUrl: string;
  },
): Promise<string> {
  try {
    return await db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      const [wallet, held] = await Promise.all([
        accountFor(t, "wallet", options.payerId),
        accountFor(t, "held", options.payerId),
      ]);
      const [hold] = await t
        .insert(holds)
        .values({
          payerId: options.payerId,
          applicationId: options.applicationId,
          creatorId: options.creatorId,
          amountCents: options.amountCents,
          expiresAt: new Date(Date.now() + options.ttlSeconds * 1000),
        })
        .returning({ id: holds.id });
      if (!hold) throw new Error("hold insert returned nothing");
      await postTransaction(t, {
        kind: "hold",
        reference: hold.id,
        description: "Held for a paid call",
        entries: [
          { accountId: wallet, amountCents: -options.amountCents },
          { accountId: held, amountCents: options.amountCents },
        ],
      });
      return hold.id;
    });
  } catch (error) {
    if (!(error instanceof InsufficientFunds)) throw error;
    const balance = await walletBalance(db, options.payerId);
    throw new AppError(
      "payment_required",
      `Insufficient balance: this call costs ${dollars(options.amountCents)} and your wallet has ${dollars(balance)} available. Top up at ${options.topUpUrl}`,
    );
  }
}

export const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export function splitFee(amountCents: number, feePercent: number): { fee: number; net: number } {
  const fee = Math.round((amountCents * feePercent) / 100);
  return { fee, net: amountCents - fee };
}

/**
 * Settles a hold inside the caller's transaction (the one recording the invocation): the held money
 * goes to the creator's earnings minus the platform fee. False if the hold was already closed.
 */
export async function settleHold(
  tx: Database,
  holdId: string,
  invocationId: string,
  feePercent: number,
): Promise<boolean> {
  const [hold] = await tx
    .update(holds)
    .set({ status: "settled", closedAt: new Date(), invocationId })
    .where(and(eq(holds.id, holdId), eq(holds.status, "held")))
    .returning();
  if (!hold) return false;
  const [held, earnings, platform] = await Promise.all([
    accountFor(tx, "held", hold.payerId),
    accountFor(tx, "earnings", hold.creatorId),
    accountFor(tx, "platform_fee", null),
  ]);
  const { fee, net } = splitFee(hold.amountCents, feePercent);
  await postTransaction(tx, {
    kind: "settle",
    reference: hold.id,
    description: "Paid call",
    entries: [
      { accountId: held, amountCents: -hold.amountCents },
      ...(net > 0 ? [{ accountId: earnings, amountCents: net }] : []),
      ...(fee > 0 ? [{ accountId: platform, amountCents: fee }] : []),
    ],
  });
  return true;
}

/** Gives a hold back to the payer's wallet (failed call, or expired after a crash). */
export async function releaseHold(db: Database, holdId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [hold] = await t
      .update(holds)
      .set({ status: "released", closedAt: new Date() })
      .where(and(eq(holds.id, holdId), eq(holds.status, "held")))
      .returning();
    if (!hold) return false;
    const [wallet, held] = await Promise.all([
      accountFor(t, "wallet", hold.payerId),
      accountFor(t, "held", hold.payerId),
    ]);
    await postTransaction(t, {
      kind: "release",
      reference: hold.id,
      description: "Released: the call was not completed",
      entries: [
        { accountId: held, amountCents: -hold.amountCents },
        { accountId: wallet, amountCents: hold.amountCents },
      ],
    });
    return true;
  });
}

/** Releases holds a crashed process left behind; returns how many. */
export async function sweepExpiredHolds(db: Database, now: Date = new Date()): Promise<number> {
  const expired = await db
    .select({ id: holds.id })
    .from(holds)
    .where(and(eq(holds.status, "held"), lt(holds.expiresAt, now)))
    .orderBy(asc(holds.expiresAt))
    .limit(500);
  let released = 0;
  for (const hold of expired) if (await releaseHold(db, hold.id)) released += 1;
  return released;
}

export async function walletBalance(db: Database, userId: string): Promise<number> {
  const [row] = await db
    .select({ balance: ledgerAccounts.balanceCents })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, "wallet"), eq(ledgerAccounts.ownerId, userId)));
  return row?.balance ?? 0;
}

export async function balancesOf(
  db: Database,
  userId: string,
): Promise<Record<"wallet" | "held" | "earnings", number>> {
  const rows = await db
    .select({ kind: ledgerAccounts.kind, balance: ledgerAccounts.balanceCents })
    .from(ledgerAccounts)
    .where(
      and(eq(ledgerAccounts.ownerId, userId), inArray(ledgerAccounts.kind, ["wallet", "held", "earnings"])),
    );
  const result = { wallet: 0, held: 0, earnings: 0 };
  for (const row of rows) result[row.kind as keyof typeof result] = row.balance;
  return result;
}

export interface ReconcileReport {
  accounts: number;
  transactions: number;
  /** Sum of every entry ever posted: zero in a balanced ledger. */
  ledgerTotal: number;
  mismatches: { accountId: string; kind: string; balance: number; entries: number }[];
  unbalancedTransactions: string[];
  ok: boolean;
}

/** Checks that every balance equals the sum of its entries and every transaction sums to zero. */
export async function reconcile(db: Database): Promise<ReconcileReport> {
  const rows = await queryRows<{ id: string; kind: string; balance: string; entries: string }>(
    db,
    sql`select a.id, a.kind, a.balance_cents::text as balance, coalesce(sum(e.amount_cents), 0)::text as entries
        from ledger_accounts a left join ledger_entries e on e.account_id = a.id group by a.id`,
  );
  const unbalanced = await queryRows<{ transaction_id: string }>(
    db,
    sql`select transaction_id from ledger_entries group by transaction_id having sum(amount_cents) <> 0`,
  );
  const [totals] = await queryRows<{ total: string; transactions: string }>(
    db,
    sql`select coalesce(sum(amount_cents), 0)::text as total, (select count(*) from ledger_transactions)::text as transactions from ledger_entries`,
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
  return {
    accounts: rows.length,
    transactions: Number(totals?.transactions ?? 0),
    ledgerTotal,
    mismatches,
    unbalancedTransactions,
    ok: mismatches.length === 0 && unbalancedTransactions.length === 0 && ledgerTotal === 0,
  };
}
