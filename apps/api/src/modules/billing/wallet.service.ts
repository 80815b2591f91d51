import type { Wallet } from "@promptmint/contracts";
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { ledgerAccounts, ledgerEntries, ledgerTransactions } from "../../db/schema/index.ts";
import { walletBalances } from "./balances.ts";
import { debtOf } from "./debts.ts";

/** Balance, money held for calls in flight, earnings, and the latest movements of wallet and earnings. */
export async function getWallet(
  db: Database,
  userId: string,
  gateway: "sandbox" | "stripe",
): Promise<Wallet> {
  const [balances, debt] = await Promise.all([walletBalances(db, userId), debtOf(db, userId)]);
  const rows = await db
    .select({
      id: ledgerEntries.id,
      amount: ledgerEntries.amountMicros,
      account: ledgerAccounts.kind,
      kind: ledgerTransactions.kind,
      description: ledgerTransactions.description,
      createdAt: ledgerEntries.createdAt,
    })
    .from(ledgerEntries)
    .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerEntries.accountId))
    .innerJoin(ledgerTransactions, eq(ledgerTransactions.id, ledgerEntries.transactionId))
    .where(and(eq(ledgerAccounts.ownerId, userId), inArray(ledgerAccounts.kind, ["wallet", "earnings"])))
    .orderBy(desc(ledgerEntries.id))
    .limit(100);
  return {
    currency: "usd",
    balance_micros: balances.wallet,
    held_micros: balances.held,
    earnings_micros: balances.earnings,
    debt_micros: debt,
    gateway,
    transactions: rows.map((row) => ({
      id: String(row.id),
      // x402 payments move only earnings (agent-payments/): always an earning here.
      kind: row.account === "earnings" || row.kind === "x402_payment" ? "earning" : row.kind,
      amount_micros: row.amount,
      account: row.account as "wallet" | "earnings",
      description:
        row.account === "earnings" && (row.kind === "settle" || row.kind === "x402_payment")
          ? earnedFrom(row.description)
          : row.description,
      created_at: row.createdAt.toISOString(),
    })),
  };
}

/**
 * An earnings entry as its creator reads it. A settle transaction pays for a hold's calls
 * ("12 paid calls", decision 020); before that, for one call ("Paid call").
 */
function earnedFrom(settled: string): string {
  return settled === "Paid call" ? "Earned from a paid call" : `Earned from ${settled}`;
}
