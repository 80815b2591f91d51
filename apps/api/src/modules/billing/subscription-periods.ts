import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";

/**
 * Records a subscription's current period as the row holds it: its start and end (copied in SQL,
 * to the microsecond, as invocations name it), the terms it started under and what it allows,
 * and what paid it. Once per period: a redelivered invoice or a retried renewal changes nothing.
 */
export async function recordCurrentPeriod(
  db: Database,
  subscriptionId: string,
  paid: { priceCents: number | null; transactionId: string | null },
): Promise<void> {
  await queryRows(
    db,
    sql`insert into subscription_periods
          (subscription_id, period_start, period_end, terms_id, calls_included, price_cents, transaction_id)
        select id, current_period_start, current_period_end, terms_id, calls_included,
          ${paid.priceCents}::int, ${paid.transactionId}::uuid
        from subscriptions where id = ${subscriptionId}::uuid
        on conflict (subscription_id, period_start) do nothing`,
  );
}
