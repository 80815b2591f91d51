import { type AccountSubscription, isUuid, type Subscription } from "@promptmint/contracts";
import { and, desc, eq, inArray, isNull, lte, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import {
  type ApplicationRow,
  applications,
  type PackageRow,
  packages,
  paymentMethods,
  type SubscriptionRow,
  subscriptions,
} from "../../db/schema/index.ts";
import { isUniqueViolation } from "../../lib/database-errors.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { walletBalance } from "./balances.ts";
import { dollars, formatMicros } from "./money.ts";
import {
  creditPaymentToWallet,
  lockPaymentByExternalId,
  markPaymentConsumed,
  type PaymentRow,
  postPlanPayment,
} from "./plan-payments.ts";
import { loadPlanTerms, type PlanTerms, termsFields, termsInForce, termsOfPlan } from "./plan-terms.ts";
import { findPackage } from "./plans.ts";
import { accountFor, InsufficientFunds } from "./postings.ts";
import type { StripeGateway } from "./stripe-gateway.ts";
import { setCancelOnStripe } from "./stripe-subscriptions.ts";
import { recordCurrentPeriod } from "./subscription-periods.ts";

const DAY_MS = 86_400_000;

export function toSubscription(
  row: SubscriptionRow,
  packageName: string,
  appSlug: string,
  versions: PlanTerms[] = [],
  now = new Date(),
): Subscription {
  const terms = versions.find((version) => version.id === row.termsId);
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
    terms: terms ? termsFields(terms) : null,
    next_terms: row.status === "active" ? nextTermsOf(row, versions) : null,
  };
}

/**
 * The first coming renewal whose terms differ from the current period's, and those terms. A card
 * subscription keeps the terms it was subscribed at (Stripe charges their price), so none.
 */
function nextTermsOf(row: SubscriptionRow, versions: PlanTerms[]): Subscription["next_terms"] {
  if (row.stripeSubscriptionId || versions.length === 0) return null;
  const lastChange = Math.max(...versions.map((version) => version.effectiveFrom.getTime()));
  let renewal = row.currentPeriodEnd;
  for (let period = 0; period < 100; period++) {
    const terms = termsInForce(versions, renewal);
    const differs = row.termsId ? terms.id !== row.termsId : terms.includedCalls !== row.callsIncluded;
    if (differs) return { ...termsFields(terms), applies_from: renewal.toISOString() };
    if (renewal.getTime() >= lastChange) return null;
    renewal = new Date(renewal.getTime() + terms.periodDays * DAY_MS);
  }
  return null;
}

/**
 * The subscriptions' rows with their plans' names and terms, as the contracts show them. A wallet
 * subscription to a plan withdrawn from sale ends with its period (renewSubscriptions does not renew
 * it), so it says so: `cancel_at_period_end`, as if its subscriber had cancelled.
 */
async function withTerms(
  db: Database,
  rows: { subscription: SubscriptionRow; name: string; planActive: boolean; appSlug: string }[],
): Promise<Subscription[]> {
  const terms = await loadPlanTerms(db, [...new Set(rows.map((row) => row.subscription.packageId))]);
  return rows.map((row) => {
    const shown = toSubscription(
      row.subscription,
      row.name,
      row.appSlug,
      terms.get(row.subscription.packageId),
    );
    const ends = !row.planActive && shown.renews_from === "wallet" && shown.status === "active";
    return ends ? { ...shown, cancel_at_period_end: true, next_terms: null } : shown;
  });
}

export async function listSubscriptions(
  db: Database,
  app: ApplicationRow,
  subscriberId: string,
): Promise<Subscription[]> {
  const rows = await db
    .select({ subscription: subscriptions, name: packages.name, planActive: packages.isActive })
    .from(subscriptions)
    .innerJoin(packages, eq(packages.id, subscriptions.packageId))
    .where(and(eq(subscriptions.applicationId, app.id), eq(subscriptions.subscriberId, subscriberId)))
    .orderBy(desc(subscriptions.createdAt));
  return withTerms(
    db,
    rows.map((row) => ({ ...row, appSlug: app.slug })),
  );
}

/**
 * Every subscription of one person across apps, newest first, with each app's name: the apps
 * need not be callable any more (a private or archived app's subscription still shows, to cancel).
 */
export async function listAccountSubscriptions(
  db: Database,
  subscriberId: string,
): Promise<AccountSubscription[]> {
  const rows = await db
    .select({
      subscription: subscriptions,
      name: packages.name,
      planActive: packages.isActive,
      appSlug: applications.slug,
      appName: applications.name,
    })
    .from(subscriptions)
    .innerJoin(packages, eq(packages.id, subscriptions.packageId))
    .innerJoin(applications, eq(applications.id, subscriptions.applicationId))
    .where(eq(subscriptions.subscriberId, subscriberId))
    .orderBy(desc(subscriptions.createdAt));
  const shown = await withTerms(db, rows);
  return shown.map((subscription, index) => ({
    ...subscription,
    application_name: rows[index]?.appName ?? subscription.application_slug,
  }));
}

/** Whether `id` is a subscription of `subscriberId` to the app `applicationId`. */
export async function isSubscriptionOf(
  db: Database,
  applicationId: string,
  subscriberId: string,
  id: string,
): Promise<boolean> {
  if (!isUuid(id)) return false;
  const [row] = await db
    .select({ id: subscriptions.id })
    .from(subscriptions)
    .where(
      and(
        eq(subscriptions.id, id),
        eq(subscriptions.applicationId, applicationId),
        eq(subscriptions.subscriberId, subscriberId),
      ),
    )
    .limit(1);
  return row !== undefined;
}

export async function getSubscription(
  db: Database,
  app: ApplicationRow,
  subscriberId: string,
  id: string,
): Promise<Subscription> {
  const [row] = isUuid(id)
    ? await db
        .select({ subscription: subscriptions, name: packages.name, planActive: packages.isActive })
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
  const [subscription] = await withTerms(db, [{ ...row, appSlug: app.slug }]);
  if (!subscription) throw notFound("Subscription");
  return subscription;
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

/**
 * A subscription whose first period starts at `now` under `terms`, and that period's record.
 * `priceCents` is what paid it (none yet for a card subscription awaiting its first invoice).
 */
export async function insertSubscription(
  db: Database,
  plan: PackageRow,
  terms: PlanTerms,
  subscriberId: string,
  status: "active" | "incomplete",
  now: Date,
  extra: { id?: string; periodTransactionId?: string; priceCents?: number } = {},
): Promise<SubscriptionRow> {
  const { priceCents, ...ids } = extra;
  const [created] = await db
    .insert(subscriptions)
    .values({
      ...ids,
      packageId: plan.id,
      applicationId: plan.applicationId,
      subscriberId,
      status,
      currentPeriodStart: now,
      currentPeriodEnd: new Date(now.getTime() + terms.periodDays * DAY_MS),
      callsIncluded: terms.includedCalls,
      termsId: terms.id,
    })
    .returning();
  if (!created) throw new Error("subscription insert returned nothing");
  await recordCurrentPeriod(db, created.id, {
    priceCents: priceCents ?? null,
    transactionId: extra.periodTransactionId ?? null,
  });
  return created;
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
  const terms = termsInForce(await termsOfPlan(db, plan.id), now);
  const priceCents = terms.priceCents;
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
      return insertSubscription(t, plan, terms, subscriberId, "active", now, {
        id,
        periodTransactionId,
        priceCents,
      });
    });
    return toSubscription(row, plan.name, app.slug, await termsOfPlan(db, plan.id));
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
      const terms = plan ? termsInForce(await termsOfPlan(t, plan.id), now) : undefined;
      const priceCents = terms?.priceCents ?? 0;
      const reason = !plan?.isActive
        ? `The plan was withdrawn from sale after you paid`
        : priceCents !== payment.amountCents
          ? `The plan's price changed to ${dollars(priceCents)} after you paid`
          : (await findLiveSubscription(t, app.id, subscriberId))
            ? "You already have an active subscription to this app"
            : undefined;
      if (reason || !plan || !terms) {
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
      const row = await insertSubscription(t, plan, terms, subscriberId, "active", now, {
        id,
        periodTransactionId,
        priceCents,
      });
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
  if (outcome.kind === "subscribed")
    return toSubscription(
      outcome.row,
      outcome.planName,
      app.slug,
      await termsOfPlan(db, outcome.row.packageId),
    );
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
    payment.consumedKind === "subscription" && payment.consumedRef && isUuid(payment.consumedRef)
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
  const [card] = isUuid(options.paymentMethodId)
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
  // Stripe charges these terms' price for the subscription's life; its periods keep them.
  const terms = termsInForce(await termsOfPlan(db, plan.id), now);
  // The row comes first, before Stripe charges anything: a concurrent second subscribe to the
  // same app loses on the one-live-subscription index here, with nothing charged.
  const row = await db
    .transaction(async (tx) => {
      const t = tx as unknown as Database;
      await lockAppForSubscribe(t, plan.applicationId);
      await refuseSecondSubscription(t, plan.applicationId, user.id);
      return insertSubscription(t, plan, terms, user.id, "incomplete", now);
    })
    .catch((error) => {
      throw isSecondSubscription(error) ? alreadySubscribed() : error;
    });
  try {
    const stripeSubscriptionId = await stripe.createSubscription(db, user, {
      plan,
      terms,
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
    .select({
      id: subscriptions.id,
      stripeSubscriptionId: subscriptions.stripeSubscriptionId,
      planActive: packages.isActive,
    })
    .from(subscriptions)
    .innerJoin(packages, eq(packages.id, subscriptions.packageId))
    .where(eq(subscriptions.id, id));
  // A plan withdrawn from sale ends its subscriptions with their periods: resuming one cannot keep it.
  if (!cancel && row && !row.planActive)
    throw new AppError(
      "conflict",
      "This plan was withdrawn from sale: the subscription ends with its period",
    );
  if (row?.stripeSubscriptionId) await setCancelOnStripe(db, options.stripe, row, cancel);
  else await db.update(subscriptions).set({ cancelAtPeriodEnd: cancel }).where(eq(subscriptions.id, id));
  return getSubscription(db, app, subscriberId, id);
}

/**
 * At period end: canceling subscriptions end; others renew from the wallet under the plan's terms
 * in force when the new period starts (the old period's end, not when this runs: a change announced
 * for a later moment is never applied early by a late renewal, decisions 021 and 044), or become
 * past_due when the wallet cannot pay. The new period records its terms and is charged their
 * price. Card subscriptions are left to Stripe Billing and its webhooks, so a period is never
 * paid twice.
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
  const termsByPlan = await loadPlanTerms(db, [...new Set(due.map((row) => row.plan.id))]);
  for (const { subscription, plan, ownerId } of due) {
    if (subscription.cancelAtPeriodEnd || !plan.isActive) {
      await db
        .update(subscriptions)
        .set({ status: "canceled" })
        .where(and(eq(subscriptions.id, subscription.id), eq(subscriptions.status, "active")));
      continue;
    }
    const terms = termsInForce(termsByPlan.get(plan.id) ?? [], subscription.currentPeriodEnd);
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
            currentPeriodEnd: sql`${subscriptions.currentPeriodEnd} + ${`${terms.periodDays} days`}::interval`,
            callsUsed: 0,
            callsIncluded: terms.includedCalls,
            termsId: terms.id,
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
          amountCents: terms.priceCents,
          feePercent,
          reference: `${subscription.id}:${subscription.currentPeriodEnd.toISOString()}`,
          description: `Plan '${plan.name}' renewed`,
        });
        if (periodTransactionId)
          await t
            .update(subscriptions)
            .set({ periodTransactionId })
            .where(eq(subscriptions.id, subscription.id));
        await recordCurrentPeriod(t, subscription.id, {
          priceCents: terms.priceCents,
          transactionId: periodTransactionId ?? null,
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
