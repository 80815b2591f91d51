import { and, eq, isNull, ne } from "drizzle-orm";
import Stripe from "stripe";
import type { Config } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import { type PackageRow, packages, payments, stripeCustomers, stripeEvents } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { PROVIDER_ACTOR } from "../admin/audit.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { creditPaymentToWallet } from "./plan-payments.ts";
import { applyReversal, disputeStatusOf, type ReversalFact, recallIndebted } from "./reversals.ts";
import { payTopUpBonuses } from "./sponsored/promotion-codes.ts";
import { stripeClient } from "./stripe-client.ts";
import type { ConnectEventHandler, StripeGateway } from "./stripe-gateway.ts";
import {
  applyInvoiceFailed,
  applyInvoicePaid,
  applySubscriptionChange,
  SUBSCRIPTION_METADATA_KEY,
} from "./stripe-subscriptions.ts";

/** Stripe's documented tolerance for a webhook's timestamp. */
const WEBHOOK_TOLERANCE_SECONDS = 300;

export function createStripeGateway(
  config: Config,
  connectEvents?: ConnectEventHandler,
): StripeGateway | undefined {
  const feePercent = config.platformFeePercent;
  const payoutHoldMs = config.payoutHoldMs;
  const { publishableKey, webhookSecret, connectWebhookSecret } = config.stripe;
  const client = stripeClient(config);
  if (!client || !publishableKey) return undefined;
  const stripe: Stripe = client;

  async function customerFor(db: Database, user: LocalUser): Promise<string> {
    const [existing] = await db
      .select()
      .from(stripeCustomers)
      .where(eq(stripeCustomers.userId, user.id))
      .limit(1);
    if (existing) return existing.customerId;
    const customer = await stripe.customers.create(
      {
        email: user.email || undefined,
        name: user.displayName || undefined,
        metadata: { promptmint_user_id: user.id },
      },
      { idempotencyKey: `customer-${user.id}` },
    );
    await db
      .insert(stripeCustomers)
      .values({ userId: user.id, customerId: customer.id })
      .onConflictDoNothing();
    const [stored] = await db
      .select()
      .from(stripeCustomers)
      .where(eq(stripeCustomers.userId, user.id))
      .limit(1);
    return stored?.customerId ?? customer.id;
  }

  /** The plan's Stripe Product, created on its first card subscription; prices go inline. */
  async function productFor(db: Database, plan: PackageRow): Promise<string> {
    if (plan.stripeProductId) return plan.stripeProductId;
    const product = await stripe.products.create(
      { name: plan.name, metadata: { package_id: plan.id } },
      { idempotencyKey: `product-${plan.id}` },
    );
    await db
      .update(packages)
      .set({ stripeProductId: product.id })
      .where(and(eq(packages.id, plan.id), isNull(packages.stripeProductId)));
    return product.id;
  }

  return {
    async createPaymentIntent(db, user, { amount, currency, packageId }) {
      const customer = await customerFor(db, user);
      const purpose = packageId ? "subscription" : amount === 0 ? "setup" : "top_up";
      const metadata = {
        promptmint_user_id: user.id,
        purpose,
        ...(packageId ? { package_id: packageId } : {}),
      };
      const intent =
        amount === 0
          ? await stripe.setupIntents.create({ customer, usage: "off_session", metadata })
          : await stripe.paymentIntents.create({
              amount,
              currency,
              customer,
              automatic_payment_methods: { enabled: true },
              metadata,
            });
      if (!intent.client_secret) throw new AppError("upstream_failed", "Stripe returned no client secret");
      await db.insert(payments).values({
        userId: user.id,
        gateway: "stripe",
        externalId: intent.id,
        amountCents: amount,
        currency,
        status: "requires_payment_method",
        purpose,
        packageId: packageId ?? null,
      });
      return { id: intent.id, client_secret: intent.client_secret, amount, currency, gateway: "stripe" };
    },

    async retrieveCard(db, user, paymentMethodId) {
      const customer = await customerFor(db, user);
      const method = await stripe.paymentMethods.retrieve(paymentMethodId);
      const owner = typeof method.customer === "string" ? method.customer : method.customer?.id;
      if (owner !== customer || !method.card) throw new AppError("not_found", "Payment method not found");
      return {
        brand: method.card.brand,
        last4: method.card.last4,
        expMonth: method.card.exp_month,
        expYear: method.card.exp_year,
        fingerprint: method.card.fingerprint ?? null,
      };
    },

    async createSubscription(db, user, { plan, terms, paymentMethodId, subscriptionId }) {
      const [customer, product] = await Promise.all([customerFor(db, user), productFor(db, plan)]);
      try {
        const subscription = await stripe.subscriptions.create(
          {
            customer,
            default_payment_method: paymentMethodId,
            items: [
              {
                price_data: {
                  currency: plan.currency,
                  product,
                  // The terms' price, fixed for the subscription's life: every period it pays keeps
                  // these terms (decision 044), so Stripe never charges a price they did not set.
                  unit_amount: terms.priceCents,
                  recurring: { interval: "day", interval_count: terms.periodDays },
                },
              },
            ],
            payment_behavior: "error_if_incomplete",
            off_session: true,
            metadata: {
              [SUBSCRIPTION_METADATA_KEY]: subscriptionId,
              promptmint_user_id: user.id,
              package_id: plan.id,
              promptmint_terms_version: String(terms.version),
            },
          },
          { idempotencyKey: `subscription-${subscriptionId}` },
        );
        return subscription.id;
      } catch (error) {
        if (error instanceof Stripe.errors.StripeCardError)
          throw new AppError("payment_required", error.message);
        throw new AppError("upstream_failed", "Stripe could not start the subscription");
      }
    },

    async setCancelAtPeriodEnd(stripeSubscriptionId, cancel) {
      const subscription = await stripe.subscriptions.update(stripeSubscriptionId, {
        cancel_at_period_end: cancel,
      });
      return subscription.cancel_at_period_end;
    },

    async handleWebhook(db, rawBody, signature) {
      if (!webhookSecret)
        throw new AppError("unavailable", "STRIPE_WEBHOOK_SECRET is not configured on this server");
      if (!signature) throw new AppError("bad_request", "Missing Stripe-Signature header");
      let event: Stripe.Event | undefined;
      // The platform's endpoint and the Connect endpoint (connected accounts' events) sign apart.
      for (const secret of [webhookSecret, connectWebhookSecret]) {
        if (!secret || event) continue;
        try {
          event = stripe.webhooks.constructEvent(rawBody, signature, secret, WEBHOOK_TOLERANCE_SECONDS);
        } catch {
          // tried below
        }
      }
      if (!event)
        throw new AppError(
          "bad_request",
          "Invalid Stripe signature or a timestamp outside the 300 s tolerance",
        );
      const verified = event;
      let afterCommit: (() => Promise<void>) | undefined;
      // Whose debt the event created: their leases are recalled once it committed.
      const indebted: string[] = [];
      // Recording the event and applying it share one transaction: a failure leaves Stripe to retry.
      const duplicate = await db.transaction(async (tx) => {
        const t = tx as unknown as Database;
        const [fresh] = await t
          .insert(stripeEvents)
          .values({ id: verified.id, type: verified.type })
          .onConflictDoNothing()
          .returning({ id: stripeEvents.id });
        if (!fresh) return true;
        if (connectEvents?.types.has(verified.type)) {
          afterCommit = await connectEvents.apply(t, verified);
          return false;
        }
        const event = verified;
        const reverse = async (paymentIntentId: string, fact: ReversalFact) => {
          const outcome = await applyReversal(t, {
            gateway: "stripe",
            paymentIntentId,
            fact,
            actor: PROVIDER_ACTOR("stripe"),
            payoutHoldMs,
          });
          indebted.push(...outcome.indebted);
        };
        switch (event.type) {
          case "payment_intent.succeeded":
            await applySucceeded(t, event.data.object);
            break;
          case "payment_intent.payment_failed":
            await t
              .update(payments)
              .set({ status: "failed" })
              .where(
                and(
                  eq(payments.gateway, "stripe"),
                  eq(payments.externalId, event.data.object.id),
                  ne(payments.status, "succeeded"),
                ),
              );
            break;
          case "invoice.paid":
            await applyInvoicePaid(t, event.data.object, feePercent);
            break;
          case "invoice.payment_failed":
            await applyInvoiceFailed(t, event.data.object);
            break;
          case "charge.refunded": {
            const charge = event.data.object;
            const paymentIntentId = idOf(charge.payment_intent);
            if (!paymentIntentId) break;
            // The charge's refunded total is cumulative: only its increase is applied, once per
            // refund id (the newest refund the event lists), so a redelivery or an older event
            // arriving late moves nothing.
            const latest = charge.refunds?.data?.[0]?.id;
            await reverse(paymentIntentId, {
              kind: "refund",
              externalId: latest ?? `${charge.id}:${charge.amount_refunded}`,
              refundedTotalCents: charge.amount_refunded,
            });
            break;
          }
          case "charge.dispute.created":
          case "charge.dispute.updated":
          case "charge.dispute.closed": {
            const dispute = event.data.object;
            const paymentIntentId = idOf(dispute.payment_intent);
            if (!paymentIntentId) break;
            await reverse(paymentIntentId, {
              kind: "dispute",
              externalId: dispute.id,
              amountCents: dispute.amount,
              status: disputeStatusOf(dispute.status),
              reason: dispute.reason,
            });
            break;
          }
          case "customer.subscription.updated":
          case "customer.subscription.deleted":
            await applySubscriptionChange(
              t,
              event.data.object,
              event.type === "customer.subscription.deleted",
            );
            break;
        }
        return false;
      });
      // Work that needs the event committed first (a failed payout's transfer reversal); the
      // payouts retrier repeats it if it fails here.
      if (afterCommit) await afterCommit().catch(() => undefined);
      await recallIndebted(db, indebted);
      return { type: verified.type, duplicate };
    },
  };
}

const idOf = (value: string | { id: string } | null | undefined) =>
  typeof value === "string" ? value : value?.id;

/** The source of truth for a Stripe payment: the webhook. A top-up reaches the wallet here, once. */
async function applySucceeded(db: Database, intent: Stripe.PaymentIntent): Promise<void> {
  const [payment] = await db
    .update(payments)
    .set({ status: "succeeded" })
    .where(
      and(
        eq(payments.gateway, "stripe"),
        eq(payments.externalId, intent.id),
        ne(payments.status, "succeeded"),
      ),
    )
    .returning();
  if (!payment) return;
  if (intent.amount_received !== payment.amountCents) {
    throw new AppError(
      "conflict",
      `Stripe reported ${intent.amount_received} cents received for a ${payment.amountCents} cent payment`,
    );
  }
  if (payment.purpose !== "top_up") return;
  if (await creditPaymentToWallet(db, payment, "Wallet top-up (Stripe)"))
    // Percent promotion codes waiting for this top-up pay their bonus credit (decision 080).
    await payTopUpBonuses(db, payment.userId, payment.amountCents);
}
