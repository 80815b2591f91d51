import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { ledgerAccounts } from "../../db/schema/index.ts";
import type { AppError } from "../../lib/errors.ts";
import { paymentRefusal } from "../../lib/payment-remedy.ts";
import { formatMicros } from "./money.ts";
import { accountFor, postTransaction } from "./postings.ts";

/**
 * Debts (docs/decisions/028): what a user owes after a refund or dispute took back money they had
 * already spent, kept in their `debt` account (below zero, never above). While it is below zero
 * their paid calls are refused (402 account_in_debt, in the statement that pays for a call:
 * holds.ts); a top-up pays it first.
 */

/** The account kind of what an owner (or, owner null, the platform) is owed: below zero. */
export const DEBT = "debt" as const;

/** What the user owes, in the ledger's unit (0 when nothing). */
export async function debtOf(db: Database, userId: string): Promise<number> {
  const [row] = await db
    .select({ balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, DEBT), eq(ledgerAccounts.ownerId, userId)))
    .limit(1);
  return Math.max(0, -(row?.balance ?? 0));
}

export async function lockAccounts(tx: Database, ids: string[]) {
  await tx.execute(
    sql`select id from ledger_accounts where id in (${sql.join(
      ids.map((id) => sql`${id}::uuid`),
      sql`, `,
    )}) order by id for update`,
  );
}

export async function lockedBalance(tx: Database, accountId: string): Promise<number> {
  const [row] = await tx
    .select({ balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(eq(ledgerAccounts.id, accountId))
    .for("update");
  return row?.balance ?? 0;
}

/**
 * Pays a user's debt from their wallet, inside the caller's transaction (after a top-up: the
 * top-up settles the debt first, the rest stays in the wallet). Returns what it settled.
 */
export async function settleDebt(tx: Database, userId: string, reference: string): Promise<number> {
  const [debtRow] = await tx
    .select({ id: ledgerAccounts.id, balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, DEBT), eq(ledgerAccounts.ownerId, userId)))
    .limit(1);
  if (!debtRow || debtRow.balance >= 0) return 0;
  const wallet = await accountFor(tx, "wallet", userId);
  await lockAccounts(tx, [wallet, debtRow.id]);
  const owed = -(await lockedBalance(tx, debtRow.id));
  const available = await lockedBalance(tx, wallet);
  const amount = Math.min(owed, available);
  if (amount <= 0) return 0;
  await postTransaction(tx, {
    kind: "reversal",
    reference: `debt:${reference}`,
    description: `Debt settled from your wallet: ${formatMicros(amount)}`,
    entries: [
      { accountId: wallet, amountMicros: -amount },
      { accountId: debtRow.id, amountMicros: amount },
    ],
  });
  return amount;
}

/** The 402 of a paid call by a payer in debt: what they owe and where to settle it. */
export function accountInDebt(owedMicros: number, topUpUrl: string): AppError {
  return paymentRefusal(
    "account_in_debt",
    `Your account owes ${formatMicros(owedMicros)}: a card payment was refunded or disputed after its money was spent. Paid calls resume once it is settled; a top-up pays it first. Top up at ${topUpUrl}`,
    { missing: "account_in_debt", top_up_url: topUpUrl, owed_micros: owedMicros },
  );
}
