import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../db/client.ts";

/**
 * Waits until every answered call is in the rollups (decision 037: a wallet-paid call's finish,
 * which adds it to the analytics, commits just after its answer). Throws after `timeoutMs`.
 */
export async function callsFinished(db: Database, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from invocations where unfinished and status <> 'pending'`,
    );
    if (row?.n === 0) return;
    if (Date.now() > deadline) throw new Error(`${row?.n} answered calls are still not finished`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
