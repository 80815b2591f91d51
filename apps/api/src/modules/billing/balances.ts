import { and, eq, inArray, sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { ledgerAccounts } from "../../db/schema/index.ts";

export async function walletBalance(db: Database, userId: string): Promise<number> {
  const [row] = await db
    .select({ balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, "wallet"), eq(ledgerAccounts.ownerId, userId)));
  return row?.balance ?? 0;
}

export async function balancesOf(
  db: Database,
  userId: string,
): Promise<Record<"wallet" | "held" | "earnings", number>> {
  const rows = await db
    .select({ kind: ledgerAccounts.kind, balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(
      and(eq(ledgerAccounts.ownerId, userId), inArray(ledgerAccounts.kind, ["wallet", "held", "earnings"])),
    );
  const result = { wallet: 0, held: 0, earnings: 0 };
  for (const row of rows) result[row.kind as keyof typeof result] = row.balance;
  return result;
}

/**
 * Balances as their owner reads them. Calls paid from a hold that is still open have spent their
 * prices, durably, but the ledger posts them only when the hold closes (decision 020): here they
 * count as paid, out of the payer's held money and into the creator's earnings, so the figures
 * move with every call. `wallet + held` is the payer's unspent money at every moment.
 */
export async function walletBalances(
  db: Database,
  userId: string,
): Promise<Record<"wallet" | "held" | "earnings", number>> {
  // One statement, so the ledger and the open holds are read in one snapshot: a hold closing
  // meanwhile is counted either as open or as posted, never as both or neither.
  const [row] = await queryRows<{ wallet: string; held: string; earnings: string }>(
    db,
    sql`with balance as (
          select kind, balance_micros from ledger_accounts
          where owner_id = ${userId} and kind in ('wallet', 'held', 'earnings')
        ), open as (
          select payer_id, creator_id, settled_micros, fee_micros, model_cost_micros from holds
          where status = 'held' and (payer_id = ${userId} or creator_id = ${userId})
        )
        select
          (select coalesce(sum(balance_micros), 0) from balance where kind = 'wallet')::text as wallet,
          ((select coalesce(sum(balance_micros), 0) from balance where kind = 'held')
            - (select coalesce(sum(settled_micros), 0) from open where payer_id = ${userId}))::text as held,
          ((select coalesce(sum(balance_micros), 0) from balance where kind = 'earnings')
            + (select coalesce(sum(settled_micros - fee_micros - model_cost_micros), 0) from open where creator_id = ${userId}))::text
            as earnings`,
  );
  return {
    wallet: Number(row?.wallet ?? 0),
    held: Number(row?.held ?? 0),
    earnings: Number(row?.earnings ?? 0),
  };
}
