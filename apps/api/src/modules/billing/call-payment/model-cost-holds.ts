import { and, asc, eq, lt, sql } from "drizzle-orm";
import type { Database } from "../../../db/client.ts";
import { invocations, ledgerAccounts, modelCostHolds } from "../../../db/schema/index.ts";
import type { AppError } from "../../../lib/errors.ts";
import { paymentRefusal } from "../../../lib/payment-remedy.ts";
import { DEBT, lockAccounts, lockedBalance, settleDebt } from "../debts.ts";
import { formatMicros } from "../money.ts";
import { accountFor, postTransaction } from "../postings.ts";

/**
 * Every model call is prepaid by someone (issue 37, docs/decisions/062). A call no price pays for
 * (the owner's own call on any protocol, Test Prompt, an eval case or its judge, an embedded call
 * whose price all goes to the platform) holds its worst-case model cost from its creator's wallet
 * before the vendor is called; no money, no call (402 naming the top-up page). Invariants:
 * - the wallet never goes below zero: the hold is written only under the wallet's row lock, if the
 *   locked balance covers it, so concurrent calls on any number of processes cannot overspend;
 * - a hold resolves once: spent (the call's model cost to the platform's model_cost account, the
 *   rest back to the wallet) in the transaction that records the call, or released whole by the
 *   sweeper once it expires without a record (a crash);
 * - usage never makes debt: what a call costs comes from its hold; what the vendor bills beyond
 *   it (it cannot, the worst case being an upper bound) is recorded as the platform's overrun.
 * One hold per call, its id the call's (invocation's) id, so the sweep of model costs
 * (model-costs.ts) and reconcile find each call's hold by its invocation.
 */

/** The ledger posts of a hold: reference = the hold's id, as a lease's hold (lots.ts replays it). */
const HOLD_DESCRIPTION = "Held for a call's model cost (your own call, a test, an eval or your widget)";

export interface ModelCostHoldRequest {
  callId: string;
  creatorId: string;
  applicationId: string;
  /** The call's worst-case model cost (models/worst-case.ts). */
  amountMicros: number;
  /** Outlives the call's deadline: the sweeper releases it only after the call can no longer end. */
  ttlSeconds: number;
  topUpUrl: string;
}

/** The creator's wallet and held accounts, made when missing (a new account's first call). */
async function creatorAccounts(db: Database, creatorId: string) {
  const [wallet, held] = await Promise.all([
    accountFor(db, "wallet", creatorId),
    accountFor(db, "held", creatorId),
  ]);
  return { wallet, held };
}

/**
 * Holds a call's worst-case model cost from its creator's wallet, or throws the 402 (with
 * `top_up_url`) when the wallet cannot cover it. Nothing is written on a refusal.
 */
export async function holdModelCost(db: Database, request: ModelCostHoldRequest): Promise<void> {
  const amount = Math.ceil(request.amountMicros);
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw new Error("a model cost hold must be positive micros");
  const { wallet, held } = await creatorAccounts(db, request.creatorId);
  const balance = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await lockAccounts(t, [wallet, held]);
    const available = await lockedBalance(t, wallet);
    if (available < amount) return available;
    await t.insert(modelCostHolds).values({
      id: request.callId,
      creatorId: request.creatorId,
      applicationId: request.applicationId,
      amountMicros: amount,
      expiresAt: new Date(Date.now() + request.ttlSeconds * 1000),
    });
    await postTransaction(t, {
      kind: "hold",
      reference: request.callId,
      description: HOLD_DESCRIPTION,
      entries: [
        { accountId: wallet, amountMicros: -amount },
        { accountId: held, amountMicros: amount },
      ],
    });
    return undefined;
  });
  if (balance !== undefined) throw modelCostRefusal(amount, balance, request.topUpUrl);
}

/** The 402 of a call its creator's wallet cannot prepay: what it may cost, the balance, where to top up. */
export function modelCostRefusal(amountMicros: number, balanceMicros: number, topUpUrl: string): AppError {
  return paymentRefusal(
    "payment_required",
    `Insufficient balance: this call may cost up to ${formatMicros(amountMicros)} at the model vendor, paid from the app creator's wallet, which has ${formatMicros(Math.max(0, balanceMicros))} available. Top up at ${topUpUrl}`,
    {
      missing: "insufficient_funds",
      top_up_url: topUpUrl,
      balance_micros: Math.max(0, balanceMicros),
    },
  );
}

/**
 * Ends a call's model cost hold inside the transaction that records its invocation (record.ts):
 * `costMicros` (what the vendor billed that no price paid) goes from the hold to the platform's
 * model_cost account, the rest back to the wallet, and the invocation is marked posted so the
 * sweep of model costs never takes it again. A hold the sweeper already released (the call outlived
 * its hold) pays nothing: the cost is then taken from the wallet as it is, at most its balance.
 * What neither covers is the platform's overrun, never the creator's debt.
 */
export async function spendModelCostHold(
  tx: Database,
  hold: { id: string; invocationCreatedAt: Date; costMicros: number },
): Promise<void> {
  const cost = Math.max(0, Math.ceil(hold.costMicros));
  const [row] = await tx.select().from(modelCostHolds).where(eq(modelCostHolds.id, hold.id)).for("update");
  if (!row) return;
  const [{ wallet, held }, model, [debt]] = await Promise.all([
    creatorAccounts(tx, row.creatorId),
    accountFor(tx, "model_cost", null),
    tx
      .select({ id: ledgerAccounts.id })
      .from(ledgerAccounts)
      .where(and(eq(ledgerAccounts.kind, DEBT), eq(ledgerAccounts.ownerId, row.creatorId))),
  ]);
  // The debt account too, in the same ordered lock: the rest going back to the wallet pays it first.
  await lockAccounts(tx, debt ? [wallet, held, model, debt.id] : [wallet, held, model]);
  const open = row.status === "held";
  const fromHold = open ? Math.min(cost, row.amountMicros) : 0;
  const fromWallet = Math.min(cost - fromHold, Math.max(0, await lockedBalance(tx, wallet)));
  const overrun = cost - fromHold - fromWallet;
  if (open) {
    await tx
      .update(modelCostHolds)
      .set({
        status: fromHold > 0 ? "spent" : "released",
        spentMicros: fromHold + fromWallet,
        overrunMicros: overrun,
        closedAt: new Date(),
      })
      .where(eq(modelCostHolds.id, hold.id));
    if (row.amountMicros > fromHold)
      await postTransaction(tx, {
        kind: "release",
        reference: hold.id,
        description:
          fromHold > 0 ? "Released: what a call's model cost did not use" : "Released: the call cost nothing",
        entries: [
          { accountId: held, amountMicros: fromHold - row.amountMicros },
          { accountId: wallet, amountMicros: row.amountMicros - fromHold },
        ],
      });
  } else if (cost > 0) {
    await tx
      .update(modelCostHolds)
      .set({ spentMicros: row.spentMicros + fromWallet, overrunMicros: row.overrunMicros + overrun })
      .where(eq(modelCostHolds.id, hold.id));
  }
  if (fromHold + fromWallet > 0)
    await postTransaction(tx, {
      kind: "model_cost",
      reference: hold.id,
      description: "Model cost of a call no price paid (held from your wallet)",
      entries: [
        { accountId: held, amountMicros: -fromHold },
        { accountId: wallet, amountMicros: -fromWallet },
        { accountId: model, amountMicros: fromHold + fromWallet },
      ].filter((entry) => entry.amountMicros !== 0),
    });
  // Money coming back to a wallet pays its owner's debt first (decision 028), as a lease's close
  // does: a chargeback that took the creator's earnings while this hold was out left them in debt
  // (the money attack, seed 9191: 1.2¢ given back beside a $23.93 debt).
  if (open && row.amountMicros > fromHold && debt) await settleDebt(tx, row.creatorId, hold.id);
  await tx
    .update(invocations)
    .set({ modelCostPostedAt: new Date() })
    .where(and(eq(invocations.id, hold.id), eq(invocations.createdAt, hold.invocationCreatedAt)));
}

/** Gives a hold back whole, when its call ends without a record (refused before the vendor, or not recorded). */
export async function releaseModelCostHold(db: Database, holdId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const [row] = await t
      .select()
      .from(modelCostHolds)
      .where(and(eq(modelCostHolds.id, holdId), eq(modelCostHolds.status, "held")))
      .for("update");
    if (!row) return false;
    // The invocation was recorded (its record's transaction spent nothing of it only if it lost the
    // race with this one): its model cost is then posted from the hold as the record would have.
    const [recorded] = await t
      .select({
        createdAt: invocations.createdAt,
        cost: sql<number>`(${invocations.modelCostMicros} - ${invocations.modelCostDeductedMicros})::bigint`,
        posted: invocations.modelCostPostedAt,
      })
      .from(invocations)
      .where(eq(invocations.id, holdId));
    if (recorded && recorded.posted === null) {
      await spendModelCostHold(t, {
        id: holdId,
        invocationCreatedAt: recorded.createdAt,
        costMicros: Number(recorded.cost),
      });
      return true;
    }
    await spendModelCostHold(t, { id: holdId, invocationCreatedAt: new Date(0), costMicros: 0 });
    return true;
  });
}

/**
 * Marks a call's model cost hold, released before its call was recorded, as superseded: the call's
 * sponsor could not pay its price and the caller pays instead (decision 080). Only a hold released
 * unspent is marked; nothing else changes.
 */
export async function supersedeModelCostHold(db: Database, holdId: string): Promise<void> {
  await db
    .update(modelCostHolds)
    .set({ supersededAt: new Date() })
    .where(
      and(
        eq(modelCostHolds.id, holdId),
        eq(modelCostHolds.status, "released"),
        eq(modelCostHolds.spentMicros, 0),
      ),
    );
}

/** Closes the holds of calls a crash left behind once they expire (`releaseModelCostHold`); returns how many. */
export async function sweepExpiredModelCostHolds(db: Database, now: Date = new Date()): Promise<number> {
  const expired = await db
    .select({ id: modelCostHolds.id })
    .from(modelCostHolds)
    .where(and(eq(modelCostHolds.status, "held"), lt(modelCostHolds.expiresAt, now)))
    .orderBy(asc(modelCostHolds.expiresAt))
    .limit(500);
  let closed = 0;
  for (const hold of expired) if (await releaseModelCostHold(db, hold.id)) closed += 1;
  return closed;
}
