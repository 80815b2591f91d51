import { randomUUID } from "node:crypto";
import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import { type Database, NO_ROW, preparedStatement, queryRows } from "../../../db/client.ts";
import { holds } from "../../../db/schema/index.ts";
import type { AppError } from "../../../lib/errors.ts";
import { paymentRefusal } from "../../../lib/payment-remedy.ts";
import { walletBalance } from "../balances.ts";
import { accountInDebt, debtOf } from "../debts.ts";
import { centsToMicros, dollars, formatMicros, MICROS_PER_CENT } from "../money.ts";
import { accountFor, moveBalancesSql } from "../postings.ts";
import type { IncludedCall } from "./included-calls.ts";
import { chargedCentsSql, currentPriceSql, feeMicrosSql, microsSql, modelCostDeductedSql } from "./rules.ts";

/**
 * What a hold is for: who pays which creator for which app, the call's price (in cents, as prices
 * are set; the hold itself is in micro-dollars), for how long, and where to top up.
 */
interface HoldRequest {
  payerId: string;
  applicationId: string;
  creatorId: string;
  amountCents: number;
  ttlSeconds: number;
  topUpUrl: string;
}

/**
 * Sets a price aside from the payer's wallet outside the gateway (seed data, tests): the pay
 * statement below without the included-call check, the payer's accounts looked up when not given.
 */
export async function placeHold(
  db: Database,
  options: HoldRequest & {
    /** The payer's wallet and held account ids, when the caller already knows them. */
    accounts?: { wallet: string; held: string };
    /** The most to hold (a lease of several prices); the price when not given. */
    leaseCents?: number;
  },
): Promise<string> {
  const accounts = options.accounts ?? {
    wallet: await accountFor(db, "wallet", options.payerId),
    held: await accountFor(db, "held", options.payerId),
  };
  const payment = await takeCallPayment(db, { ...options, tryIncluded: false, accounts });
  if (!payment.holdId) throw new Error("a hold without the included-call check returned none");
  return payment.holdId;
}

/**
 * The 402 of a call the wallet cannot cover: its price, the balance, and where to top up; or, for
 * a payer in debt (decision 028), what they owe and where to settle it.
 */
async function paymentRequired(
  db: Database,
  call: { payerId: string; amountCents: number; topUpUrl: string },
): Promise<AppError> {
  const owed = await debtOf(db, call.payerId);
  if (owed > 0) return accountInDebt(owed, call.topUpUrl);
  const balance = await walletBalance(db, call.payerId);
  return paymentRefusal(
    "payment_required",
    `Insufficient balance: this call costs ${dollars(call.amountCents)} and your wallet has ${formatMicros(balance)} available. Top up at ${call.topUpUrl}`,
    {
      missing: "insufficient_funds",
      top_up_url: call.topUpUrl,
      price_cents: call.amountCents,
      balance_micros: balance,
    },
  );
}

/**
 * The one statement that pays for a paid call before the upstream is called: one of the payer's
 * included calls when a plan covers it (`$8`), otherwise a hold from the wallet. The hold is the
 * price (`$4`), or a lease of several calls' prices (up to `$9`, and beyond the first price never
 * more than half the wallet) that the process then spends call by call without a round trip
 * (leases.ts, docs/decisions/018). The wallet and held accounts are locked in id order and
 * the hold is written only if the locked wallet covers it, so concurrent calls cannot overspend.
 * It commits without waiting for the WAL flush: the hold is visible at once, and the settle's
 * synchronous commit flushes it with its own; a crash can only lose a hold none of whose calls
 * was charged, as if the sweeper had released it. One round trip, parsed and planned once per
 * connection. The guard divides by zero, aborting the whole statement, if a hold was written but
 * its balances did not move (which the lock makes impossible).
 */
const takePaymentStatement = preparedStatement<{
  subscription_id: string | null;
  period_start: string | null;
  hold_id: string | null;
  hold_micros: string | null;
}>(
  "pm_take_payment_v6",
  `with v as (
     select $1::uuid as payer, $2::uuid as app, $3::uuid as creator, $4::bigint as price,
            $5::timestamptz as expires, $6::uuid as wallet, $7::uuid as held, $8::boolean as try_included,
            $9::bigint as most, $10::uuid as call_id
   ), debtor as (
     -- helper C (decision 028): a payer whose debt account is below zero pays for nothing, by
     -- plan or wallet, until it is settled (the 402 then says account_in_debt). Same round trip.
     select 1 from ledger_accounts d, v
     where d.kind = 'debt' and coalesce(d.owner_id, '00000000-0000-0000-0000-000000000000'::uuid) = v.payer
       and d.balance_micros < 0
   ), included as (
     update subscriptions set calls_used = calls_used + 1
     where id = (
       select s.id from subscriptions s, v
       where v.try_included and not exists (select 1 from debtor)
         and s.application_id = v.app and s.subscriber_id = v.payer
         and s.status = 'active' and s.current_period_end > now() and s.calls_used < s.calls_included
       order by s.current_period_end limit 1
       for update of s)
       and calls_used < calls_included
     returning id, current_period_start, current_period_start::text as period_start
   ), reserved as (
     insert into included_calls (id, subscription_id, period_start, expires_at)
     select v.call_id, included.id, included.current_period_start, v.expires from v, included
     returning 1
   ), locked as (
     select a.id, a.balance_micros from ledger_accounts a, v
     where a.id in (v.wallet, v.held) and not exists (select 1 from included)
     order by a.id for update of a
   ), sized as (
     select least(v.most, greatest(v.price, l.balance_micros / (2 * v.price) * v.price)) as amount
     from v, locked l
     where l.id = v.wallet and l.balance_micros >= v.price and (select count(*) from locked) = 2
       and not exists (select 1 from debtor)
   ), hold as (
     insert into holds (payer_id, application_id, creator_id, amount_micros, expires_at)
     select v.payer, v.app, v.creator, sized.amount, v.expires from v, sized
     returning id, amount_micros
   ), posted as (
     insert into ledger_transactions (kind, reference, description)
     select 'hold', hold.id::text, 'Held for paid calls' from hold
     returning id
   ), deltas as (
     select v.wallet as id, -hold.amount_micros as delta from v, hold
     union all select v.held, hold.amount_micros from v, hold
   ), moved as (
     ${moveBalancesSql("deltas", "locked", "exists (select 1 from posted)")}
   ), entries as (
     insert into ledger_entries (transaction_id, account_id, amount_micros)
     select posted.id, d.id, d.delta from posted, deltas d
     returning 1
   )
   select (select id from included) as subscription_id,
     (select period_start from included) as period_start, (select id from hold) as hold_id,
     (select amount_micros::text from hold) as hold_micros,
     set_config('synchronous_commit', 'off', true) as async,
     1 / (case when (select count(*) from hold) = 0 or (select count(*) from moved) = 2 then 1 else 0 end) as guard`,
  { params: () => [NO_ROW, NO_ROW, NO_ROW, 1, new Date().toISOString(), NO_ROW, NO_ROW, true, 1, NO_ROW] },
);

/**
 * Runs a money statement again when its guard fired (PostgreSQL's `division_by_zero`): the
 * statement aborted as a whole, nothing was written. Under READ COMMITTED a balance row another
 * transaction changed while the statement waited for its lock can be re-checked by the
 * statement's update with a newer value than the one it sized its amounts from (seen with
 * top-ups racing calls on a nearly empty wallet: issue 16, item 3); the next attempt takes a new
 * snapshot and sees the row as it is. Other errors, and a guard that keeps firing, are thrown.
 */
async function retryingGuard<T>(statement: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if (attempt >= attempts || !isGuardFailure(error)) throw error;
    }
  }
}

function isGuardFailure(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause)
    if ((cause as { code?: string }).code === "22012") return true;
  return false;
}

export type CallPayment =
  | { coveredBy: IncludedCall; holdId?: undefined; heldCents?: undefined }
  /** `heldCents`: a hold is a whole number of prices, so a whole number of cents. */
  | { holdId: string; heldCents: number; coveredBy?: undefined };

/**
 * Pays for a call before it is made: an included call of the payer's plan (when `tryIncluded`),
 * else a hold of the price, or of up to `leaseCents` (a lease: several calls' prices). A wallet
 * that cannot cover the price is a 402 naming the price and balance.
 */
export async function takeCallPayment(
  db: Database,
  options: HoldRequest & {
    tryIncluded: boolean;
    accounts: { wallet: string; held: string };
    /** The most to hold, for a lease; the price when not given. */
    leaseCents?: number;
    /** The call an included call is taken for (its `included_calls` row, decision 025). */
    callId?: string;
  },
): Promise<CallPayment> {
  const callId = options.callId ?? randomUUID();
  const price = centsToMicros(options.amountCents);
  const most = centsToMicros(Math.max(options.amountCents, options.leaseCents ?? 0));
  if (!Number.isSafeInteger(options.amountCents) || options.amountCents <= 0 || !Number.isSafeInteger(most))
    throw new Error("a held price must be a positive integer of cents");
  const [row] = await retryingGuard(() =>
    takePaymentStatement(db, [
      options.payerId,
      options.applicationId,
      options.creatorId,
      price,
      new Date(Date.now() + options.ttlSeconds * 1000).toISOString(),
      options.accounts.wallet,
      options.accounts.held,
      options.tryIncluded,
      most,
      callId,
    ]),
  );
  if (row?.subscription_id && row.period_start)
    return {
      coveredBy: { subscriptionId: row.subscription_id, periodStart: row.period_start, callId },
    };
  if (row?.hold_id) return { holdId: row.hold_id, heldCents: Number(row.hold_micros) / MICROS_PER_CENT };
  throw await paymentRequired(db, options);
}

/**
 * Asks for the money the payer's open holds do not yet spend (decision 025): each is marked, and
 * the process holding it closes it once its calls in flight end (leases.ts). Answers how
 * many of the payer's holds still hold money unspent; none means a refusal stands.
 */
export async function recallHolds(db: Database, payerId: string): Promise<number> {
  // A hold another statement has locked (a record or close in flight) is skipped rather than
  // waited for: waiting could deadlock with a batch locking holds in another order; the caller
  // recalls again as it retries.
  const recalled = await queryRows<{ id: string }>(
    db,
    sql`update holds set recalled_at = now()
        where id in (
          select id from holds
          where payer_id = ${payerId} and status = 'held' and recalled_at is null
            and settled_micros < amount_micros
          order by id for update skip locked)
        returning id`,
  );
  const [open] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from holds
        where payer_id = ${payerId} and status = 'held' and settled_micros < amount_micros`,
  );
  return Math.max(recalled.length, open?.n ?? 0);
}

/** Which of these holds another process has recalled. */
export async function recalledOf(db: Database, holdIds: string[]): Promise<string[]> {
  if (holdIds.length === 0) return [];
  const rows = await db
    .select({ id: holds.id })
    .from(holds)
    .where(and(inArray(holds.id, holdIds), sql`${holds.recalledAt} is not null`));
  return rows.map((row) => row.id);
}

/** What a call spent from its hold: its price (cents), the platform's fee and the model cost its creator's share paid (micros). */
export interface Spent {
  chargedCents: number;
  feeMicros: number;
  modelCostDeductedMicros: number;
}

/**
 * The one spend from holds (this file's `spendFromHold` for one call, record.ts's batch for many):
 * for each row of `spent` (`hold_id`, `added` micros, `fee`, `model_cost`, `calls`), the hold's
 * `settled_micros`, `fee_micros`, `model_cost_micros` and `calls` grow by them, only while the hold
 * is held, not expired, and has room for what is added: a hold is never overspent, and a closed or
 * expired one pays for nothing (decision 025). Callers add their own `returning`.
 */
export function spendFromHoldsSql(spent: string): string {
  return `update holds set settled_micros = settled_micros + s.added, fee_micros = fee_micros + s.fee,
       model_cost_micros = holds.model_cost_micros + s.model_cost, calls = holds.calls + s.calls
     from ${spent} s where holds.id = s.hold_id and holds.status = 'held' and holds.expires_at > now()
       and holds.settled_micros + s.added <= holds.amount_micros`;
}

/**
 * Spends one call's price from a hold inside the caller's transaction (the one recording the
 * invocation): adds the price to `settled_micros`, the platform's share of it to `fee_micros`,
 * the model cost its creator's share pays (at most that share) to `model_cost_micros`, and one to
 * `calls`. No ledger row is written per call: the hold's close posts what its calls spent
 * (`closeHold`, docs/decisions/020). Undefined if the hold was already closed, has expired (the
 * sweeper may close it) or has less left than the price.
 */
export async function spendFromHold(
  tx: Database,
  holdId: string,
  call: { amountCents: number; feePercent: number; modelCostMicros?: number; applicationId?: string },
): Promise<Spent | undefined> {
  // The lower of the call's price and the app's price now, its fee and model cost: rules.ts, as the batch record does (record.ts).
  const [spent] = await queryRows<{ amount: string; fee: string; model_cost: string }>(
    tx,
    sql`with c as (
          select ${sql.raw(chargedCentsSql("s.amount", `coalesce((select ${currentPriceSql("a")} from applications a where a.id = s.app), s.amount)`))} as cents
          from (select ${call.amountCents}::bigint as amount, ${call.applicationId ?? null}::uuid as app) s
        ), f as (
          select c.cents, ${sql.raw(microsSql("c.cents"))} as amount,
            ${sql.raw(feeMicrosSql(microsSql("c.cents"), "s.fee_percent"))} as fee
          from c, (select ${call.feePercent}::numeric as fee_percent) s
        ), p as (
          select f.*, ${sql.raw(modelCostDeductedSql("m.model_cost", "f.amount", "f.fee"))} as model_cost
          from f, (select ${call.modelCostMicros ?? 0}::bigint as model_cost) m
        ), spent as (
          select ${holdId}::uuid as hold_id, p.cents, p.amount as added, p.fee, p.model_cost, 1 as calls from p
        )
        ${sql.raw(spendFromHoldsSql("spent"))}
        returning s.cents::text as amount, s.fee::text as fee, s.model_cost::text as model_cost`,
  );
  return spent
    ? {
        chargedCents: Number(spent.amount),
        feeMicros: Number(spent.fee),
        modelCostDeductedMicros: Number(spent.model_cost),
      }
    : undefined;
}

/**
 * Closes a hold and posts what happened to it: what its calls spent goes from the payer's held
 * account to the creator's earnings, the platform's fee and the model cost (a `settle` transaction, "N paid
 * calls"), and the rest back to the wallet (a `release` transaction). Called when the process is
 * done with a lease (used up, idle, its server closing), and by the sweeper for holds a crash
 * left open once they expire. False if it was already closed. See `closeHoldStatement`.
 */
export async function closeHold(db: Database, holdId: string): Promise<boolean> {
  try {
    const [row] = await retryingGuard(() => closeHoldStatement(db, [holdId]));
    return (row?.closed ?? 0) > 0;
  } catch {
    // An account the posting needs does not exist yet (a creator's first earnings, for apps made
    // before their creation made the account; a fresh database's platform accounts): create the
    // hold's accounts and close it again. The failed statement changed nothing.
    const [hold] = await db
      .select({ payerId: holds.payerId, creatorId: holds.creatorId })
      .from(holds)
      .where(and(eq(holds.id, holdId), eq(holds.status, "held")));
    if (!hold) return false;
    await accountFor(db, "wallet", hold.payerId);
    await accountFor(db, "held", hold.payerId);
    await accountFor(db, "earnings", hold.creatorId);
    await accountFor(db, "platform_fee", null);
    await accountFor(db, "model_cost", null);
    const [row] = await retryingGuard(() => closeHoldStatement(db, [holdId]));
    return (row?.closed ?? 0) > 0;
  }
}

/**
 * The close in one statement (decision 020). The hold's accounts are locked first, in id order,
 * like every other posting, so it cannot deadlock with one. Then the hold
 * row is updated, under its row lock, so a call still spending from it either committed before
 * (and is posted here) or finds it closed (and is not charged). Then up to three transactions with
 * their entries, each account moved once (never below zero): what its calls spent (`settle`), the
 * unspent rest back to the wallet (`release`), and, when the payer is in debt, the debt paid
 * from the wallet before anything stays there (`reversal`, reference `debt:<hold>`, decision
 * 028: money coming back to a wallet pays its owner's debt first, as a top-up does; a lease a
 * chargeback recalled is the usual case). A fully spent hold closes as settled, any other as
 * released. It commits without waiting for the WAL flush, like the hold itself: everything it
 * posts is derived from what the calls' synchronous commits made durable (`settled_micros`,
 * `fee_micros`, `model_cost_micros`, `calls`) and the balances it locked, so a close lost in a
 * crash leaves the hold open, and the sweeper closes it again. The guard divides by zero,
 * aborting the statement, when an account is missing or a balance could not move.
 */
const closeHoldStatement = preparedStatement<{ closed: number; guard: number }>(
  "pm_close_hold_v4",
  `with target as (
     select payer_id, creator_id from holds where id = $1::uuid and status = 'held'
   ), acct as (
     select
       (select a.id from ledger_accounts a where a.kind = 'wallet' and a.owner_id = t.payer_id) as wallet,
       (select a.id from ledger_accounts a where a.kind = 'held' and a.owner_id = t.payer_id) as held,
       (select a.id from ledger_accounts a where a.kind = 'earnings' and a.owner_id = t.creator_id) as earnings,
       (select a.id from ledger_accounts a where a.kind = 'platform_fee' and a.owner_id is null) as platform,
       (select a.id from ledger_accounts a where a.kind = 'model_cost' and a.owner_id is null) as model,
       (select a.id from ledger_accounts a where a.kind = 'debt' and a.owner_id = t.payer_id) as debt
     from target t
   ), first as (
     select id, balance_micros from ledger_accounts
     where id in (select wallet from acct union all select held from acct
                  union all select earnings from acct union all select platform from acct
                  union all select model from acct union all select debt from acct)
     order by id for update
   ), h as (
     update holds set status = case when settled_micros = amount_micros then 'settled' else 'released' end,
       closed_at = now()
     where id = $1::uuid and status = 'held' and (select count(*) from first) >= 0
     returning id, payer_id, creator_id, amount_micros, settled_micros, fee_micros, model_cost_micros, calls
   ), owed as (
     -- What the payer's debt takes of the wallet once the release is in it: balances as locked.
     select least(
       greatest(0, -coalesce((select f.balance_micros from first f where f.id = acct.debt), 0)),
       coalesce((select f.balance_micros from first f where f.id = acct.wallet), 0)
         + h.amount_micros - h.settled_micros) as amount
     from h, acct
   ), tx as (
     select 'settle' as kind, h.id::text as reference,
       case when h.calls = 1 then '1 paid call' else h.calls || ' paid calls' end as description
     from h where h.settled_micros > 0
     union all
     select 'release', h.id::text,
       case when h.settled_micros > 0 then 'Released: what a lease''s calls did not spend'
            else 'Released: the call was not completed' end
     from h where h.amount_micros > h.settled_micros
     union all
     select 'reversal', 'debt:' || h.id::text, 'Debt settled from your wallet (money a lease gave back)'
     from h, owed where owed.amount > 0
   ), posted as (
     insert into ledger_transactions (kind, reference, description)
     select tx.kind, tx.reference, tx.description from tx
     returning id, kind
   ), moves as (
     select posted.id as transaction_id, m.kind, m.account_id, m.delta
     from posted, h, acct, owed
     cross join lateral (values
       ('settle', acct.held, -h.settled_micros),
       ('settle', acct.earnings, h.settled_micros - h.fee_micros - h.model_cost_micros),
       ('settle', acct.platform, h.fee_micros),
       ('settle', acct.model, h.model_cost_micros),
       ('release', acct.held, h.settled_micros - h.amount_micros),
       ('release', acct.wallet, h.amount_micros - h.settled_micros),
       ('reversal', acct.wallet, -owed.amount),
       ('reversal', acct.debt, owed.amount)) as m(kind, account_id, delta)
     where m.kind = posted.kind and m.delta <> 0
   ), totals as (
     select account_id as id, sum(delta)::bigint as delta from moves group by account_id
   ), locked as (
     select id from ledger_accounts where id in (select id from totals) order by id for update
   ), moved as (
     ${moveBalancesSql("totals", "locked")}
   ), entries as (
     -- The debt's payment after the release, in entry id order: the wallet's replay (lots.ts)
     -- returns the release to its lots before the payment takes from the oldest.
     insert into ledger_entries (transaction_id, account_id, amount_micros)
     select transaction_id, account_id, delta from moves where account_id is not null
     order by kind = 'reversal'
     returning 1
   )
   select (select count(*) from h)::int as closed,
     set_config('synchronous_commit', 'off', true) as async,
     1 / (case when not exists (select 1 from moves where account_id is null)
               and (select count(*) from moved) = (select count(*) from totals) then 1 else 0 end) as guard`,
  { params: () => [NO_ROW] },
);

/** Closes holds a crashed process left behind once they expire (`closeHold`); returns how many. */
export async function sweepExpiredHolds(db: Database, now: Date = new Date()): Promise<number> {
  const expired = await db
    .select({ id: holds.id })
    .from(holds)
    .where(and(eq(holds.status, "held"), lt(holds.expiresAt, now)))
    .orderBy(asc(holds.expiresAt))
    .limit(500);
  let released = 0;
  const failures: unknown[] = [];
  for (const hold of expired) {
    // One hold that cannot be closed must not keep the others (and their creators' earnings)
    // open: they are closed, and the failure is reported once the sweep is done.
    try {
      if (await closeHold(db, hold.id)) released += 1;
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0)
    throw new Error(`${failures.length} of ${expired.length} expired holds could not be closed`, {
      cause: failures[0],
    });
  return released;
}
