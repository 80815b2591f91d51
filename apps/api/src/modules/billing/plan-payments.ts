import { and, eq, isNull, lt } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { payments } from "../../db/schema/index.ts";
import { settleDebt } from "./debts.ts";
import { centsToMicros, splitFee } from "./money.ts";
import { accountFor, postTopUp, postTransaction } from "./postings.ts";

/**
 * Every succeeded payment ends in exactly one of: the subscription it paid, or a credit to its
 * payer's wallet. `payments.consumed_kind` and `consumed_ref` say which, set once, under the
 * payment's row lock, in the same transaction as the subscription or the credit; their unique
 * index keeps one subscription from being paid twice and one credit from naming two payments
 * (docs/decisions/023).
 */
export type PaymentRow = typeof payments.$inferSelect;

/** How long a plan's payment may wait for its subscribe call before it goes to the wallet. */
export const PLAN_PAYMENT_WAIT_MS = 24 * 3_600_000;

/** The caller's payment by its gateway id, locked until the transaction ends. */
export async function lockPaymentByExternalId(
  tx: Database,
  userId: string,
  externalId: string,
): Promise<PaymentRow | undefined> {
  const [row] = await tx
    .select()
    .from(payments)
    .where(and(eq(payments.externalId, externalId), eq(payments.userId, userId)))
    .limit(1)
    .for("update");
  return row;
}

/** Records what consumed a succeeded payment; false when something consumed it first. */
export async function markPaymentConsumed(
  tx: Database,
  paymentId: string,
  consumedBy: { kind: "subscription" | "wallet"; ref: string },
): Promise<boolean> {
  const [row] = await tx
    .update(payments)
    .set({ consumedKind: consumedBy.kind, consumedRef: consumedBy.ref, consumedAt: new Date() })
    .where(and(eq(payments.id, paymentId), eq(payments.status, "succeeded"), isNull(payments.consumedKind)))
    .returning({ id: payments.id });
  return row !== undefined;
}

/**
 * Credits a succeeded payment to its payer's wallet (a top_up transaction referencing the
 * payment), inside the caller's transaction, unless something already consumed it. True when
 * this call credited it.
 */
export async function creditPaymentToWallet(
  tx: Database,
  payment: Pick<PaymentRow, "id" | "userId" | "amountCents">,
  description: string,
): Promise<boolean> {
  const [unused] = await tx
    .select({ id: payments.id })
    .from(payments)
    .where(and(eq(payments.id, payment.id), eq(payments.status, "succeeded"), isNull(payments.consumedKind)))
    .for("update");
  if (!unused) return false;
  const transactionId = await postTopUp(tx, {
    userId: payment.userId,
    amountCents: payment.amountCents,
    reference: payment.id,
    description,
  });
  if (!transactionId || !(await markPaymentConsumed(tx, payment.id, { kind: "wallet", ref: transactionId })))
    throw new Error(`payment ${payment.id} was credited before it was marked consumed`);
  // What the payer owes (a refunded or disputed payment already spent) is paid first.
  await settleDebt(tx, payment.userId, payment.id);
  return true;
}

/**
 * A plan's payment whose subscribe call never came (the browser closed after paying) goes to the
 * payer's wallet once it has waited PLAN_PAYMENT_WAIT_MS; returns how many were credited.
 */
export async function creditAbandonedPlanPayments(db: Database, now = new Date()): Promise<number> {
  const abandoned = await db
    .select({ id: payments.id, userId: payments.userId, amountCents: payments.amountCents })
    .from(payments)
    .where(
      and(
        eq(payments.status, "succeeded"),
        eq(payments.purpose, "subscription"),
        isNull(payments.consumedKind),
        lt(payments.createdAt, new Date(now.getTime() - PLAN_PAYMENT_WAIT_MS)),
      ),
    )
    .limit(200);
  let credited = 0;
  for (const payment of abandoned) {
    const done = await db.transaction((tx) =>
      creditPaymentToWallet(
        tx as unknown as Database,
        payment,
        "Plan payment credited to your wallet (no subscription was started with it)",
      ),
    );
    if (done) credited += 1;
  }
  return credited;
}

/**
 * A period's payment for a plan (wallet, card payment or Stripe invoice) to the creator's earnings
 * minus the platform fee, inside the caller's transaction, once per reference. Returns the
 * transaction's id, or undefined when this reference was already posted.
 */
export async function postPlanPayment(
  db: Database,
  options: {
    source: string;
    creatorId: string;
    amountCents: number;
    feePercent: number;
    reference: string;
    description: string;
  },
): Promise<string | undefined> {
  const [earnings, platform] = await Promise.all([
    accountFor(db, "earnings", options.creatorId),
    accountFor(db, "platform_fee", null),
  ]);
  const amount = centsToMicros(options.amountCents);
  const { fee, net } = splitFee(amount, options.feePercent);
  return postTransaction(db, {
    kind: "subscription",
    reference: options.reference,
    description: options.description,
    entries: [
      { accountId: options.source, amountMicros: -amount },
      { accountId: earnings, amountMicros: net },
      ...(fee > 0 ? [{ accountId: platform, amountMicros: fee }] : []),
    ],
  });
}
