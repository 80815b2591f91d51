import type { AdminOverview } from "@promptmint/contracts";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { MICROS_PER_CENT } from "../../lib/money.ts";

/**
 * The operator's figures for a period (issue 17 item 5). Ledger amounts are read in the ledger's
 * unit; card amounts (refunds, disputes) stay in cents as the payment provider names them.
 */

const n = (value: string | number | null | undefined) => Number(value ?? 0);

export async function adminOverview(db: Database, period: { from: Date; to: Date }): Promise<AdminOverview> {
  const from = period.from.toISOString();
  const to = period.to.toISOString();
  const inPeriod = (column: string) =>
    sql`${sql.raw(column)} >= ${from}::timestamptz and ${sql.raw(column)} < ${to}::timestamptz`;

  const [ledger] = await queryRows<{ gross: string; fee: string; recovered: string }>(
    db,
    sql`select
          coalesce(sum(e.amount_micros) filter (where t.kind in ('settle', 'subscription')
            and a.kind in ('earnings', 'platform_fee', 'model_cost') and e.amount_micros > 0), 0)::text as gross,
          coalesce(sum(e.amount_micros) filter (where a.kind = 'platform_fee'), 0)::text as fee,
          coalesce(sum(e.amount_micros) filter (where a.kind = 'model_cost'), 0)::text as recovered
        from ledger_entries e
        join ledger_transactions t on t.id = e.transaction_id
        join ledger_accounts a on a.id = e.account_id
        where ${inPeriod("e.created_at")}`,
  );
  const [modelCost] = await queryRows<{ paid: string }>(
    db,
    sql`select coalesce(sum(model_cost_micros), 0)::text as paid from invocations i
        where ${inPeriod("i.created_at")}`,
  );
  const [reversed] = await queryRows<{ refunded: string; disputed: string }>(
    db,
    sql`select
          coalesce(sum(amount_cents) filter (where kind = 'refund'), 0)::text as refunded,
          coalesce(sum(amount_cents) filter (where kind = 'dispute' and status in ('open', 'lost')), 0)::text as disputed
        from payment_reversals r where ${inPeriod("r.created_at")}`,
  );
  const payouts = await payoutFigures(db);
  const disputes = await queryRows<{
    id: string;
    payment_intent: string;
    email: string;
    amount_cents: string;
    status: string;
    reason: string;
    created_at: Date;
  }>(
    db,
    sql`select r.id, p.external_id as payment_intent, u.email, r.amount_cents::text, r.status, r.reason, r.created_at
        from payment_reversals r join payments p on p.id = r.payment_id join users u on u.id = p.user_id
        where r.kind = 'dispute' order by r.created_at desc limit 100`,
  );
  const debts = await queryRows<{ user_id: string | null; email: string | null; owed: string }>(
    db,
    sql`select a.owner_id as user_id, u.email, (-a.balance_micros)::text as owed
        from ledger_accounts a left join users u on u.id = a.owner_id
        where a.kind = 'debt' and a.balance_micros < 0 order by a.balance_micros limit 100`,
  );
  const suspended = sql`exists (select 1 from suspensions s where (s.target_kind = 'application' and s.target_id = ap.id)
                                 or (s.target_kind = 'user' and s.target_id = ap.owner_id))`;
  const topApps = await queryRows<{
    id: string;
    slug: string;
    name: string;
    email: string;
    gross: string;
    calls: number;
    suspended: boolean;
  }>(
    db,
    sql`select ap.id, ap.slug, ap.name, u.email, sum(i.charged_cents)::text as gross, count(*)::int as calls,
          ${suspended} as suspended
        from invocations i join applications ap on ap.id = i.application_id join users u on u.id = ap.owner_id
        where i.charged_cents > 0 and ${inPeriod("i.created_at")}
        group by ap.id, u.email order by sum(i.charged_cents) desc limit 10`,
  );
  const topCreators = await queryRows<{ id: string; email: string; gross: string; suspended: boolean }>(
    db,
    sql`select u.id, u.email, sum(i.charged_cents)::text as gross,
          exists (select 1 from suspensions s where s.target_kind = 'user' and s.target_id = u.id) as suspended
        from invocations i join applications ap on ap.id = i.application_id join users u on u.id = ap.owner_id
        where i.charged_cents > 0 and ${inPeriod("i.created_at")}
        group by u.id order by sum(i.charged_cents) desc limit 10`,
  );
  const suspensionRows = await queryRows<{
    target_kind: "application" | "user";
    target_id: string;
    label: string | null;
    reason: string;
    created_at: Date;
  }>(
    db,
    sql`select s.target_kind, s.target_id,
          coalesce((select ap.slug from applications ap where ap.id = s.target_id),
                   (select u.email from users u where u.id = s.target_id)) as label,
          s.reason, s.created_at
        from suspensions s order by s.created_at desc limit 200`,
  );
  return {
    period: { from, to },
    gross_micros: n(ledger?.gross),
    fee_income_micros: n(ledger?.fee),
    model_cost_paid_micros: n(modelCost?.paid),
    model_cost_recovered_micros: n(ledger?.recovered),
    refunded_cents: n(reversed?.refunded),
    disputed_cents: n(reversed?.disputed),
    payouts,
    disputes: disputes.map((row) => ({
      id: row.id,
      payment_intent: row.payment_intent,
      payer_email: row.email,
      amount_cents: n(row.amount_cents),
      status: row.status,
      reason: row.reason,
      created_at: new Date(row.created_at).toISOString(),
    })),
    debts: debts.map((row) => ({
      user_id: row.user_id,
      email: row.user_id ? (row.email ?? "") : "the platform (loss)",
      owed_micros: n(row.owed),
    })),
    top_apps: topApps.map((row) => ({
      id: row.id,
      slug: row.slug,
      name: row.name,
      owner_email: row.email,
      gross_micros: n(row.gross) * MICROS_PER_CENT,
      calls: row.calls,
      suspended: row.suspended,
    })),
    top_creators: topCreators.map((row) => ({
      id: row.id,
      email: row.email,
      gross_micros: n(row.gross) * MICROS_PER_CENT,
      suspended: row.suspended,
    })),
    suspensions: suspensionRows.map((row) => ({
      target_kind: row.target_kind,
      target_id: row.target_id,
      label: row.label ?? row.target_id,
      reason: row.reason,
      created_at: new Date(row.created_at).toISOString(),
    })),
  };
}

/**
 * Payouts by state, from the payouts table (whole cents, as Stripe transfers them; shown in micros).
 * Not limited to the period: what is queued or in transit now, and everything paid or failed.
 */
async function payoutFigures(db: Database): Promise<AdminOverview["payouts"]> {
  const rows = await queryRows<{ status: string; total: string }>(
    db,
    sql`select status, coalesce(sum(amount_cents), 0)::text as total from payouts group by status`,
  );
  const of = (...statuses: string[]) =>
    rows
      .filter((row) => statuses.includes(row.status))
      .reduce((sum, row) => sum + n(row.total) * MICROS_PER_CENT, 0);
  return {
    source: "payouts_table",
    queued_micros: of("pending"),
    in_transit_micros: of("in_transit"),
    paid_micros: of("paid"),
    failed_micros: of("failed", "reversed"),
  };
}
