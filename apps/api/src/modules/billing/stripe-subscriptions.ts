import type { Subscription } from "@promptmint/contracts";
import { and, eq, inArray, isNull, ne, or } from "drizzle-orm";
import type Stripe from "stripe";
import type { Database } from "../../db/client.ts";
import { applications, packages, paymentMethods, subscriptions } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import type { ApplicationRow } from "../applications/applications.service.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import {
  alreadySubscribed,
  getSubscription,
  insertSubscription,
  isSecondSubscription,
  lockAppForSubscribe,
  postPlanPayment,
  refuseSecondSubscription,
  type SubscriptionRow,
  subscribablePlan,
} from "./plans.service.ts";
import { accountFor, postTopUp } from "./postings.ts";
import type { StripeGateway } from "./stripe-gateway.ts";

/** Carried on the Stripe subscription (and so on its invoices): which of our rows it drives. */
export const SUBSCRIPTION_METADATA_KEY = "promptmint_subscription_id";

/**
 * A plan paid by a saved card through Stripe Billing. The row is written first, as `incomplete`
 * and named in the Stripe subscription's metadata, so a webhook that outruns Stripe's answer still
 * finds it; `invoice.paid` activates it and moves the money. A decline creates nothing on Stripe
 * and ends the row.
 */
export async function subscribeWithCard(
  db: Database,
  options: {
    app: ApplicationRow;
    user: LocalUser;
    packageId: string;
    paymentMethodId: string;
    stripe: StripeGateway | undefined;
  },
): Promise<Subscription> {
  const { app, user, stripe } = options;
  if (!stripe)
    throw new AppError("bad_request", "Saved cards pay for plans only when this server runs Stripe", {
      fields: { payment_method_id: "is only accepted when payments go through Stripe" },
    });
  const plan = await subscribablePlan(db, app, user.id, options.packageId);
  const [card] = /^[0-9a-f-]{36}$/i.test(options.paymentMethodId)
    ? await db
        .select({ externalId: paymentMethods.externalId })
        .from(paymentMethods)
        .where(
          and(
            eq(paymentMethods.id, options.paymentMethodId),
            eq(paymentMethods.userId, user.id),
            eq(paymentMethods.gateway, "stripe"),
            isNull(paymentMethods.deletedAt),
          ),
        )
        .limit(1)
    : [];
  if (!card?.externalId) throw notFound("Payment method");
  const now = new Date();
  // The row comes first, before Stripe charges anything: a concurrent second subscribe to the
  // same app loses on the one-live-subscription index here, with nothing charged.
  const row = await db
    .transaction(async (tx) => {
      const t = tx as unknown as Database;
      await lockAppForSubscribe(t, plan.applicationId);
      await refuseSecondSubscription(t, plan.applicationId, user.id);
      return insertSubscription(t, plan, user.id, "incomplete", now);
    })
    .catch((error) => {
      throw isSecondSubscription(error) ? alreadySubscribed() : error;
    });
  try {
    const stripeSubscriptionId = await stripe.createSubscription(db, user, {
      plan,
      paymentMethodId: card.externalId,
      subscriptionId: row.id,
    });
    await db
      .update(subscriptions)
      .set({ stripeSubscriptionId })
      .where(and(eq(subscriptions.id, row.id), isNull(subscriptions.stripeSubscriptionId)));
  } catch (error) {
    const declined = error instanceof AppError && error.code === "payment_required";
    const unsettled = and(eq(subscriptions.id, row.id), eq(subscriptions.status, "incomplete"));
    // A decline created nothing on Stripe. After any other failure Stripe may have billed it after
    // all: the row stays, ended, and a later invoice.paid still activates it and pays the creator.
    if (declined) await db.delete(subscriptions).where(unsettled);
    else await db.update(subscriptions).set({ status: "canceled" }).where(unsettled);
    throw error;
  }
  return getSubscription(db, app, user.id, row.id);
}

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
        ownId && /^[0-9a-f-]{36}$/i.test(ownId)
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
 */
export async function applyInvoicePaid(db: Database, invoice: Stripe.Invoice, feePercent: number) {
  const details = invoice.parent?.subscription_details;
  const row = await findDrivenRow(db, idOf(details?.subscription), details?.metadata);
  if (!row || !details) return;
  const [plan] = await db
    .select({
      name: packages.name,
      includedCalls: packages.includedCalls,
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
    if (invoice.amount_paid > 0 && invoice.id)
      await postTopUp(db, {
        userId: row.subscriberId,
        amountCents: invoice.amount_paid,
        reference: invoice.id,
        description: `Plan '${plan.name}' card payment credited to your wallet: the subscription had ended`,
      });
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
            callsIncluded: plan.includedCalls,
            ...(periodTransactionId ? { periodTransactionId } : {}),
          }
        : {}),
    })
    .where(eq(subscriptions.id, row.id));
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
