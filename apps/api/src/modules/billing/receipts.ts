import {
  formatReceiptNumber,
  type Receipt,
  type ReceiptKind,
  type ReceiptStatus,
} from "@promptmint/contracts";
import { type SQL, sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { notFound } from "../../lib/errors.ts";
import { MICROS_PER_CENT } from "./money.ts";

/**
 * Receipts (docs/decisions/069). A receipt is for a fact that happened, read where the fact is
 * kept: a wallet top-up (a `top_up` ledger transaction into the user's wallet: card money in), a
 * plan payment (a `subscription` transaction that paid one of the user's subscription periods,
 * from their wallet, a card payment or a Stripe invoice) and a payout (a `payouts` row once
 * `paid`). Each gets a number the first time its user lists their receipts: one insert per fact,
 * its unique key `(kind, source_id)` keeping the first number when two processes number it at
 * once. A number is never given to anything else nor changed; what happened to the money since (a
 * refund, a dispute, a returned payout) is the receipt's status, read live.
 */

/** The user's facts that deserve a receipt: kind, source id and when it happened. */
const factsOf = (userId: string): SQL => sql`
  select 'top_up'::text as kind, t.id as source_id, t.created_at as occurred_at
  from ledger_transactions t
  join ledger_entries e on e.transaction_id = t.id
  join ledger_accounts a on a.id = e.account_id and a.kind = 'wallet' and a.owner_id = ${userId}::uuid
  where t.kind = 'top_up' and e.amount_micros > 0
  union
  select 'plan_payment', t.id, t.created_at
  from subscriptions s
  join subscription_periods p on p.subscription_id = s.id
  join ledger_transactions t on t.id = p.transaction_id and t.kind = 'subscription'
  where s.subscriber_id = ${userId}::uuid
  union
  select 'plan_payment', t.id, t.created_at
  from subscriptions s
  join ledger_transactions t on t.id = s.period_transaction_id and t.kind = 'subscription'
  where s.subscriber_id = ${userId}::uuid
  union
  select 'payout', p.id, coalesce(p.paid_at, p.updated_at)
  from payouts p
  where p.creator_id = ${userId}::uuid and p.status = 'paid'`;

/** Numbers the user's facts that have no receipt yet, oldest first; a no-op when all have one. */
export async function numberReceipts(db: Database, userId: string): Promise<void> {
  await queryRows(
    db,
    sql`insert into receipts (kind, source_id, user_id)
        select f.kind, f.source_id, ${userId}::uuid
        from (${factsOf(userId)}) f
        where not exists (select 1 from receipts r where r.kind = f.kind and r.source_id = f.source_id)
        order by f.occurred_at, f.source_id
        on conflict (kind, source_id) do nothing`,
  );
}

/** What a receipt says, beyond the list's line: for its HTML and PDF. */
export interface ReceiptDetails extends Receipt {
  /** How it was paid: "Card (sandbox)", "Wallet balance", "Transfer to acct_…". */
  method: string;
  /** The gateway's id of the payment or transfer, when there is one. */
  reference: string | null;
  /**
   * Who paid (or was paid): the account's name and email; an organization's (decision 084) from its
   * billing details: its billing email, postal address and tax id (empty when it gave none).
   */
  payer: { name: string; email: string; address: string; taxId: string };
  /** Who sold the plan (plan payments only). */
  seller: string | null;
}

interface ReceiptRow {
  number: string;
  kind: ReceiptKind;
  source_id: string;
  description: string;
  amount_micros: string;
  currency: string;
  occurred_at: string;
  payment_gateway: string | null;
  payment_external_id: string | null;
  payment_amount_cents: string | null;
  refunded_cents: string | null;
  disputed: boolean;
  payout_status: string | null;
  payout_gateway: string | null;
  payout_account: string | null;
  payout_transfer: string | null;
  seller: string | null;
  payer_name: string;
  payer_email: string;
  payer_address: string;
  payer_tax_id: string;
}

/** The user's receipts (one, when `number` is given), newest first, numbering any new fact first. */
async function readReceipts(db: Database, userId: string, number?: number): Promise<ReceiptDetails[]> {
  await numberReceipts(db, userId);
  const rows = await queryRows<ReceiptRow>(
    db,
    sql`with mine as (
          select * from receipts where user_id = ${userId}::uuid
            and (${number ?? null}::bigint is null or number = ${number ?? null}::bigint)
        ), money as (
          -- Top-ups and plan payments: what the transaction moved (its positive side) and the card
          -- payment behind it, if any (its reference is the payment's id).
          select r.number, t.description, t.created_at as occurred_at,
            (select sum(e.amount_micros) from ledger_entries e where e.transaction_id = t.id and e.amount_micros > 0) as amount_micros,
            pay.id as payment_id, pay.gateway as payment_gateway, pay.external_id as payment_external_id,
            pay.amount_cents as payment_amount_cents, coalesce(pay.currency, 'usd') as currency,
            (select coalesce(nullif(u.display_name, ''), u.username) from subscription_periods p
               join subscriptions s on s.id = p.subscription_id
               join applications ap on ap.id = s.application_id
               join users u on u.id = ap.owner_id
             where p.transaction_id = t.id
             union all
             select coalesce(nullif(u.display_name, ''), u.username) from subscriptions s
               join applications ap on ap.id = s.application_id
               join users u on u.id = ap.owner_id
             where s.period_transaction_id = t.id
             limit 1) as seller
          from mine r
          join ledger_transactions t on t.id = r.source_id
          left join payments pay on pay.id::text = t.reference
          where r.kind in ('top_up', 'plan_payment')
        )
        select r.number::text as number, r.kind, r.source_id::text as source_id,
          coalesce(m.description, 'Payout of your earnings') as description,
          coalesce(m.amount_micros, po.amount_cents * ${MICROS_PER_CENT}::bigint)::text as amount_micros,
          coalesce(m.currency, po.currency, 'usd') as currency,
          to_char(coalesce(m.occurred_at, po.paid_at, po.updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as occurred_at,
          m.payment_gateway, m.payment_external_id, m.payment_amount_cents::text as payment_amount_cents,
          (select coalesce(sum(v.amount_cents), 0) from payment_reversals v
            where v.payment_id = m.payment_id and v.kind = 'refund' and v.status = 'succeeded')::text as refunded_cents,
          exists (select 1 from payment_reversals v
            where v.payment_id = m.payment_id and v.kind = 'dispute' and v.status in ('open', 'inquiry', 'lost')) as disputed,
          po.status as payout_status, po.gateway as payout_gateway, po.connect_account_id as payout_account,
          coalesce(po.stripe_payout_id, po.transfer_id) as payout_transfer,
          m.seller,
          coalesce(nullif(u.display_name, ''), nullif(trim(u.first_name || ' ' || u.last_name), ''), u.username) as payer_name,
          coalesce(nullif(o.billing_email, ''), u.email) as payer_email,
          coalesce(o.billing_address, '') as payer_address, coalesce(o.tax_id, '') as payer_tax_id
        from mine r
        join users u on u.id = r.user_id
        left join organizations o on o.id = r.user_id
        left join money m on m.number = r.number
        left join payouts po on po.id = r.source_id and r.kind = 'payout'
        order by r.number desc`,
  );
  return rows.map(toDetails);
}

function statusOf(row: ReceiptRow): ReceiptStatus {
  if (row.kind === "payout") return row.payout_status === "paid" ? "paid" : "reversed";
  if (row.disputed) return "disputed";
  const refunded = Number(row.refunded_cents ?? 0);
  if (refunded <= 0) return "paid";
  return refunded >= Number(row.payment_amount_cents ?? 0) ? "refunded" : "partially_refunded";
}

function methodOf(row: ReceiptRow): string {
  if (row.kind === "payout")
    return `Transfer to ${row.payout_gateway === "sandbox" ? "sandbox " : ""}connected account ${row.payout_account ?? ""}`.trim();
  if (row.payment_gateway)
    return row.payment_gateway === "sandbox" ? "Card (sandbox, no real money)" : "Card";
  return row.kind === "plan_payment" ? "Wallet balance" : "Card (Stripe invoice)";
}

function toDetails(row: ReceiptRow): ReceiptDetails {
  return {
    number: formatReceiptNumber(Number(row.number)),
    kind: row.kind,
    source_id: row.source_id,
    description: row.description || (row.kind === "top_up" ? "Wallet top-up" : "Plan payment"),
    amount_cents: Math.round(Number(row.amount_micros) / MICROS_PER_CENT),
    currency: row.currency.toUpperCase(),
    status: statusOf(row),
    occurred_at: row.occurred_at,
    method: methodOf(row),
    reference: row.kind === "payout" ? row.payout_transfer : row.payment_external_id,
    payer: {
      name: row.payer_name,
      email: row.payer_email,
      address: row.payer_address,
      taxId: row.payer_tax_id,
    },
    seller: row.seller,
  };
}

/** The signed-in user's receipts, newest first. */
export async function listReceipts(db: Database, userId: string): Promise<Receipt[]> {
  return (await readReceipts(db, userId)).map(
    ({ method: _m, reference: _r, payer: _p, seller: _s, ...receipt }) => receipt,
  );
}

/** One of the user's receipts by its number (`PM-000123`); anyone else's, or none, is a 404. */
export async function getReceipt(db: Database, userId: string, number: string): Promise<ReceiptDetails> {
  const value = Number(number.slice(3));
  const [receipt] = Number.isSafeInteger(value) ? await readReceipts(db, userId, value) : [];
  if (!receipt) throw notFound("Receipt");
  return receipt;
}
