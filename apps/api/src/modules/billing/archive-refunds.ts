import { and, eq, gt, inArray, isNull } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import {
  type ApplicationRow,
  ledgerAccounts,
  ledgerEntries,
  packages,
  payments,
  subscriptions,
} from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { settleDebt } from "./debts.ts";
import { centsToMicros, formatMicros, splitFee } from "./money.ts";
import { creditPaymentToWallet } from "./plan-payments.ts";
import { accountFor, InsufficientFunds, postTransaction } from "./postings.ts";
import type { StripeGateway } from "./stripe-gateway.ts";

/**
 * What an app's deletion does to the money of its subscribers (docs/decisions/023). The app is
 * archived, not erased, and its service stops at once, so nobody keeps paying for it:
 * - every live subscription ends now, and the unused part of its current period (by time) goes
 *   back to the subscriber's wallet, taken from what that period paid the creator and the
 *   platform, in the same proportions (a `reversal` transaction, once per subscription);
 * - a plan payment that no subscription used yet goes to the payer's wallet;
 * - a card subscription is told to stop renewing on Stripe first.
 * No balance goes below zero: when the creator's earnings cannot cover the refunds, nothing
 * changes and the deletion is refused (409).
 */
const LIVE = ["active", "incomplete", "past_due"] as const;

/** Stops Stripe renewing the app's card subscriptions; before the archive's transaction (no I/O inside it). */
export async function stopCardRenewals(
  db: Database,
  app: ApplicationRow,
  stripe: StripeGateway | undefined,
): Promise<void> {
  const billedByStripe = await db
    .select({ id: subscriptions.id, stripeSubscriptionId: subscriptions.stripeSubscriptionId })
    .from(subscriptions)
    .where(
      and(
        eq(subscriptions.applicationId, app.id),
        inArray(subscriptions.status, [...LIVE]),
        eq(subscriptions.cancelAtPeriodEnd, false),
      ),
    );
  for (const row of billedByStripe) {
    if (!row.stripeSubscriptionId) continue;
    if (!stripe)
      throw new AppError(
        "unavailable",
        "This app has card subscriptions billed by Stripe, which is not configured",
      );
    await stripe.setCancelAtPeriodEnd(row.stripeSubscriptionId, true);
  }
}

/** Ends the app's subscriptions with their refunds and credits its unused plan payments, inside the archive's transaction. */
export async function settleSubscribersOfArchivedApp(
  tx: Database,
  app: ApplicationRow,
  options: { now: Date; feePercent: number },
): Promise<void> {
  const live = await tx
    .select({ subscription: subscriptions, plan: packages })
    .from(subscriptions)
    .innerJoin(packages, eq(packages.id, subscriptions.packageId))
    .where(and(eq(subscriptions.applicationId, app.id), inArray(subscriptions.status, [...LIVE])))
    .for("update", { of: subscriptions });
  try {
    for (const { subscription, plan } of live) {
      await tx
        .update(subscriptions)
        .set({ status: "canceled", cancelAtPeriodEnd: true })
        .where(eq(subscriptions.id, subscription.id));
      if (subscription.status === "active" && subscription.currentPeriodEnd > options.now)
        await refundUnusedPeriod(tx, app, subscription, plan, options);
    }
  } catch (error) {
    if (!(error instanceof InsufficientFunds)) throw error;
    throw new AppError(
      "conflict",
      "This app's subscribers are owed refunds for their unused periods, and your earnings cannot cover them",
    );
  }
  const unused = await tx
    .select({ id: payments.id, userId: payments.userId, amountCents: payments.amountCents })
    .from(payments)
    .innerJoin(packages, eq(packages.id, payments.packageId))
    .where(
      and(
        eq(packages.applicationId, app.id),
        eq(payments.status, "succeeded"),
        gt(payments.amountCents, 0),
        isNull(payments.consumedKind),
      ),
    );
  for (const payment of unused)
    await creditPaymentToWallet(tx, payment, `Plan payment credited to your wallet: ${app.name} was deleted`);
}

type SubscriptionRow = typeof subscriptions.$inferSelect;

/**
 * Gives back the unused fraction (by time) of what the current period paid each account: the
 * entries of the period's transaction (or, for a period paid before it was recorded, the plan's
 * price split by today's fee), each rounded down, to the subscriber's wallet.
 */
async function refundUnusedPeriod(
  tx: Database,
  app: ApplicationRow,
  subscription: SubscriptionRow,
  plan: typeof packages.$inferSelect,
  options: { now: Date; feePercent: number },
): Promise<void> {
  const periodMs = BigInt(
    subscription.currentPeriodEnd.getTime() - subscription.currentPeriodStart.getTime(),
  );
  const unusedMs = BigInt(subscription.currentPeriodEnd.getTime() - options.now.getTime());
  if (periodMs <= 0n || unusedMs <= 0n) return;
  const part = (micros: number) =>
    Number((BigInt(micros) * (unusedMs < periodMs ? unusedMs : periodMs)) / periodMs);
  const paid = await paidByPeriod(tx, app, subscription, plan, options.feePercent);
  const back = paid.map((entry) => ({ accountId: entry.accountId, amountMicros: -part(entry.amountMicros) }));
  const total = -back.reduce((sum, entry) => sum + entry.amountMicros, 0);
  if (total <= 0) return;
  const days = Math.ceil(Number(unusedMs) / 86_400_000);
  await postTransaction(tx, {
    kind: "reversal",
    reference: `archived-app-refund:${subscription.id}`,
    description: `Refund of ${formatMicros(total)}: '${plan.name}' of ${app.name} ended early (the app was deleted, ${days} days unused)`,
    entries: [
      ...back.filter((entry) => entry.amountMicros !== 0),
      { accountId: await accountFor(tx, "wallet", subscription.subscriberId), amountMicros: total },
    ],
  });
  // Like any money into a wallet, it pays what the subscriber owes first (decision 028).
  await settleDebt(tx, subscription.subscriberId, `archived-app-refund:${subscription.id}`);
}

/** What the current period paid the creator's earnings and the platform's fee. */
async function paidByPeriod(
  tx: Database,
  app: ApplicationRow,
  subscription: SubscriptionRow,
  plan: typeof packages.$inferSelect,
  feePercent: number,
): Promise<{ accountId: string; amountMicros: number }[]> {
  if (subscription.periodTransactionId) {
    return tx
      .select({ accountId: ledgerEntries.accountId, amountMicros: ledgerEntries.amountMicros })
      .from(ledgerEntries)
      .innerJoin(ledgerAccounts, eq(ledgerAccounts.id, ledgerEntries.accountId))
      .where(
        and(
          eq(ledgerEntries.transactionId, subscription.periodTransactionId),
          inArray(ledgerAccounts.kind, ["earnings", "platform_fee"]),
          gt(ledgerEntries.amountMicros, 0),
        ),
      );
  }
  const { fee, net } = splitFee(centsToMicros(plan.priceCents), feePercent);
  return [
    { accountId: await accountFor(tx, "earnings", app.ownerId), amountMicros: net },
    ...(fee > 0 ? [{ accountId: await accountFor(tx, "platform_fee", null), amountMicros: fee }] : []),
  ];
}
