import type { CreatePackageSchema, Package, Subscription, UpdatePackageSchema } from "@promptmint/contracts";
import { and, asc, desc, eq, gt, inArray, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { applications, packages, payments, subscriptions } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import type { ApplicationRow } from "../applications/applications.service.ts";
import {
  accountFor,
  dollars,
  InsufficientFunds,
  postTransaction,
  splitFee,
  walletBalance,
} from "./ledger.service.ts";
import { effectivePriceCents, effectivePriceSql, priceFields, setPrice } from "./price-changes.ts";
import type { StripeGateway } from "./stripe-gateway.ts";

export const PERIOD_DAYS = 30;
const DAY_MS = 86_400_000;
export type PackageRow = typeof packages.$inferSelect;
export type SubscriptionRow = typeof subscriptions.$inferSelect;

export function toPackage(row: PackageRow): Package {
  const prices = priceFields(row);
  return {
    id: row.id,
    name: row.name,
    price: prices.price_cents / 100,
    ...prices,
    currency: row.currency,
    description: row.description,
    features: row.features as Record<string, string>,
    included_calls: row.includedCalls,
    is_active: row.isActive,
  };
}

export function toSubscription(
  row: SubscriptionRow,
  packageName: string,
  appSlug: string,
  now = new Date(),
): Subscription {
  return {
    id: row.id,
    package_id: row.packageId,
    package_name: packageName,
    application_slug: appSlug,
    status: row.status,
    cancel_at_period_end: row.cancelAtPeriodEnd,
    renews_from: row.stripeSubscriptionId ? "card" : "wallet",
    current_period_start: row.currentPeriodStart.toISOString(),
    current_period_end: row.currentPeriodEnd.toISOString(),
    days_remaining:
      row.status === "active"
        ? Math.max(0, Math.ceil((row.currentPeriodEnd.getTime() - now.getTime()) / DAY_MS))
        : 0,
    calls_used: row.callsUsed,
    calls_included: row.callsIncluded,
  };
}

export async function listPackages(db: Database, app: ApplicationRow): Promise<Package[]> {
  const rows = await db
    .select()
    .from(packages)
    .where(eq(packages.applicationId, app.id))
    .orderBy(asc(effectivePriceSql(packages)), asc(packages.createdAt));
  return rows.map(toPackage);
}

export async function createPackage(
  db: Database,
  app: ApplicationRow,
  input: z.output<typeof CreatePackageSchema>,
): Promise<Package> {
  const [row] = await db
    .insert(packages)
    .values({
      applicationId: app.id,
      name: input.name,
      priceCents: input.price_cents,
      currency: input.currency,
      description: input.description,
      features: input.features,
      includedCalls: input.included_calls,
      isActive: input.is_active,
    })
    .returning();
  if (!row) throw new Error("package insert returned nothing");
  return toPackage(row);
}

export async function findPackage(db: Database, app: ApplicationRow, id: string): Promise<PackageRow> {
  const [row] = /^[0-9a-f-]{36}$/i.test(id)
    ? await db
        .select()
        .from(packages)
        .where(and(eq(packages.id, id), eq(packages.applicationId, app.id)))
        .limit(1)
    : [];
  if (!row) throw notFound("Plan");
  return row;
}

/**
 * A plan's price may change; current periods keep what they paid for. A raised price is announced
 * and charged only for periods starting `priceNoticeMs` later (billing/price-changes.ts).
 */
export async function updatePackage(
  db: Database,
  app: ApplicationRow,
  id: string,
  input: z.output<typeof UpdatePackageSchema>,
  { priceNoticeMs }: { priceNoticeMs: number },
): Promise<Package> {
  const plan = await findPackage(db, app, id);
  const changes = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.price_cents !== undefined
      ? setPrice(plan, input.price_cents, { now: new Date(), noticeMs: priceNoticeMs })
      : {}),
    ...(input.currency !== undefined ? { currency: input.currency } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.features !== undefined ? { features: input.features } : {}),
    ...(input.included_calls !== undefined ? { includedCalls: input.included_calls } : {}),
    ...(input.is_active !== undefined ? { isActive: input.is_active } : {}),
  };
  const [row] = Object.keys(changes).length
    ? await db.update(packages).set(changes).where(eq(packages.id, id)).returning()
    : await db.select().from(packages).where(eq(packages.id, id));
  if (!row) throw notFound("Plan");
  return toPackage(row);
}

/**
 * Plans with subscribers are never deleted, only withdrawn from sale. Their subscriptions end at
 * period end: wallet ones at our renewal, card ones because Stripe is told to cancel them then.
 */
export async function deactivatePackage(
  db: Database,
  app: ApplicationRow,
  id: string,
  stripe: StripeGateway | undefined,
): Promise<void> {
  await findPackage(db, app, id);
  await db.update(packages).set({ isActive: false }).where(eq(packages.id, id));
  const billedByStripe = await db
    .select({ id: subscriptions.id, stripeSubscriptionId: subscriptions.stripeSubscriptionId })
    .from(subscriptions)
    .where(
      and(
        eq(subscriptions.packageId, id),
        inArray(subscriptions.status, ["active", "past_due", "incomplete"]),
        eq(subscriptions.cancelAtPeriodEnd, false),
        isNotNull(subscriptions.stripeSubscriptionId),
      ),
    );
  for (const row of billedByStripe) await setCancelOnStripe(db, stripe, row, true);
}

/** Changes a card subscription's cancel_at_period_end on Stripe and keeps what Stripe answers. */
async function setCancelOnStripe(
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

export async function listSubscriptions(
  db: Database,
  app: ApplicationRow,
  subscriberId: string,
): Promise<Subscription[]> {
  const rows = await db
    .select({ subscription: subscriptions, name: packages.name })
    .from(subscriptions)
    .innerJoin(packages, eq(packages.id, subscriptions.packageId))
    .where(and(eq(subscriptions.applicationId, app.id), eq(subscriptions.subscriberId, subscriberId)))
    .orderBy(desc(subscriptions.createdAt));
  return rows.map((row) => toSubscription(row.subscription, row.name, app.slug));
}

export async function getSubscription(
  db: Database,
  app: ApplicationRow,
  subscriberId: string,
  id: string,
): Promise<Subscription> {
  const [row] = /^[0-9a-f-]{36}$/i.test(id)
    ? await db
        .select({ subscription: subscriptions, name: packages.name })
        .from(subscriptions)
        .innerJoin(packages, eq(packages.id, subscriptions.packageId))
        .where(
          and(
            eq(subscriptions.id, id),
            eq(subscriptions.applicationId, app.id),
            eq(subscriptions.subscriberId, subscriberId),
          ),
        )
        .limit(1)
    : [];
  if (!row) throw notFound("Subscription");
  return toSubscription(row.subscription, row.name, app.slug);
}

/** The plan of this app the caller may subscribe to: on sale, and not the caller's own app. */
export async function subscribablePlan(
  db: Database,
  app: ApplicationRow,
  subscriberId: string,
  packageId: string,
): Promise<PackageRow> {
  const plan = await findPackage(db, app, packageId);
  if (!plan.isActive) throw new AppError("conflict", "This plan is not available");
  if (app.ownerId === subscriberId)
    throw new AppError("conflict", "You own this app: your own calls are already free");
  return plan;
}

/** One live subscription per plan and subscriber; a card subscription awaiting its first invoice counts. */
export async function refuseSecondSubscription(
  db: Database,
  plan: PackageRow,
  subscriberId: string,
  now: Date,
): Promise<void> {
  const [existing] = await db
    .select({ id: subscriptions.id })
    .from(subscriptions)
    .where(
      and(
        eq(subscriptions.packageId, plan.id),
        eq(subscriptions.subscriberId, subscriberId),
        inArray(subscriptions.status, ["active", "incomplete"]),
        gt(subscriptions.currentPeriodEnd, now),
      ),
    )
    .limit(1);
  if (existing) throw new AppError("conflict", "You already have an active subscription to this plan");
}

export async function insertSubscription(
  db: Database,
  plan: PackageRow,
  subscriberId: string,
  status: "active" | "incomplete",
  now: Date,
): Promise<SubscriptionRow> {
  const [created] = await db
    .insert(subscriptions)
    .values({
      packageId: plan.id,
      applicationId: plan.applicationId,
      subscriberId,
      status,
      currentPeriodStart: now,
      currentPeriodEnd: new Date(now.getTime() + PERIOD_DAYS * DAY_MS),
      callsIncluded: plan.includedCalls,
    })
    .returning();
  return created as SubscriptionRow;
}

/**
 * A period's payment for a plan (wallet, card payment or Stripe invoice) to the creator's earnings
 * minus the platform fee, inside the caller's transaction, once per reference.
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
): Promise<boolean> {
  const [earnings, platform] = await Promise.all([
    accountFor(db, "earnings", options.creatorId),
    accountFor(db, "platform_fee", null),
  ]);
  const { fee, net } = splitFee(options.amountCents, options.feePercent);
  return postTransaction(db, {
    kind: "subscription",
    reference: options.reference,
    description: options.description,
    entries: [
      { accountId: options.source, amountCents: -options.amountCents },
      { accountId: earnings, amountCents: net },
      ...(fee > 0 ? [{ accountId: platform, amountCents: fee }] : []),
    ],
  });
}

/**
 * Subscribes the caller: the first period is paid by a succeeded card payment made for this plan,
 * or from the wallet. Either way the money goes to the creator (minus the fee) in the same
 * transaction that creates the subscription.
 */
export async function subscribe(
  db: Database,
  options: {
    app: ApplicationRow;
    subscriberId: string;
    packageId: string;
    paymentIntentId?: string;
    feePercent: number;
    topUpUrl: string;
  },
): Promise<Subscription> {
  const { app, subscriberId } = options;
  const plan = await subscribablePlan(db, app, subscriberId, options.packageId);
  const now = new Date();
  const priceCents = effectivePriceCents(plan, now);
  try {
    const row = await db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      await refuseSecondSubscription(t, plan, subscriberId, now);
      let source: string;
      let reference: string;
      if (options.paymentIntentId) {
        const [payment] = await t
          .update(payments)
          .set({ consumedAt: now })
          .where(
            and(
              eq(payments.externalId, options.paymentIntentId),
              eq(payments.userId, subscriberId),
              eq(payments.status, "succeeded"),
              eq(payments.purpose, "subscription"),
              eq(payments.packageId, plan.id),
              eq(payments.amountCents, priceCents),
              isNull(payments.consumedAt),
            ),
          )
          .returning({ id: payments.id });
        if (!payment)
          throw new AppError("bad_request", "That payment is not a completed, unused payment for this plan", {
            fields: { payment_intent_id: "is not a completed payment for this plan" },
          });
        source = await accountFor(t, "clearing", null);
        reference = payment.id;
      } else {
        source = await accountFor(t, "wallet", subscriberId);
        reference = crypto.randomUUID();
      }
      await postPlanPayment(t, {
        source,
        creatorId: app.ownerId,
        amountCents: priceCents,
        feePercent: options.feePercent,
        reference,
        description: `Plan '${plan.name}' for ${app.name}`,
      });
      return insertSubscription(t, plan, subscriberId, "active", now);
    });
    return toSubscription(row, plan.name, app.slug);
  } catch (error) {
    if (!(error instanceof InsufficientFunds)) throw error;
    throw new AppError(
      "payment_required",
      `Insufficient balance: the plan costs ${dollars(priceCents)} and your wallet has ${dollars(await walletBalance(db, subscriberId))} available. Top up at ${options.topUpUrl}`,
    );
  }
}

/** A card subscription is changed on Stripe first (its webhook confirms); a wallet one here. */
export async function setCancelAtPeriodEnd(
  db: Database,
  options: {
    app: ApplicationRow;
    subscriberId: string;
    id: string;
    cancel: boolean;
    stripe: StripeGateway | undefined;
  },
): Promise<Subscription> {
  const { app, subscriberId, id, cancel } = options;
  const current = await getSubscription(db, app, subscriberId, id);
  if (current.status !== "active")
    throw new AppError("conflict", "Only an active subscription can be changed");
  const [row] = await db
    .select({ id: subscriptions.id, stripeSubscriptionId: subscriptions.stripeSubscriptionId })
    .from(subscriptions)
    .where(eq(subscriptions.id, id));
  if (row?.stripeSubscriptionId) await setCancelOnStripe(db, options.stripe, row, cancel);
  else await db.update(subscriptions).set({ cancelAtPeriodEnd: cancel }).where(eq(subscriptions.id, id));
  return getSubscription(db, app, subscriberId, id);
}

/**
 * Counts a call against the caller's active plan if it has quota left (one conditional update, so
 * concurrent calls cannot exceed it). Returns the subscription id to refund if the call fails.
 */
export async function useIncludedCall(
  db: Database,
  applicationId: string,
  subscriberId: string,
): Promise<string | undefined> {
  const [row] = await db
    .update(subscriptions)
    .set({ callsUsed: sql`${subscriptions.callsUsed} + 1` })
    .where(
      sql`${subscriptions.id} = (
        select id from subscriptions
        where application_id = ${applicationId} and subscriber_id = ${subscriberId} and status = 'active'
          and current_period_end > now() and calls_used < calls_included
        order by current_period_end limit 1
        for update skip locked)
      and ${subscriptions.callsUsed} < ${subscriptions.callsIncluded}`,
    )
    .returning({ id: subscriptions.id });
  return row?.id;
}

export async function refundIncludedCall(db: Database, subscriptionId: string): Promise<void> {
  await db
    .update(subscriptions)
    .set({ callsUsed: sql`${subscriptions.callsUsed} - 1` })
    .where(and(eq(subscriptions.id, subscriptionId), gt(subscriptions.callsUsed, 0)));
}

/**
 * At period end: canceling subscriptions end; others renew from the wallet (the plan's price at
 * the period's end: an increase only once its notice has run), or become past_due when the wallet
 * cannot pay. Card subscriptions are left to Stripe Billing and its webhooks, so a period is never
 * paid twice (Stripe renews them at the price they were subscribed at, never a raised one).
 */
export async function renewDueSubscriptions(
  db: Database,
  feePercent: number,
  now = new Date(),
): Promise<number> {
  const due = await db
    .select({ subscription: subscriptions, plan: packages, ownerId: applications.ownerId })
    .from(subscriptions)
    .innerJoin(packages, eq(packages.id, subscriptions.packageId))
    .innerJoin(applications, eq(applications.id, subscriptions.applicationId))
    .where(
      and(
        eq(subscriptions.status, "active"),
        lte(subscriptions.currentPeriodEnd, now),
        isNull(subscriptions.stripeSubscriptionId),
      ),
    )
    .limit(200);
  for (const { subscription, plan, ownerId } of due) {
    if (subscription.cancelAtPeriodEnd || !plan.isActive) {
      await db
        .update(subscriptions)
        .set({ status: "canceled" })
        .where(and(eq(subscriptions.id, subscription.id), eq(subscriptions.status, "active")));
      continue;
    }
    await db
      .transaction(async (tx) => {
        const t = tx as unknown as Database;
        const [claimed] = await t
          .update(subscriptions)
          .set({
            currentPeriodStart: subscription.currentPeriodEnd,
            currentPeriodEnd: new Date(subscription.currentPeriodEnd.getTime() + PERIOD_DAYS * DAY_MS),
            callsUsed: 0,
            callsIncluded: plan.includedCalls,
          })
          .where(
            and(
              eq(subscriptions.id, subscription.id),
              eq(subscriptions.currentPeriodEnd, subscription.currentPeriodEnd),
            ),
          )
          .returning({ id: subscriptions.id });
        if (!claimed) return;
        await postPlanPayment(t, {
          source: await accountFor(t, "wallet", subscription.subscriberId),
          creatorId: ownerId,
          // The price when the period ended, not when this runs: an increase announced for a later
          // moment is not charged early by a late renewal (decision 021).
          amountCents: effectivePriceCents(plan, subscription.currentPeriodEnd),
          feePercent,
          reference: `${subscription.id}:${subscription.currentPeriodEnd.toISOString()}`,
          description: `Plan '${plan.name}' renewed`,
        });
      })
      .catch(async (error) => {
        if (!(error instanceof InsufficientFunds)) throw error;
        await db
          .update(subscriptions)
          .set({ status: "past_due" })
          .where(eq(subscriptions.id, subscription.id));
      });
  }
  return due.length;
}
