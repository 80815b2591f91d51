import type { CreatePackageSchema, Package, Subscription, UpdatePackageSchema } from "@promptmint/contracts";
import { and, asc, desc, eq, gt, inArray, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { z } from "zod";
import { type Database, queryRows } from "../../db/client.ts";
import { applications, packages, subscriptions } from "../../db/schema/index.ts";
import { isUniqueViolation } from "../../lib/database-errors.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import type { ApplicationRow } from "../applications/applications.service.ts";
import { walletBalance } from "./balances.ts";
import { centsToMicros, dollars, formatMicros, splitFee } from "./money.ts";
import {
  creditPaymentToWallet,
  lockPaymentByExternalId,
  markPaymentConsumed,
  type PaymentRow,
} from "./plan-payments.ts";
import { accountFor, InsufficientFunds, postTransaction } from "./postings.ts";
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
  // An unknown plan is a 404 whoever asks (the authorization matrix relies on it), then the rest.
  const plan = await findPackage(db, app, packageId);
  if (!plan.isActive) throw new AppError("conflict", "This plan is not available");
  refuseOwnApp(app, subscriberId);
  return plan;
}

function refuseOwnApp(app: ApplicationRow, subscriberId: string): void {
  if (app.ownerId === subscriberId)
    throw new AppError("conflict", "You own this app: your own calls are already free");
}

/**
 * Locks the app to share until the transaction ends, so it cannot be archived (deleted) while a
 * subscription to it is being paid for; an app archived before is a 404.
 */
export async function lockAppForSubscribe(tx: Database, applicationId: string): Promise<void> {
  const [row] = await tx
    .select({ id: applications.id })
    .from(applications)
    .where(and(eq(applications.id, applicationId), isNull(applications.archivedAt)))
    .for("share");
  if (!row) throw notFound("Application");
}

/** The subscription that keeps a consumer from subscribing to an app again (one per app). */
const LIVE_STATUSES = ["active", "incomplete"] as const;
export const alreadySubscribed = (): AppError =>
  new AppError(
    "conflict",
    "You already have an active subscription to this app: cancel it, or wait for it to end, before subscribing again",
  );

/**
 * One live subscription per consumer and app (whatever the plan): a card subscription awaiting
 * its first invoice counts. A fast, friendly refusal; the partial unique index
 * `subscriptions_one_live_per_app` is what holds under concurrency (`isSecondSubscription`).
 */
export async function refuseSecondSubscription(
  db: Database,
  applicationId: string,
  subscriberId: string,
): Promise<void> {
  if (await findLiveSubscription(db, applicationId, subscriberId)) throw alreadySubscribed();
}

async function findLiveSubscription(
  db: Database,
  applicationId: string,
  subscriberId: string,
): Promise<SubscriptionRow | undefined> {
  const [existing] = await db
    .select()
    .from(subscriptions)
    .where(
      and(
        eq(subscriptions.applicationId, applicationId),
        eq(subscriptions.subscriberId, subscriberId),
        inArray(subscriptions.status, [...LIVE_STATUSES]),
      ),
    )
    .limit(1);
  return existing;
}

/** The error of an insert that lost the race for the consumer's one live subscription to an app. */
export function isSecondSubscription(error: unknown): boolean {
  return isUniqueViolation(error, "subscriptions_one_live_per_app");
}

export async function insertSubscription(
  db: Database,
  plan: PackageRow,
  subscriberId: string,
  status: "active" | "incomplete",
  now: Date,
  extra: { id?: string; periodTransactionId?: string } = {},
): Promise<SubscriptionRow> {
  const [created] = await db
    .insert(subscriptions)
    .values({
      ...extra,
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

interface SubscribeOptions {
  app: ApplicationRow;
  subscriberId: string;
  packageId: string;
  paymentIntentId?: string;
  feePercent: number;
  topUpUrl: string;
}

/**
 * Subscribes the caller: the first period is paid by a succeeded card payment made for this plan
 * (`subscribeWithPayment`), or from the wallet. Either way the money goes to the creator (minus
 * the fee) in the same transaction that creates the subscription, and a concurrent second
 * subscribe to the same app is a 409 whose transaction, money included, rolls back.
 */
export async function subscribe(db: Database, options: SubscribeOptions): Promise<Subscription> {
  if (options.paymentIntentId)
    return subscribeWithPayment(db, { ...options, paymentIntentId: options.paymentIntentId });
  const { app, subscriberId } = options;
  const plan = await subscribablePlan(db, app, subscriberId, options.packageId);
  const now = new Date();
  const priceCents = effectivePriceCents(plan, now);
  try {
    const row = await db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      await lockAppForSubscribe(t, app.id);
      await refuseSecondSubscription(t, app.id, subscriberId);
      const id = crypto.randomUUID();
      const periodTransactionId = await postPlanPayment(t, {
        source: await accountFor(t, "wallet", subscriberId),
        creatorId: app.ownerId,
        amountCents: priceCents,
        feePercent: options.feePercent,
        reference: id,
        description: `Plan '${plan.name}' for ${app.name}`,
      });
      return insertSubscription(t, plan, subscriberId, "active", now, { id, periodTransactionId });
    });
    return toSubscription(row, plan.name, app.slug);
  } catch (error) {
    if (isSecondSubscription(error)) throw alreadySubscribed();
    if (!(error instanceof InsufficientFunds)) throw error;
    throw new AppError(
      "payment_required",
      `Insufficient balance: the plan costs ${dollars(priceCents)} and your wallet has ${formatMicros(await walletBalance(db, subscriberId))} available. Top up at ${options.topUpUrl}`,
    );
  }
}

const unusablePayment = () =>
  new AppError("bad_request", "That payment is not a completed, unused payment for this plan", {
    fields: { payment_intent_id: "is not a completed payment for this plan" },
  });

type PaymentOutcome =
  | { kind: "subscribed"; row: SubscriptionRow; planName: string }
  | { kind: "credited"; reason: string; amountCents: number };

/**
 * A subscribe paid by a card payment made for the plan. The payment is locked, then ends in
 * exactly one place (docs/decisions/023): the new subscription; or, when the plan no longer
 * matches what was paid (withdrawn, price changed) or the caller already has a live subscription
 * to the app, the caller's wallet, with a 409 saying so. The same payment sent again (a retry, a
 * concurrent twin) answers the subscription it paid while that is live.
 */
async function subscribeWithPayment(
  db: Database,
  options: SubscribeOptions & { paymentIntentId: string },
): Promise<Subscription> {
  const { app, subscriberId, paymentIntentId } = options;
  refuseOwnApp(app, subscriberId);
  const now = new Date();
  let outcome: PaymentOutcome;
  try {
    outcome = await db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      await lockAppForSubscribe(t, app.id);
      const payment = await lockPaymentByExternalId(t, subscriberId, paymentIntentId);
      if (
        payment?.status !== "succeeded" ||
        payment.purpose !== "subscription" ||
        payment.packageId !== options.packageId
      )
        throw unusablePayment();
      if (payment.consumedKind) return paidBefore(t, app, payment);
      const [plan] = await t
        .select()
        .from(packages)
        .where(and(eq(packages.id, payment.packageId), eq(packages.applicationId, app.id)));
      const priceCents = plan ? effectivePriceCents(plan, now) : 0;
      const reason = !plan?.isActive
        ? `The plan was withdrawn from sale after you paid`
        : priceCents !== payment.amountCents
          ? `The plan's price changed to ${dollars(priceCents)} after you paid`
          : (await findLiveSubscription(t, app.id, subscriberId))
            ? "You already have an active subscription to this app"
            : undefined;
      if (reason || !plan) {
        await creditPaymentToWallet(t, payment, `Plan payment credited to your wallet: ${reason}`);
        return { kind: "credited", reason: reason ?? "", amountCents: payment.amountCents };
      }
      const id = crypto.randomUUID();
      const periodTransactionId = await postPlanPayment(t, {
        source: await accountFor(t, "clearing", null),
        creatorId: app.ownerId,
        amountCents: priceCents,
        feePercent: options.feePercent,
        reference: payment.id,
        description: `Plan '${plan.name}' for ${app.name}`,
      });
      const row = await insertSubscription(t, plan, subscriberId, "active", now, { id, periodTransactionId });
      if (!(await markPaymentConsumed(t, payment.id, { kind: "subscription", ref: row.id })))
        throw new Error(`payment ${payment.id} was consumed twice`);
      return { kind: "subscribed", row, planName: plan.name };
    });
  } catch (error) {
    if (!isSecondSubscription(error)) throw error;
    // Another subscribe (the wallet, another payment) won the race: this payment, untouched by
    // the rolled-back transaction, goes to the wallet.
    const amountCents = await db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      const payment = await lockPaymentByExternalId(t, subscriberId, paymentIntentId);
      const credited =
        payment &&
        (await creditPaymentToWallet(t, payment, "Plan payment credited to your wallet: already subscribed"));
      return credited ? payment.amountCents : 0;
    });
    outcome = {
      kind: "credited",
      reason: "You already have an active subscription to this app",
      amountCents,
    };
  }
  if (outcome.kind === "subscribed") return toSubscription(outcome.row, outcome.planName, app.slug);
  throw new AppError(
    "conflict",
    `${outcome.reason}: your payment${outcome.amountCents > 0 ? ` of ${dollars(outcome.amountCents)}` : ""} was added to your wallet instead`,
  );
}

/**
 * A payment that already ended somewhere: the live subscription it paid is answered again (the
 * same subscribe retried); anything else (a subscription since ended, a wallet credit) is refused.
 */
async function paidBefore(db: Database, app: ApplicationRow, payment: PaymentRow): Promise<PaymentOutcome> {
  if (payment.consumedKind === "wallet")
    throw new AppError(
      "conflict",
      "That payment was already added to your wallet; subscribe from your wallet instead",
    );
  const [paid] =
    payment.consumedKind === "subscription" &&
    payment.consumedRef &&
    /^[0-9a-f-]{36}$/i.test(payment.consumedRef)
      ? await db
          .select({ row: subscriptions, name: packages.name })
          .from(subscriptions)
          .innerJoin(packages, eq(packages.id, subscriptions.packageId))
          .where(
            and(
              eq(subscriptions.id, payment.consumedRef),
              eq(subscriptions.applicationId, app.id),
              inArray(subscriptions.status, [...LIVE_STATUSES]),
            ),
          )
      : [];
  if (!paid) throw unusablePayment();
  return { kind: "subscribed", row: paid.row, planName: paid.name };
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

/** An included call taken from a plan: the subscription and the period it was counted in. */
export interface IncludedCall {
  subscriptionId: string;
  /** The period's start as PostgreSQL wrote it (microseconds: a JS Date would round it). */
  periodStart: string;
  /** The call it was taken for, when taken before the call ran (an `included_calls` row). */
  callId?: string;
}

/**
 * Counts a call against the caller's active plan if it has quota left (one conditional update, so
 * concurrent calls cannot exceed it). The subscription row is locked, never skipped: a call that
 * skipped a row another call was updating would be charged to the wallet while the plan still had
 * calls (decision 025). Taken before a call runs (`reserve`), it is also written down as the
 * call's (`included_calls`), so a crash before the call is recorded cannot keep it: the sweeper
 * gives it back once `reserve.ttlSeconds` passed. Returns what to give back if the call fails.
 */
export async function useIncludedCall(
  db: Database,
  applicationId: string,
  subscriberId: string,
  reserve?: { callId: string; ttlSeconds: number },
): Promise<IncludedCall | undefined> {
  const [row] = await queryRows<{ subscription_id: string; period_start: string }>(
    db,
    sql`with taken as (
          update subscriptions set calls_used = calls_used + 1
          where id = (
            select id from subscriptions
            where application_id = ${applicationId} and subscriber_id = ${subscriberId} and status = 'active'
              and current_period_end > now() and calls_used < calls_included
            order by current_period_end limit 1
            for update)
            and calls_used < calls_included
          returning id, current_period_start
        ), reserved as (
          insert into included_calls (id, subscription_id, period_start, expires_at)
          select ${reserve?.callId ?? null}::uuid, id, current_period_start,
            now() + ${reserve?.ttlSeconds ?? 0}::int * interval '1 second'
          from taken where ${reserve !== undefined}::boolean
          returning 1
        )
        select id as subscription_id, current_period_start::text as period_start from taken`,
  );
  if (!row) return undefined;
  return { subscriptionId: row.subscription_id, periodStart: row.period_start, callId: reserve?.callId };
}

/**
 * Gives back an included call of a call that was not answered, to the period it was taken from
 * (a renewal since then started a new count, which it must not lower), once: a call taken before
 * it ran gives back only while its `included_calls` row is there.
 */
export async function refundIncludedCall(db: Database, taken: IncludedCall): Promise<void> {
  await queryRows(
    db,
    taken.callId
      ? sql`with gone as (delete from included_calls where id = ${taken.callId}::uuid
                          returning subscription_id, period_start)
            update subscriptions s set calls_used = s.calls_used - 1 from gone
            where s.id = gone.subscription_id and s.current_period_start = gone.period_start
              and s.calls_used > 0`
      : sql`update subscriptions set calls_used = calls_used - 1
            where id = ${taken.subscriptionId} and current_period_start = ${taken.periodStart}::timestamptz
              and calls_used > 0`,
  );
}

/**
 * Gives back the included calls that calls in flight on a crashed process took and never
 * recorded (their `included_calls` rows expired: no call can still be recorded against them).
 */
export async function sweepExpiredIncludedCalls(db: Database): Promise<void> {
  await queryRows(
    db,
    sql`with gone as (delete from included_calls where expires_at < now()
                      returning subscription_id, period_start),
        per as (select subscription_id, period_start, count(*)::int as n from gone
                group by subscription_id, period_start)
        update subscriptions s set calls_used = greatest(s.calls_used - per.n, 0) from per
        where s.id = per.subscription_id and s.current_period_start = per.period_start`,
  );
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
          // Claimed in SQL, from the row as it is: the period end PostgreSQL holds has microseconds
          // a JS Date would round away, so an equality with the Date read above could never match
          // (the subscription would stay active past its end, unrenewed). A concurrent renewal
          // finds the end moved on and claims nothing.
          .set({
            currentPeriodStart: sql`${subscriptions.currentPeriodEnd}`,
            currentPeriodEnd: sql`${subscriptions.currentPeriodEnd} + ${`${PERIOD_DAYS} days`}::interval`,
            callsUsed: 0,
            callsIncluded: plan.includedCalls,
          })
          .where(
            and(
              eq(subscriptions.id, subscription.id),
              eq(subscriptions.status, "active"),
              lte(subscriptions.currentPeriodEnd, now),
            ),
          )
          .returning({ id: subscriptions.id });
        if (!claimed) return;
        const periodTransactionId = await postPlanPayment(t, {
          source: await accountFor(t, "wallet", subscription.subscriberId),
          creatorId: ownerId,
          // The price when the period ended, not when this runs: an increase announced for a later
          // moment is not charged early by a late renewal (decision 021).
          amountCents: effectivePriceCents(plan, subscription.currentPeriodEnd),
          feePercent,
          reference: `${subscription.id}:${subscription.currentPeriodEnd.toISOString()}`,
          description: `Plan '${plan.name}' renewed`,
        });
        if (periodTransactionId)
          await t
            .update(subscriptions)
            .set({ periodTransactionId })
            .where(eq(subscriptions.id, subscription.id));
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
