import { randomUUID } from "node:crypto";
import { and, asc, eq, inArray, lt, type SQL, sql } from "drizzle-orm";
import { type Database, preparedStatement, queryRows } from "../../db/client.ts";
import { holds, ledgerAccounts, ledgerTransactions } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { type CallChecks, callsReconciled, checkCalls } from "./call-checks.ts";
import type { IncludedCall } from "./plans.service.ts";

export type AccountKind = "wallet" | "held" | "earnings" | "platform_fee" | "clearing";
type TransactionKind = "top_up" | "hold" | "settle" | "release" | "reversal" | "subscription";

export class InsufficientFunds extends Error {}

/** The account of a kind for an owner (null for platform accounts), created on first use. */
export async function accountFor(db: Database, kind: AccountKind, ownerId: string | null): Promise<string> {
  const owner = ownerId ? eq(ledgerAccounts.ownerId, ownerId) : sql`${ledgerAccounts.ownerId} is null`;
  const [existing] = await db
    .select({ id: ledgerAccounts.id })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, kind), owner))
    .limit(1);
  if (existing) return existing.id;
  await db.insert(ledgerAccounts).values({ kind, ownerId }).onConflictDoNothing();
  const [created] = await db
    .select({ id: ledgerAccounts.id })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, kind), owner))
    .limit(1);
  if (!created) throw new Error(`could not create ${kind} account`);
  return created.id;
}

// Account ids never change once created, so the paid path resolves each (kind, owner) once per
// process and database (keyed by handle: tests run several databases in one process).
const knownAccounts = new WeakMap<Database, Map<string, string>>();

/** accountFor, remembered: only for the root handle, never for a transaction's. */
export async function cachedAccountFor(
  db: Database,
  kind: AccountKind,
  ownerId: string | null,
): Promise<string> {
  let ids = knownAccounts.get(db);
  if (!ids) {
    ids = new Map();
    knownAccounts.set(db, ids);
  }
  const key = `${kind}:${ownerId ?? ""}`;
  const known = ids.get(key);
  if (known) return known;
  const id = await accountFor(db, kind, ownerId);
  ids.set(key, id);
  return id;
}

/**
 * Posts one balanced transaction inside the caller's DB transaction. Balances move by conditional
 * updates (never below zero except `clearing`), in account-id order so concurrent postings cannot
 * deadlock. Returns the transaction's id, or undefined when a transaction with this (kind,
 * reference) was already posted.
 */
export async function postTransaction(
  tx: Database,
  posting: {
    kind: TransactionKind;
    reference: string;
    description: string;
    entries: { accountId: string; amountCents: number }[];
  },
): Promise<string | undefined> {
  checkBalanced(posting.kind, posting.entries);
  const [transaction] = await tx
    .insert(ledgerTransactions)
    .values({ kind: posting.kind, reference: posting.reference, description: posting.description })
    .onConflictDoNothing()
    .returning({ id: ledgerTransactions.id });
  if (!transaction) return undefined;
  await moveBalances(tx, transaction.id, posting.entries);
  return transaction.id;
}

function checkBalanced(kind: TransactionKind, entries: { amountCents: number }[]) {
  const total = entries.reduce((sum, entry) => sum + entry.amountCents, 0);
  if (total !== 0) throw new Error(`unbalanced ${kind} transaction: entries sum to ${total}`);
  if (entries.some((entry) => !Number.isSafeInteger(entry.amountCents)))
    throw new Error("amounts must be integer cents");
}

type Entry = { accountId: string; amountCents: number };

/**
 * The SQL that writes a posted transaction's entries and moves its balances, as CTEs to append to
 * a `with` list (`posted` must name the transaction's row). The accounts are locked in id order
 * first, so concurrent postings cannot deadlock; a balance may not go below zero except
 * `clearing`. The statement's `moved` count below the number of entries means insufficient funds.
 */
function balanceMoves(entries: Entry[]): SQL {
  const ids = sql.join(
    entries.map((e) => sql`${e.accountId}::uuid`),
    sql`, `,
  );
  const values = sql.join(
    entries.map((e) => sql`(${e.accountId}::uuid, ${e.amountCents}::bigint)`),
    sql`, `,
  );
  return sql`locked as (
      select id from ledger_accounts where id in (${ids}) order by id for update),
    moved as (
      update ledger_accounts a set balance_cents = a.balance_cents + v.delta
      from (values ${values}) v(id, delta)
      where a.id = v.id and a.id in (select id from locked) and exists (select 1 from posted)
        and (a.kind = 'clearing' or a.balance_cents + v.delta >= 0)
      returning a.id),
    entries as (
      insert into ledger_entries (transaction_id, account_id, amount_cents)
      select posted.id, v.id, v.delta from posted, (values ${values}) v(id, delta)
      returning 1)`;
}

/** The entries of a posted transaction and the balances they move, in one round trip. */
async function moveBalances(tx: Database, transactionId: string, entries: Entry[]): Promise<void> {
  const [result] = await queryRows<{ moved: number }>(
    tx,
    sql`with posted as (select ${transactionId}::uuid as id), ${balanceMoves(entries)}
        select (select count(*) from moved)::int as moved`,
  );
  if ((result?.moved ?? 0) < entries.length) throw new InsufficientFunds("an account cannot cover its entry");
}

/**
 * Money from outside (a paid top-up) into a wallet, inside the caller's transaction, once per
 * reference; the transaction's id, or undefined when this reference was already posted.
 */
export async function postTopUp(
  tx: Database,
  options: { userId: string; amountCents: number; reference: string; description: string },
): Promise<string | undefined> {
  const [wallet, clearing] = await Promise.all([
    accountFor(tx, "wallet", options.userId),
    accountFor(tx, "clearing", null),
  ]);
  return postTransaction(tx, {
    kind: "top_up",
    reference: options.reference,
    description: options.description,
    entries: [
      { accountId: clearing, amountCents: -options.amountCents },
      { accountId: wallet, amountCents: options.amountCents },
    ],
  });
}

/** A top-up in its own transaction (seed data, tests). */
export async function creditTopUp(
  db: Database,
  options: { userId: string; amountCents: number; reference: string; description: string },
): Promise<boolean> {
  return (await db.transaction((tx) => postTopUp(tx as unknown as Database, options))) !== undefined;
}

/** What a hold is for: who pays which creator for which app, how much, for how long, and where to top up. */
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

/** The 402 of a call the wallet cannot cover: its price, the balance, and where to top up. */
async function paymentRequired(
  db: Database,
  call: { payerId: string; amountCents: number; topUpUrl: string },
): Promise<AppError> {
  const balance = await walletBalance(db, call.payerId);
  return new AppError(
    "payment_required",
    `Insufficient balance: this call costs ${dollars(call.amountCents)} and your wallet has ${dollars(balance)} available. Top up at ${call.topUpUrl}`,
  );
}

/**
 * The one statement that pays for a paid call before the upstream is called: one of the payer's
 * included calls when a plan covers it (`$8`), otherwise a hold from the wallet. The hold is the
 * price (`$4`), or a lease of several calls' prices (up to `$9`, and beyond the first price never
 * more than half the wallet) that the process then spends call by call without a round trip
 * (gateway/leases.ts, docs/decisions/018). The wallet and held accounts are locked in id order and
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
  hold_cents: string | null;
}>(
  "pm_take_payment_v4",
  `with v as (
     select $1::uuid as payer, $2::uuid as app, $3::uuid as creator, $4::bigint as price,
            $5::timestamptz as expires, $6::uuid as wallet, $7::uuid as held, $8::boolean as try_included,
            $9::bigint as most, $10::uuid as call_id
   ), included as (
     update subscriptions set calls_used = calls_used + 1
     where id = (
       select s.id from subscriptions s, v
       where v.try_included and s.application_id = v.app and s.subscriber_id = v.payer
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
     select a.id, a.balance_cents from ledger_accounts a, v
     where a.id in (v.wallet, v.held) and not exists (select 1 from included)
     order by a.id for update of a
   ), sized as (
     select least(v.most, greatest(v.price, l.balance_cents / (2 * v.price) * v.price)) as amount
     from v, locked l
     where l.id = v.wallet and l.balance_cents >= v.price and (select count(*) from locked) = 2
   ), hold as (
     insert into holds (payer_id, application_id, creator_id, amount_cents, expires_at)
     select v.payer, v.app, v.creator, sized.amount, v.expires from v, sized
     returning id, amount_cents
   ), posted as (
     insert into ledger_transactions (kind, reference, description)
     select 'hold', hold.id::text, 'Held for paid calls' from hold
     returning id
   ), deltas as (
     select v.wallet as id, -hold.amount_cents as delta from v, hold
     union all select v.held, hold.amount_cents from v, hold
   ), moved as (
     update ledger_accounts a set balance_cents = a.balance_cents + d.delta
     from deltas d
     where a.id = d.id and exists (select 1 from posted) and a.id in (select id from locked)
       and a.balance_cents + d.delta >= 0
     returning a.id
   ), entries as (
     insert into ledger_entries (transaction_id, account_id, amount_cents)
     select posted.id, d.id, d.delta from posted, deltas d
     returning 1
   )
   select (select id from included) as subscription_id,
     (select period_start from included) as period_start, (select id from hold) as hold_id,
     (select amount_cents::text from hold) as hold_cents,
     set_config('synchronous_commit', 'off', true) as async,
     1 / (case when (select count(*) from hold) = 0 or (select count(*) from moved) = 2 then 1 else 0 end) as guard`,
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
  const most = Math.max(options.amountCents, options.leaseCents ?? 0);
  if (!Number.isSafeInteger(options.amountCents) || options.amountCents <= 0 || !Number.isSafeInteger(most))
    throw new Error("a held price must be a positive integer of cents");
  const [row] = await retryingGuard(() =>
    takePaymentStatement(db, [
      options.payerId,
      options.applicationId,
      options.creatorId,
      options.amountCents,
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
  if (row?.hold_id) return { holdId: row.hold_id, heldCents: Number(row.hold_cents) };
  throw await paymentRequired(db, options);
}

/**
 * Asks for the money the payer's open holds do not yet spend (decision 025): each is marked, and
 * the process holding it closes it once its calls in flight end (gateway/leases.ts). Answers how
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
            and settled_cents < amount_cents
          order by id for update skip locked)
        returning id`,
  );
  const [open] = await queryRows<{ n: number }>(
    db,
    sql`select count(*)::int as n from holds
        where payer_id = ${payerId} and status = 'held' and settled_cents < amount_cents`,
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

export const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export function splitFee(amountCents: number, feePercent: number): { fee: number; net: number } {
  const fee = Math.round((amountCents * feePercent) / 100);
  return { fee, net: amountCents - fee };
}

/**
 * Spends one call's price from a hold inside the caller's transaction (the one recording the
 * invocation): adds the price to `settled_cents`, the platform's share of it to `fee_cents`, and
 * one to `calls`. No ledger row is written per call: the hold's close posts what its calls spent
 * (`closeHold`, docs/decisions/020). False if the hold was already closed, has expired (the
 * sweeper may close it) or has less left than the price.
 */
export async function spendFromHold(
  tx: Database,
  holdId: string,
  call: { amountCents: number; feePercent: number; applicationId?: string },
): Promise<number | undefined> {
  // The lower of the call's price and the app's price now, as the batch record does (recorder.ts).
  const [spent] = await queryRows<{ amount: string }>(
    tx,
    sql`with p as (
          select least(${call.amountCents}::bigint, coalesce((
            select case when a.pending_price_at is not null and a.pending_price_at <= now()
                        then a.pending_price_cents else a.price_cents end
            from applications a where a.id = ${call.applicationId ?? null}::uuid), ${call.amountCents}::bigint)) as amount
        )
        update holds set settled_cents = settled_cents + p.amount,
          fee_cents = fee_cents + round(p.amount * ${call.feePercent}::numeric / 100)::bigint, calls = calls + 1
        from p
        where id = ${holdId} and status = 'held' and expires_at > now()
          and settled_cents + p.amount <= amount_cents
        returning p.amount::text as amount`,
  );
  return spent ? Number(spent.amount) : undefined;
}

/**
 * Closes a hold and posts what happened to it: what its calls spent goes from the payer's held
 * account to the creator's earnings and the platform's fee (a `settle` transaction, "N paid
 * calls"), and the rest back to the wallet (a `release` transaction). Called when the process is
 * done with a lease (used up, idle, its server closing), and by the sweeper for holds a crash
 * left open once they expire. False if it was already closed. See `closeHoldStatement`.
 */
export async function closeHold(db: Database, holdId: string): Promise<boolean> {
  try {
    const [row] = await retryingGuard(() => closeHoldStatement(db, [holdId]));
    return (row?.closed ?? 0) > 0;
  } catch {
    // An account the posting needs does not exist yet (a creator's first earnings): create the
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
    const [row] = await retryingGuard(() => closeHoldStatement(db, [holdId]));
    return (row?.closed ?? 0) > 0;
  }
}

/**
 * The close in one statement (decision 020). The hold's accounts are locked first, in id order,
 * like every other posting, so it cannot deadlock with one. Then the hold
 * row is updated, under its row lock, so a call still spending from it either committed before
 * (and is posted here) or finds it closed (and is not charged). Then up to two transactions with
 * their entries, each account moved once (never below zero). A fully spent hold closes as
 * settled, any other as released. It commits without waiting for the WAL flush, like the hold
 * itself: everything it posts is derived from what the calls' synchronous commits made durable
 * (`settled_cents`, `fee_cents`, `calls`), so a close lost in a crash leaves the hold open, and
 * the sweeper closes it again. The guard divides by zero, aborting the statement, when an
 * account is missing or a balance could not move.
 */
const closeHoldStatement = preparedStatement<{ closed: number; guard: number }>(
  "pm_close_hold_v1",
  `with target as (
     select payer_id, creator_id from holds where id = $1::uuid and status = 'held'
   ), acct as (
     select
       (select a.id from ledger_accounts a where a.kind = 'wallet' and a.owner_id = t.payer_id) as wallet,
       (select a.id from ledger_accounts a where a.kind = 'held' and a.owner_id = t.payer_id) as held,
       (select a.id from ledger_accounts a where a.kind = 'earnings' and a.owner_id = t.creator_id) as earnings,
       (select a.id from ledger_accounts a where a.kind = 'platform_fee' and a.owner_id is null) as platform
     from target t
   ), first as (
     select id from ledger_accounts
     where id in (select wallet from acct union all select held from acct
                  union all select earnings from acct union all select platform from acct)
     order by id for update
   ), h as (
     update holds set status = case when settled_cents = amount_cents then 'settled' else 'released' end,
       closed_at = now()
     where id = $1::uuid and status = 'held' and (select count(*) from first) >= 0
     returning id, payer_id, creator_id, amount_cents, settled_cents, fee_cents, calls
   ), tx as (
     select 'settle' as kind,
       case when h.calls = 1 then '1 paid call' else h.calls || ' paid calls' end as description
     from h where h.settled_cents > 0
     union all
     select 'release',
       case when h.settled_cents > 0 then 'Released: what a lease''s calls did not spend'
            else 'Released: the call was not completed' end
     from h where h.amount_cents > h.settled_cents
   ), posted as (
     insert into ledger_transactions (kind, reference, description)
     select tx.kind, h.id::text, tx.description from tx, h
     returning id, kind
   ), moves as (
     select posted.id as transaction_id, m.account_id, m.delta
     from posted, h, acct
     cross join lateral (values
       ('settle', acct.held, -h.settled_cents),
       ('settle', acct.earnings, h.settled_cents - h.fee_cents),
       ('settle', acct.platform, h.fee_cents),
       ('release', acct.held, h.settled_cents - h.amount_cents),
       ('release', acct.wallet, h.amount_cents - h.settled_cents)) as m(kind, account_id, delta)
     where m.kind = posted.kind and m.delta <> 0
   ), totals as (
     select account_id, sum(delta)::bigint as delta from moves group by account_id
   ), locked as (
     select id from ledger_accounts where id in (select account_id from totals) order by id for update
   ), moved as (
     update ledger_accounts a set balance_cents = a.balance_cents + t.delta
     from totals t
     where a.id = t.account_id and a.id in (select id from locked)
       and (a.kind = 'clearing' or a.balance_cents + t.delta >= 0)
     returning a.id
   ), entries as (
     insert into ledger_entries (transaction_id, account_id, amount_cents)
     select transaction_id, account_id, delta from moves where account_id is not null
     returning 1
   )
   select (select count(*) from h)::int as closed,
     set_config('synchronous_commit', 'off', true) as async,
     1 / (case when not exists (select 1 from moves where account_id is null)
               and (select count(*) from moved) = (select count(*) from totals) then 1 else 0 end) as guard`,
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

export async function walletBalance(db: Database, userId: string): Promise<number> {
  const [row] = await db
    .select({ balance: ledgerAccounts.balanceCents })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, "wallet"), eq(ledgerAccounts.ownerId, userId)));
  return row?.balance ?? 0;
}

export async function balancesOf(
  db: Database,
  userId: string,
): Promise<Record<"wallet" | "held" | "earnings", number>> {
  const rows = await db
    .select({ kind: ledgerAccounts.kind, balance: ledgerAccounts.balanceCents })
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
          select kind, balance_cents from ledger_accounts
          where owner_id = ${userId} and kind in ('wallet', 'held', 'earnings')
        ), open as (
          select payer_id, creator_id, settled_cents, fee_cents from holds
          where status = 'held' and (payer_id = ${userId} or creator_id = ${userId})
        )
        select
          (select coalesce(sum(balance_cents), 0) from balance where kind = 'wallet')::text as wallet,
          ((select coalesce(sum(balance_cents), 0) from balance where kind = 'held')
            - (select coalesce(sum(settled_cents), 0) from open where payer_id = ${userId}))::text as held,
          ((select coalesce(sum(balance_cents), 0) from balance where kind = 'earnings')
            + (select coalesce(sum(settled_cents - fee_cents), 0) from open where creator_id = ${userId}))::text
            as earnings`,
  );
  return {
    wallet: Number(row?.wallet ?? 0),
    held: Number(row?.held ?? 0),
    earnings: Number(row?.earnings ?? 0),
  };
}

export interface ReconcileReport extends CallChecks {
  accounts: number;
  transactions: number;
  /** Sum of every entry ever posted: zero in a balanced ledger. */
  ledgerTotal: number;
  mismatches: { accountId: string; kind: string; balance: number; entries: number }[];
  unbalancedTransactions: string[];
  /**
   * Holds whose count of paid calls differs from the invocations charged to them, or whose close
   * posted something other than what they recorded as spent and left unspent (an empty list when
   * every charge is both recorded and posted).
   */
  mismatchedHolds: string[];
  /** Held accounts whose balance is not what their payer's open holds set aside. */
  mismatchedHeld: string[];
  ok: boolean;
}

/** Every list of differences a reconcile reports, by name: each must be empty. */
export function reconcileLists(report: ReconcileReport): Record<string, unknown[]> {
  const { mismatches, unbalancedTransactions, mismatchedHolds, mismatchedHeld } = report;
  const calls: CallChecks = {
    unchargedSuccesses: report.unchargedSuccesses,
    doubleCovered: report.doubleCovered,
    overusedPeriods: report.overusedPeriods,
    miscountedPeriods: report.miscountedPeriods,
    overdueHolds: report.overdueHolds,
    unconsumedPayments: report.unconsumedPayments,
  };
  return { mismatches, unbalancedTransactions, mismatchedHolds, mismatchedHeld, ...calls };
}

/**
 * Checks that every balance equals the sum of its entries, every transaction sums to zero, every
 * hold's paid calls are both recorded (invocations) and, once it is closed, posted, and every
 * answered call is charged exactly once or free (`checkCalls`, call-checks.ts).
 */
export async function reconcile(db: Database): Promise<ReconcileReport> {
  const rows = await queryRows<{ id: string; kind: string; balance: string; entries: string }>(
    db,
    sql`select a.id, a.kind, a.balance_cents::text as balance, coalesce(sum(e.amount_cents), 0)::text as entries
        from ledger_accounts a left join ledger_entries e on e.account_id = a.id group by a.id`,
  );
  const unbalanced = await queryRows<{ transaction_id: string }>(
    db,
    sql`select transaction_id from ledger_entries group by transaction_id having sum(amount_cents) <> 0`,
  );
  const [totals] = await queryRows<{ total: string; transactions: string }>(
    db,
    sql`select coalesce(sum(amount_cents), 0)::text as total, (select count(*) from ledger_transactions)::text as transactions from ledger_entries`,
  );
  // Every charged call names its hold, and a closed hold posted exactly what its calls spent.
  // (Holds from before decision 020 counted no calls and were posted call by call.)
  const mismatchedHolds = await queryRows<{ id: string }>(
    db,
    sql`with charged as (
          select hold_id, count(*)::int as calls from invocations where hold_id is not null group by hold_id
        ), posted as (
          select t.reference,
            -sum(e.amount_cents) filter (where t.kind = 'settle') as settled,
            -sum(e.amount_cents) filter (where t.kind = 'release') as released
          from ledger_transactions t
          join ledger_entries e on e.transaction_id = t.id
          join ledger_accounts a on a.id = e.account_id and a.kind = 'held'
          where t.kind in ('settle', 'release') group by t.reference
        )
        select h.id from holds h
        left join charged c on c.hold_id = h.id
        left join posted p on p.reference = h.id::text
        where h.calls <> coalesce(c.calls, 0)
           or (h.calls > 0 and h.status <> 'held' and coalesce(p.settled, 0) <> h.settled_cents)
           or (h.status <> 'held' and coalesce(p.released, 0) <> h.amount_cents - h.settled_cents)
           or (h.status = 'held' and (p.settled is not null or p.released is not null))`,
  );
  // Money set aside and not yet posted is exactly what the open holds hold (one snapshot).
  const mismatchedHeld = await queryRows<{ id: string }>(
    db,
    sql`select a.id from ledger_accounts a
        left join (select payer_id, sum(amount_cents) as cents from holds where status = 'held' group by payer_id) o
          on o.payer_id = a.owner_id
        where a.kind = 'held' and a.balance_cents <> coalesce(o.cents, 0)`,
  );
  const mismatches = rows
    .filter((row) => row.balance !== row.entries)
    .map((row) => ({
      accountId: row.id,
      kind: row.kind,
      balance: Number(row.balance),
      entries: Number(row.entries),
    }));
  const ledgerTotal = Number(totals?.total ?? 0);
  const unbalancedTransactions = unbalanced.map((row) => row.transaction_id);
  const calls = await checkCalls(db);
  return {
    ...calls,
    accounts: rows.length,
    transactions: Number(totals?.transactions ?? 0),
    ledgerTotal,
    mismatches,
    unbalancedTransactions,
    mismatchedHolds: mismatchedHolds.map((row) => row.id),
    mismatchedHeld: mismatchedHeld.map((row) => row.id),
    ok:
      mismatches.length === 0 &&
      unbalancedTransactions.length === 0 &&
      mismatchedHolds.length === 0 &&
      mismatchedHeld.length === 0 &&
      ledgerTotal === 0 &&
      callsReconciled(calls),
  };
}
