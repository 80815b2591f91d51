import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import {
  chargebackParts,
  ledgerAccounts,
  ledgerEntries,
  ledgerTransactions,
  paymentReversals,
  payments,
  reversedPayments,
  subscriptions,
} from "../../db/schema/index.ts";
import { type Actor, writeAudit } from "../admin/audit.ts";
import { recallHolds } from "./call-payment/holds.ts";
import { DEBT, lockAccounts, lockedBalance, settleDebt } from "./debts.ts";
import { mulDiv, replayLot, splitExactly } from "./lots.ts";
import { centsToMicros, dollars, formatMicros } from "./money.ts";
import { creditPaymentToWallet, type PaymentRow } from "./plan-payments.ts";
import { accountFor, postTransaction } from "./postings.ts";

/**
 * Refunds and disputes of card payments (issue 17 item 4, docs/decisions/028).
 *
 * Each event first records a fact, once: a refund by its id (what it added to the charge's
 * refunded total), a dispute by its id (amount and status). Then the payment is brought to what
 * the facts say the ledger must have taken back:
 *
 *   target = min(payment amount, refunds + disputes open or lost)
 *
 * and only the difference from what was already taken back (`reversed_payments`) moves. So a
 * redelivered event, a refund and a dispute of the same charge, an inquiry (which takes nothing)
 * or a dispute won (the target falls, the money comes back) all converge on one figure, under the
 * payment's row lock, whatever order they arrive in.
 *
 * Where the money comes from: a top-up (or a plan payment credited to the wallet) from the payer's
 * wallet, and what was already spent becomes the payer's debt (`debt` account, below zero); a plan
 * payment from the creator's earnings while still inside PAYOUT_HOLD_DAYS (a shortfall is the
 * creator's debt), or else from the platform (its `debt` account: a loss the operator sees), and
 * the platform's fee either way. Money coming back settles a debt first.
 */

/** Stripe's dispute statuses, as we keep them. */
export type DisputeStatus = "open" | "inquiry" | "won" | "lost" | "warning_closed";

export function disputeStatusOf(stripeStatus: string): DisputeStatus {
  switch (stripeStatus) {
    case "warning_needs_response":
    case "warning_under_review":
      return "inquiry";
    case "warning_closed":
      return "warning_closed";
    case "won":
    case "prevented":
      return "won";
    case "lost":
      return "lost";
    default:
      return "open";
  }
}

const TERMINAL: DisputeStatus[] = ["won", "lost", "warning_closed"];

export type ReversalFact =
  | {
      kind: "refund";
      /** The refund's id (re_…), or, when the event names none, the charge and its refunded total. */
      externalId: string;
      /** Stripe: the charge's amount_refunded (cumulative); only its increase is applied. */
      refundedTotalCents?: number;
      /** The sandbox: this refund's own amount. */
      amountCents?: number;
    }
  | {
      kind: "dispute";
      externalId: string;
      amountCents: number;
      status: DisputeStatus;
      reason?: string;
    };

export interface ReversalOutcome {
  /** False when the payment is unknown (not ours) or not succeeded. */
  found: boolean;
  paymentId?: string;
  /** What moved now: positive taken back, negative given back (cents). */
  movedCents: number;
  /** Whose debt this created or grew (their leases must be recalled once committed). */
  indebted: string[];
}

type Lock = { payment: PaymentRow };

/**
 * Applies one refund or dispute fact to the payment it belongs to (by gateway and payment intent
 * id), inside the caller's transaction. Safe to repeat: a fact already recorded moves nothing.
 */
export async function applyReversal(
  tx: Database,
  options: {
    gateway: "stripe" | "sandbox";
    paymentIntentId: string;
    fact: ReversalFact;
    actor: Actor;
    payoutHoldMs: number;
  },
): Promise<ReversalOutcome> {
  const [payment] = await tx
    .select()
    .from(payments)
    .where(and(eq(payments.gateway, options.gateway), eq(payments.externalId, options.paymentIntentId)))
    .limit(1)
    .for("update");
  if (payment?.status !== "succeeded" || payment.amountCents <= 0)
    return { found: false, movedCents: 0, indebted: [] };
  const recorded = await recordFact(tx, { payment }, options.fact);
  if (!recorded) return { found: true, paymentId: payment.id, movedCents: 0, indebted: [] };
  const outcome = await bringToTarget(tx, { payment }, options.payoutHoldMs);
  const { fact } = options;
  await writeAudit(tx, options.actor, {
    action: fact.kind === "refund" ? "payment.refund" : `payment.dispute.${fact.status}`,
    targetKind: "payment",
    targetId: payment.id,
    reason: fact.kind === "dispute" ? (fact.reason ?? "") : "",
    details: {
      gateway: options.gateway,
      payment_intent: options.paymentIntentId,
      external_id: fact.externalId,
      moved_cents: outcome.movedCents,
      payer_id: payment.userId,
    },
  });
  return { found: true, paymentId: payment.id, ...outcome };
}

/** Records the fact once; false when it changes nothing (a repeat, or no increase). */
async function recordFact(tx: Database, { payment }: Lock, fact: ReversalFact): Promise<boolean> {
  const [existing] = await tx
    .select()
    .from(paymentReversals)
    .where(and(eq(paymentReversals.kind, fact.kind), eq(paymentReversals.externalId, fact.externalId)))
    .limit(1);
  if (fact.kind === "refund") {
    if (existing) return false;
    const [refunds] = await tx
      .select({ total: sql<string>`coalesce(sum(${paymentReversals.amountCents}), 0)::text` })
      .from(paymentReversals)
      .where(and(eq(paymentReversals.paymentId, payment.id), eq(paymentReversals.kind, "refund")));
    const before = Number(refunds?.total ?? 0);
    const increase =
      fact.refundedTotalCents !== undefined ? fact.refundedTotalCents - before : (fact.amountCents ?? 0);
    const amount = Math.min(increase, payment.amountCents - before);
    if (!Number.isSafeInteger(amount) || amount <= 0) return false;
    await tx.insert(paymentReversals).values({
      paymentId: payment.id,
      kind: "refund",
      externalId: fact.externalId,
      amountCents: amount,
      status: "succeeded",
    });
    return true;
  }
  if (!existing) {
    await tx.insert(paymentReversals).values({
      paymentId: payment.id,
      kind: "dispute",
      externalId: fact.externalId,
      amountCents: Math.max(0, Math.min(fact.amountCents, payment.amountCents)),
      status: fact.status,
      reason: fact.reason ?? "",
    });
    return true;
  }
  // A closed dispute stays closed: a late `created` delivered after its `closed` changes nothing.
  if (existing.paymentId !== payment.id || existing.status === fact.status) return false;
  if (TERMINAL.includes(existing.status as DisputeStatus)) return false;
  await tx
    .update(paymentReversals)
    .set({ status: fact.status, updatedAt: new Date() })
    .where(eq(paymentReversals.id, existing.id));
  return true;
}

/** Moves the difference between what the facts say and what was already taken back. */
async function bringToTarget(
  tx: Database,
  { payment }: Lock,
  payoutHoldMs: number,
): Promise<Omit<ReversalOutcome, "found" | "paymentId">> {
  const [facts] = await tx
    .select({
      refunds: sql<string>`coalesce(sum(${paymentReversals.amountCents}) filter (where ${paymentReversals.kind} = 'refund'), 0)::text`,
      disputes: sql<string>`coalesce(sum(${paymentReversals.amountCents}) filter (where ${paymentReversals.kind} = 'dispute' and ${paymentReversals.status} in ('open', 'lost')), 0)::text`,
    })
    .from(paymentReversals)
    .where(eq(paymentReversals.paymentId, payment.id));
  const target = Math.min(payment.amountCents, Number(facts?.refunds ?? 0) + Number(facts?.disputes ?? 0));
  await tx.insert(reversedPayments).values({ paymentId: payment.id }).onConflictDoNothing();
  const [state] = await tx
    .select()
    .from(reversedPayments)
    .where(eq(reversedPayments.paymentId, payment.id))
    .for("update");
  const current = state?.reversedCents ?? 0;
  const delta = target - current;
  if (delta === 0) return { movedCents: 0, indebted: [] };
  // A payment nothing consumed yet (a plan's payment awaiting its subscribe) is credited to its
  // payer's wallet first, so it is reversed like a top-up and can never be used afterwards.
  if (!payment.consumedKind && delta > 0)
    await creditPaymentToWallet(tx, payment, "Card payment credited to your wallet before its refund");
  const [fresh] = await tx.select().from(payments).where(eq(payments.id, payment.id));
  const consumed = fresh ?? payment;
  const indebted =
    consumed.consumedKind === "subscription"
      ? await movePlanPayment(tx, consumed, delta, payoutHoldMs)
      : await moveWalletPayment(tx, consumed, delta);
  await tx
    .update(reversedPayments)
    .set({ reversedCents: target, updatedAt: new Date() })
    .where(eq(reversedPayments.paymentId, payment.id));
  return { movedCents: delta, indebted };
}

// ---------------------------------------------------------------------------------------------
// Ledger amounts are micro-dollars (money.ts); card amounts are cents.

const toLedger = centsToMicros;

type Entry = { accountId: string; amountMicros: number };
type OwnedKind = "wallet" | "earnings" | "platform_fee";

/** An owner's account of `kind` and their debt account, locked in id order. */
async function lockWithDebt(tx: Database, ownerId: string | null, kind: OwnedKind) {
  const account = await accountFor(tx, kind, ownerId);
  const debt = await accountFor(tx, DEBT, ownerId);
  await lockAccounts(tx, [account, debt]);
  return { account, debt };
}

/**
 * Takes `amount` out of an owner's account: what it holds, and the rest into their debt (below
 * zero). Locks the accounts (in id order) so the balance read is the one posted against.
 */
async function takeFrom(tx: Database, ownerId: string | null, kind: OwnedKind, amount: number) {
  const { account, debt } = await lockWithDebt(tx, ownerId, kind);
  const fromAccount = Math.max(0, Math.min(await lockedBalance(tx, account), amount));
  const entries: Entry[] = [];
  if (fromAccount > 0) entries.push({ accountId: account, amountMicros: -fromAccount });
  if (amount > fromAccount) entries.push({ accountId: debt, amountMicros: -(amount - fromAccount) });
  return { entries, debt: amount - fromAccount };
}

/** Gives `amount` back to an owner: their debt first (up to zero), the rest into the account. */
async function giveTo(tx: Database, ownerId: string | null, kind: OwnedKind, amount: number) {
  const { account, debt } = await lockWithDebt(tx, ownerId, kind);
  const owed = Math.max(0, -(await lockedBalance(tx, debt)));
  const toDebt = Math.min(owed, amount);
  const entries: Entry[] = [];
  if (toDebt > 0) entries.push({ accountId: debt, amountMicros: toDebt });
  if (amount > toDebt) entries.push({ accountId: account, amountMicros: amount - toDebt });
  return entries;
}

/**
 * A top-up (or any payment that went to the wallet), decision 045: its lot is found by replaying
 * the payer's wallet (lots.ts). Taken back, in this order: what is left of the lot in the wallet;
 * what open holds set aside from it (the payer's debt: those calls are not posted yet); then what
 * it paid to creators, split over them in proportion to what is not yet taken back from each,
 * each share from the creator's earnings (their debt for what earnings lack) and the platform's
 * fee and model cost on those calls (the platform's fee income, its debt for the rest). Given
 * back (a dispute won): the creators first, then the payer, each debt before any balance.
 */
async function moveWalletPayment(tx: Database, payment: PaymentRow, deltaCents: number): Promise<string[]> {
  const amount = toLedger(Math.abs(deltaCents));
  const reference = `${payment.id}:${randomUUID()}`;
  const accounts = {
    clearing: await accountFor(tx, "clearing", null),
    wallet: await accountFor(tx, "wallet", payment.userId),
    payerDebt: await accountFor(tx, DEBT, payment.userId),
    platformFee: await accountFor(tx, "platform_fee", null),
    platformDebt: await accountFor(tx, DEBT, null),
  };
  // A creator's wallet is locked with their earnings and debt: a debt this move makes is paid
  // from it before the move commits (settleIndebted).
  const creatorAccounts = new Map<string, { earnings: string; debt: string; wallet: string }>();
  const creatorAccountsOf = async (creatorIds: string[]) => {
    const added: string[] = [];
    for (const id of creatorIds) {
      if (creatorAccounts.has(id)) continue;
      const pair = {
        earnings: await accountFor(tx, "earnings", id),
        debt: await accountFor(tx, DEBT, id),
        wallet: await accountFor(tx, "wallet", id),
      };
      creatorAccounts.set(id, pair);
      added.push(pair.earnings, pair.debt, pair.wallet);
    }
    return added;
  };
  const parts = await outstandingParts(tx, payment.id);
  // Learn whose accounts the move needs, then lock them all in id order (like every posting), and
  // replay again under the wallet's lock: no hold, release or top-up of this payer moves meanwhile.
  const first = deltaCents > 0 ? await replayLot(tx, accounts.wallet, payment.id) : undefined;
  const ids = await creatorAccountsOf([
    ...(first?.spends.map((spend) => spend.creatorId) ?? []),
    ...parts.creators.map((part) => part.creatorId),
  ]);
  await lockAccounts(tx, [...Object.values(accounts), ...ids]);
  const move = new Mover(tx);
  await move.load([...Object.values(accounts), ...ids]);
  const indebted: string[] = [];
  const rows: (typeof chargebackParts.$inferInsert)[] = [];

  if (deltaCents > 0) {
    const lot = await replayLot(tx, accounts.wallet, payment.id);
    // A creator whose hold closed between the two replays: lock their accounts too.
    const late = await creatorAccountsOf(lot.spends.map((spend) => spend.creatorId));
    if (late.length > 0) {
      await lockAccounts(tx, late);
      await move.load(late);
    }
    const fromWallet = Math.min(amount, lot.remaining, await move.balance(accounts.wallet));
    const inFlight = Math.min(amount - fromWallet, lot.inFlight);
    const clawed = new Map(parts.creators.map((part) => [part.creatorId, part.amount]));
    const open = lot.spends.map((spend) => Math.max(0, spend.spent - (clawed.get(spend.creatorId) ?? 0)));
    const fromCreators = Math.min(
      amount - fromWallet - inFlight,
      open.reduce((sum, part) => sum + part, 0),
    );
    const shares = splitExactly(fromCreators, open);
    // What nothing in the replay accounts for (money taken before decision 045) is the payer's.
    const payerOwes = inFlight + (amount - fromWallet - inFlight - fromCreators);
    move.add(accounts.clearing, amount);
    if (fromWallet > 0) move.add(accounts.wallet, -fromWallet);
    if (payerOwes > 0) {
      move.add(accounts.payerDebt, -payerOwes);
      indebted.push(payment.userId);
    }
    if (fromWallet + payerOwes > 0)
      rows.push({ paymentId: payment.id, reference, party: "payer", amountMicros: fromWallet + payerOwes });
    lot.spends.forEach((spend, i) => {
      const share = shares[i] ?? 0;
      if (share <= 0) return;
      const fee = mulDiv(share, spend.fee, spend.spent);
      const modelCost = mulDiv(share, spend.modelCost, spend.spent);
      const earnings = share - fee - modelCost;
      const pair = creatorAccounts.get(spend.creatorId);
      if (!pair) throw new Error("a creator's accounts were not locked");
      if (move.take(pair.earnings, pair.debt, earnings) > 0) indebted.push(spend.creatorId);
      move.take(accounts.platformFee, accounts.platformDebt, fee);
      move.add(accounts.platformDebt, -modelCost);
      rows.push({
        paymentId: payment.id,
        reference,
        party: "creator",
        creatorId: spend.creatorId,
        amountMicros: share,
        earningsMicros: earnings,
        feeMicros: fee,
        modelCostMicros: modelCost,
      });
    });
  } else {
    // Given back: what the creators lost from this payment first, in proportion, then the payer.
    const creators = parts.creators.filter((part) => part.amount > 0);
    const toCreators = Math.min(
      amount,
      creators.reduce((sum, part) => sum + part.amount, 0),
    );
    const shares = splitExactly(
      toCreators,
      creators.map((part) => part.amount),
    );
    move.add(accounts.clearing, -amount);
    creators.forEach((part, i) => {
      const share = shares[i] ?? 0;
      if (share <= 0) return;
      const earnings = mulDiv(share, Math.max(0, part.earnings), part.amount);
      const fee = mulDiv(share, Math.max(0, part.fee), part.amount);
      const modelCost = share - earnings - fee;
      const pair = creatorAccounts.get(part.creatorId);
      if (!pair) throw new Error("a creator's accounts were not locked");
      move.give(pair.earnings, pair.debt, earnings);
      move.give(accounts.platformFee, accounts.platformDebt, fee + modelCost);
      rows.push({
        paymentId: payment.id,
        reference,
        party: "creator",
        creatorId: part.creatorId,
        amountMicros: -share,
        earningsMicros: -earnings,
        feeMicros: -fee,
        modelCostMicros: -modelCost,
      });
    });
    const toPayer = amount - toCreators;
    if (toPayer > 0) {
      move.give(accounts.wallet, accounts.payerDebt, toPayer);
      rows.push({ paymentId: payment.id, reference, party: "payer", amountMicros: -toPayer });
    }
  }
  const creatorsPart = rows
    .filter((row) => row.party === "creator")
    .reduce((sum, row) => sum + row.amountMicros, 0);
  await postTransaction(tx, {
    kind: "reversal",
    reference,
    description:
      deltaCents > 0
        ? `Card payment of ${dollars(payment.amountCents)} refunded or disputed: ${dollars(deltaCents)} taken back${creatorsPart > 0 ? `, ${formatMicros(creatorsPart)} of it from the creators its calls paid` : ""}`
        : `Dispute of a ${dollars(payment.amountCents)} card payment won: ${dollars(-deltaCents)} returned`,
    entries: move.entries(),
  });
  if (rows.length > 0) await tx.insert(chargebackParts).values(rows);
  await settleIndebted(tx, indebted, reference);
  return indebted;
}

/**
 * Whoever a reversal put in debt pays it at once from what their wallet holds (decision 028:
 * money never stays in a wallet beside its owner's debt): the payer's other top-ups, when the
 * debt is what open leases set aside from this one; a creator's own wallet. Their accounts are
 * already locked by the reversal. Each payment has its own reference (`debt:<reversal>:<user>`).
 */
async function settleIndebted(tx: Database, userIds: string[], reference: string): Promise<void> {
  for (const userId of new Set(userIds)) await settleDebt(tx, userId, `${reference}:${userId}`);
}

/** What earlier reversals of this payment took (positive) net of what they gave back, by party. */
async function outstandingParts(tx: Database, paymentId: string) {
  const rows = await tx
    .select({
      party: chargebackParts.party,
      creatorId: chargebackParts.creatorId,
      amount: sql<string>`sum(${chargebackParts.amountMicros})::text`,
      earnings: sql<string>`sum(${chargebackParts.earningsMicros})::text`,
      fee: sql<string>`sum(${chargebackParts.feeMicros})::text`,
    })
    .from(chargebackParts)
    .where(eq(chargebackParts.paymentId, paymentId))
    .groupBy(chargebackParts.party, chargebackParts.creatorId)
    .orderBy(chargebackParts.creatorId);
  const creators = rows
    .filter((row) => row.party === "creator" && row.creatorId)
    .map((row) => ({
      creatorId: row.creatorId as string,
      amount: Number(row.amount),
      earnings: Number(row.earnings),
      fee: Number(row.fee),
    }));
  return { creators };
}

/**
 * The entries of one reversal over accounts the caller locked: balances read once, then tracked
 * as the entries accumulate, so several moves of one account see each other.
 */
class Mover {
  private readonly totals = new Map<string, number>();
  private readonly known = new Map<string, number>();
  private readonly tx: Database;
  constructor(tx: Database) {
    this.tx = tx;
  }

  async balance(accountId: string): Promise<number> {
    if (!this.known.has(accountId)) this.known.set(accountId, await lockedBalance(this.tx, accountId));
    return (this.known.get(accountId) ?? 0) + (this.totals.get(accountId) ?? 0);
  }

  add(accountId: string, amount: number): void {
    if (amount !== 0) this.totals.set(accountId, (this.totals.get(accountId) ?? 0) + amount);
  }

  /** Takes `amount` from the account, what it lacks from the debt; answers what went to debt. */
  take(accountId: string, debtId: string, amount: number): number {
    const has = this.current(accountId);
    const fromAccount = Math.max(0, Math.min(has, amount));
    this.add(accountId, -fromAccount);
    this.add(debtId, -(amount - fromAccount));
    return amount - fromAccount;
  }

  /** Gives `amount`: the debt first (up to zero), the rest into the account. */
  give(accountId: string, debtId: string, amount: number): void {
    const owed = Math.max(0, -this.current(debtId));
    const toDebt = Math.min(owed, amount);
    this.add(debtId, toDebt);
    this.add(accountId, amount - toDebt);
  }

  /** Reads balances it will need, so take and give can stay synchronous. */
  async load(ids: string[]): Promise<void> {
    for (const id of ids) await this.balance(id);
  }

  private current(accountId: string): number {
    if (!this.known.has(accountId)) throw new Error("a balance was used before it was loaded");
    return (this.known.get(accountId) ?? 0) + (this.totals.get(accountId) ?? 0);
  }

  entries(): Entry[] {
    return [...this.totals]
      .filter(([, amount]) => amount !== 0)
      .map(([accountId, amountMicros]) => ({ accountId, amountMicros }));
  }
}

/**
 * A plan payment: the subscription it paid ends; the creator's share comes back from their
 * earnings while the payment is inside the payout hold (a shortfall is their debt), else from the
 * platform (its debt: a loss); the fee from the platform's fee income.
 */
async function movePlanPayment(
  tx: Database,
  payment: PaymentRow,
  deltaCents: number,
  payoutHoldMs: number,
): Promise<string[]> {
  const [paid] = await tx
    .select({
      createdAt: ledgerTransactions.createdAt,
      creatorId: ledgerAccounts.ownerId,
      net: ledgerEntries.amountMicros,
    })
    .from(ledgerTransactions)
    .innerJoin(ledgerEntries, eq(ledgerEntries.transactionId, ledgerTransactions.id))
    .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerEntries.accountId))
    .where(
      and(
        eq(ledgerTransactions.kind, "subscription"),
        eq(ledgerTransactions.reference, payment.id),
        eq(ledgerAccounts.kind, "earnings"),
      ),
    )
    .limit(1);
  if (payment.consumedRef && deltaCents > 0)
    await tx
      .update(subscriptions)
      .set({ status: "canceled", cancelAtPeriodEnd: true })
      .where(
        and(
          sql`${subscriptions.id}::text = ${payment.consumedRef}`,
          sql`${subscriptions.status} in ('active', 'incomplete', 'past_due')`,
        ),
      );
  const clearing = await accountFor(tx, "clearing", null);
  const total = toLedger(payment.amountCents);
  const amount = toLedger(Math.abs(deltaCents));
  const netPaid = paid?.net ?? total;
  // This part's share of the creator's net and of the fee, in proportion to the whole payment.
  const net = Math.floor((amount * netPaid) / total);
  const fee = amount - net;
  const creatorId = paid?.creatorId ?? null;
  const insideHold = paid !== undefined && paid.createdAt.getTime() > Date.now() - payoutHoldMs;
  const creatorOwner = insideHold ? creatorId : null;
  if (deltaCents > 0) {
    // The creator's wallet is locked with their earnings and debt (before the platform's), so
    // a debt this makes is paid from it in the same order of locks (settleIndebted).
    if (insideHold && creatorId)
      await lockAccounts(tx, [
        await accountFor(tx, "earnings", creatorId),
        await accountFor(tx, DEBT, creatorId),
        await accountFor(tx, "wallet", creatorId),
      ]);
    // Past the hold the creator may have been paid: the platform bears it, as its debt (a loss).
    const fromCreator = insideHold
      ? await takeFrom(tx, creatorOwner, "earnings", net)
      : { entries: [{ accountId: await accountFor(tx, DEBT, null), amountMicros: -net }], debt: 0 };
    const fromPlatform = await takeFrom(tx, null, "platform_fee", fee);
    const reference = `${payment.id}:${randomUUID()}`;
    await postTransaction(tx, {
      kind: "reversal",
      reference,
      description: `Plan payment of ${dollars(payment.amountCents)} refunded or disputed: ${dollars(deltaCents)} taken back${insideHold ? " from the creator's earnings" : " (past the payout hold: the platform's loss)"}`,
      entries: mergeEntries([
        { accountId: clearing, amountMicros: amount },
        ...fromCreator.entries,
        ...fromPlatform.entries,
      ]),
    });
    const indebted = insideHold && creatorId && fromCreator.debt > 0 ? [creatorId] : [];
    await settleIndebted(tx, indebted, reference);
    return indebted;
  }
  // Past the hold both parts are the platform's: one give-back, so its debt is read once.
  const toCreator = insideHold ? await giveTo(tx, creatorOwner, "earnings", net) : [];
  const toPlatform = await giveTo(tx, null, "platform_fee", insideHold ? fee : net + fee);
  await postTransaction(tx, {
    kind: "reversal",
    reference: `${payment.id}:${randomUUID()}`,
    description: `Dispute of a ${dollars(payment.amountCents)} plan payment won: ${dollars(-deltaCents)} returned`,
    entries: mergeEntries([{ accountId: clearing, amountMicros: -amount }, ...toCreator, ...toPlatform]),
  });
  return [];
}

/** One entry per account (a posting moves each account once). */
function mergeEntries(entries: Entry[]): Entry[] {
  const totals = new Map<string, number>();
  for (const entry of entries)
    totals.set(entry.accountId, (totals.get(entry.accountId) ?? 0) + entry.amountMicros);
  return [...totals]
    .filter(([, amount]) => amount !== 0)
    .map(([accountId, amountMicros]) => ({ accountId, amountMicros }));
}

/** After a reversal committed: the leases of whoever it put in debt give back what they hold. */
export async function recallIndebted(db: Database, userIds: string[]): Promise<void> {
  for (const userId of new Set(userIds)) await recallHolds(db, userId);
}
