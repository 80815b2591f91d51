import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { accountFor } from "../billing/postings.ts";

/**
 * Earnings as paid calls credit them (a `settle` transaction: clearing → the creator's earnings),
 * dated `at` so a test can place money before or inside the hold period. Balanced and reconciled
 * like any posting; only for tests (the ledger itself always dates entries now).
 */
export async function creditEarnings(
  db: Database,
  creatorId: string,
  units: number,
  at: Date = new Date(),
): Promise<void> {
  const earnings = await accountFor(db, "earnings", creatorId);
  const clearing = await accountFor(db, "clearing", null);
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [posted] = await queryRows<{ id: string }>(
      t,
      sql`insert into ledger_transactions (kind, reference, description, created_at)
          values ('settle', ${`test-${crypto.randomUUID()}`}, 'Paid calls', ${at.toISOString()}::timestamptz) returning id`,
    );
    await t.execute(
      sql`insert into ledger_entries (transaction_id, account_id, amount_micros, created_at) values
          (${posted?.id}::uuid, ${clearing}::uuid, ${-units}, ${at.toISOString()}::timestamptz),
          (${posted?.id}::uuid, ${earnings}::uuid, ${units}, ${at.toISOString()}::timestamptz)`,
    );
    await t.execute(
      sql`update ledger_accounts set balance_micros = balance_micros + case when id = ${earnings}::uuid then ${units}::bigint else ${-units}::bigint end
          where id in (${earnings}::uuid, ${clearing}::uuid)`,
    );
  });
}

export const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);
