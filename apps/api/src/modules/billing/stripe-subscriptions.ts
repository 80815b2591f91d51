import { isUuid } from "@promptmint/contracts";
import { and, eq, inArray, isNull, ne, or } from "drizzle-orm";
import type Stripe from "stripe";
import type { Database } from "../../db/client.ts";
import {
  applications,
  packages,
  planTerms,
  type SubscriptionRow,
  subscriptions,
} from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { settleDebt } from "./debts.ts";
import { postPlanPayment } from "./plan-payments.ts";
import { accountFor, postTopUp } from "./postings.ts";
import type { StripeGateway } from "./stripe-gateway.ts";
import { recordCurrentPeriod } from "./subscription-periods.ts";

/** Carried on the Stripe subscription (and so on its invoices): which of our rows it drives. */
export const SUBSCRIPTION_METADATA_KEY = "promptmint_subscription_id";

const idOf = (value: string | { id: string } | null | undefined) =>
  typeof value === "string" ? value : value?.id;

/** Our row for a Stripe subscription (locked until the event's transaction ends); none for others. */
async function findDrivenRow(
  db: Database,
  stripeSubscriptionId: string | undefined,
  metadata: Stripe.Metadata | null | undefined,
): Promise<SubscriptionRow | undefined> {
  if (!stripeSubscriptionId) return undefined;
  const ownId = metadata?.[SUBSCRIPTION_METADATA_KEY];
  const [row] = await db
    .select()
    .from(subscriptions)
    .where(
      or(
        eq(subscriptions.stripeSubscriptionId, stripeSubscriptionId),
        ownId && isUuid(ownId)
          ? and(eq(subscriptions.id, ownId), isNull(subscriptions.stripeSubscriptionId))
          : undefined,
      ),
    )
    .limit(1)
    .for("update");
  return row;
}

/**
 * A paid invoice is a paid period: the money goes to the creator once per invoice, and the row
 * becomes active for the invoiced period, with its included calls reset when the period is new.
 * Every period of a card subscription keeps the terms it was subscribed at, whose price Stripe
 * charges (decision 044): a creator's later edit changes neither what it pays nor what it allows.
 */
export async function applyInvoicePaid(db: Database, invoice: Stripe.Invoice, feePercent: number) {
  const details = invoice.parent?.subscription_details;
  const row = await findDrivenRow(db, idOf(details?.subscription), details?.metadata);
  if (!row || !details) return;
  const [plan] = await db
    .select({
      name: packages.name,
      ownerId: applications.ownerId,
      archivedAt: applications.archivedAt,
    })
    .from(packages)
    .innerJoin(applications, eq(applications.id, packages.applicationId))
    .where(eq(packages.id, row.packageId));
  if (!plan) return;
  // An ended row is not revived beside the consumer's newer subscription to the app (one live
  // per app), nor for an app its creator deleted: what the invoice took goes to their wallet.
  const staysEnded =
    !["active", "incomplete"].includes(row.status) &&
    (plan.archivedAt !== null || (await hasOtherLiveSubscription(db, row)));
  if (staysEnded) {
    if (invoice.amount_paid > 0 && invoice.id) {
      await postTopUp(db, {
        userId: row.subscriberId,
        amountCents: invoice.amount_paid,
        reference: invoice.id,
        description: `Plan '${plan.name}' card payment credited to your wallet: the subscription had ended`,
      });
      // Like any money into a wallet, it pays what the subscriber owes first (decision 028).
      await settleDebt(db, row.subscriberId, invoice.id);
    }
    return;
  }
  const periodTransactionId =
    invoice.amount_paid > 0 && invoice.id
      ? await postPlanPayment(db, {
          source: await accountFor(db, "clearing", null),
          creatorId: plan.ownerId,
          amountCents: invoice.amount_paid,
          feePercent,
          reference: invoice.id,
          description: `Plan '${plan.name}' paid by card (Stripe)`,
        })
      : undefined;
  const [terms] = row.termsId ? await db.select().from(planTerms).where(eq(planTerms.id, row.termsId)) : [];
  const period = invoice.lines.data[0]?.period;
  if (!period) return;
  const start = new Date(period.start * 1000);
  const end = new Date(period.end * 1000);
  // A row that never learned its Stripe id holds a placeholder period: Stripe's replaces it.
  const newPeriod = row.status === "incomplete" || !row.stripeSubscriptionId || end > row.currentPeriodEnd;
  // An invoice for a period that is already over (a late delivery) pays, but does not revive the row.
  if (!newPeriod && end <= new Date()) return;
  await db
    .update(subscriptions)
    .set({
      status: "active",
      stripeSubscriptionId: idOf(details.subscription),
      ...(newPeriod
        ? {
            currentPeriodStart: start,
            currentPeriodEnd: end,
            callsUsed: 0,
            // Rows from before migration 0033 keep what they allowed: their terms are not known.
            callsIncluded: terms?.includedCalls ?? row.callsIncluded,
            ...(periodTransactionId ? { periodTransactionId } : {}),
          }
        : {}),
    })
    .where(eq(subscriptions.id, row.id));
  if (newPeriod)
    await recordCurrentPeriod(db, row.id, {
      priceCents: invoice.amount_paid,
      transactionId: periodTransactionId ?? null,
    });
}

/** Whether the consumer has another live subscription to the row's app. */
async function hasOtherLiveSubscription(db: Database, row: SubscriptionRow): Promise<boolean> {
  const [other] = await db
    .select({ id: subscriptions.id })
    .from(subscriptions)
    .where(
      and(
        eq(subscriptions.applicationId, row.applicationId),
        eq(subscriptions.subscriberId, row.subscriberId),
        inArray(subscriptions.status, ["active", "incomplete"]),
        ne(subscriptions.id, row.id),
      ),
    )
    .limit(1);
  return other !== undefined;
}

/** A renewal the card could not pay: past due, so calls fall back to the wallet until it is paid. */
export async function applyInvoiceFailed(db: Database, invoice: Stripe.Invoice) {
  const details = invoice.parent?.subscription_details;
  const row = await findDrivenRow(db, idOf(details?.subscription), details?.metadata);
  if (!row) return;
  await db
    .update(subscriptions)
    .set({ status: "past_due" })
    .where(and(eq(subscriptions.id, row.id), eq(subscriptions.status, "active")));
}

/** Stripe's cancel_at_period_end and its end of a subscription (deleted, or given up after retries). */
export async function applySubscriptionChange(
  db: Database,
  subscription: Stripe.Subscription,
  deleted: boolean,
) {
  const row = await findDrivenRow(db, subscription.id, subscription.metadata);
  if (!row) return;
  const ended = deleted || ["canceled", "incomplete_expired"].includes(subscription.status);
  const pastDue = ["past_due", "unpaid"].includes(subscription.status) && row.status === "active";
  await db
    .update(subscriptions)
    .set({
      cancelAtPeriodEnd: subscription.cancel_at_period_end,
      stripeSubscriptionId: subscription.id,
      status: ended ? "canceled" : pastDue ? "past_due" : row.status,
    })
    .where(eq(subscriptions.id, row.id));
}

/** Changes a card subscription's cancel_at_period_end on Stripe and keeps what Stripe answers. */
export async function setCancelOnStripe(
  db: Database,
  stripe: StripeGateway | undefined,
  row: { id: string; stripeSubscriptionId: string | null },
  cancel: boolean,
): Promise<void> {
  if (!stripe || !row.stripeSubscriptionId)
    throw new AppError("unavailable", "This subscription is billed by Stripe, which is not configured");
  const cancelAtPeriodEnd = await stripe.setCancelAtPeriodEnd(row.stripeSubscriptionId, cancel);
  await db.update(subscriptions).set({ cancelAtPeriodEnd }).where(eq(subscriptions.id, row.id));
}
