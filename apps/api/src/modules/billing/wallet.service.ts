import type { Wallet } from "@promptmint/contracts";
import { and, desc, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { ledgerAccounts, ledgerEntries, ledgerTransactions } from "../../db/schema/index.ts";
import { balancesOf } from "./ledger.service.ts";

/** Balance, money held for calls in flight, earnings, and the latest movements of wallet and earnings. */
export async function getWallet(
  db: Database,
  userId: string,
  gateway: "sandbox" | "stripe",
): Promise<Wallet> {
  const balances = await balancesOf(db, userId);
  const rows = await db
    .select({
      id: ledgerEntries.id,
      amount: ledgerEntries.amountCents,
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
    balance_cents: balances.wallet,
    held_cents: balances.held,
    earnings_cents: balances.earnings,
    gateway,
    transactions: rows.map((row) => ({
      id: String(row.id),
      kind: row.account === "earnings" ? "earning" : row.kind,
      amount_cents: row.amount,
      account: row.account as "wallet" | "earnings",
      description: row.account === "earnings" ? "Earned from a paid call" : row.description,
      created_at: row.createdAt.toISOString(),
    })),
  };
}
