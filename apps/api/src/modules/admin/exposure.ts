import type { AdminExposure } from "@promptmint/contracts";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { MICROS_PER_CENT } from "../../lib/money.ts";

/**
 * The platform's remaining exposure to refunds and disputes of card top-ups (decision 045), in
 * one statement. Earnings still inside the payout hold can be taken back from their creator;
 * once paid out, a chargeback can only make the creator owe (their debt, paid from their next
 * earnings) or, for the fee and model cost, cost the platform (its debt account).
 */
export async function adminExposure(db: Database, now: Date, holdDays: number): Promise<AdminExposure> {
  const cutoff = new Date(now.getTime() - Math.round(holdDays * 86_400_000));
  const [row] = await queryRows<Record<string, string>>(
    db,
    sql`with recent as (
          select a.owner_id, least(a.balance_micros, coalesce(sum(e.amount_micros), 0)) as pending
          from ledger_accounts a
          join ledger_entries e on e.account_id = a.id and e.amount_micros > 0 and e.created_at > ${cutoff.toISOString()}::timestamptz
          join ledger_transactions t on t.id = e.transaction_id and t.kind = 'settle'
          where a.kind = 'earnings'
          group by a.owner_id, a.balance_micros
        ), creators as (
          select distinct creator_id from chargeback_parts where creator_id is not null
        ), debts as (
          select a.owner_id, -a.balance_micros as owed, a.owner_id in (select creator_id from creators) as creator
          from ledger_accounts a where a.kind = 'debt' and a.balance_micros < 0
        )
        select
          (select coalesce(sum(greatest(pending, 0)), 0) from recent)::text as pending,
          (select count(*) from debts where owner_id is not null and creator)::text as creator_count,
          (select coalesce(sum(owed), 0) from debts where owner_id is not null and creator)::text as creator_owed,
          (select count(*) from debts where owner_id is not null and not creator)::text as payer_count,
          (select coalesce(sum(owed), 0) from debts where owner_id is not null and not creator)::text as payer_owed,
          (select coalesce(sum(owed), 0) from debts where owner_id is null)::text as platform_loss,
          (select count(*) from payment_reversals where kind = 'dispute' and status = 'open')::text as disputes,
          (select coalesce(sum(amount_cents), 0) from payment_reversals where kind = 'dispute' and status = 'open')::text
            as disputed_cents,
          (select coalesce(sum(reversed_cents), 0) from reversed_payments)::text as reversed_cents`,
  );
  const n = (key: string) => Number(row?.[key] ?? 0);
  const creatorOwed = n("creator_owed");
  const payerOwed = n("payer_owed");
  const platformLoss = n("platform_loss");
  return {
    hold_days: holdDays,
    card_earnings_pending_micros: n("pending"),
    creator_debts: { count: n("creator_count"), owed_micros: creatorOwed },
    payer_debts: { count: n("payer_count"), owed_micros: payerOwed },
    platform_loss_micros: platformLoss,
    open_disputes: { count: n("disputes"), amount_micros: n("disputed_cents") * MICROS_PER_CENT },
    reversed_micros: n("reversed_cents") * MICROS_PER_CENT,
    unrecovered_micros: creatorOwed + payerOwed + platformLoss,
  };
}
