import type { PaymentIntent } from "@promptmint/contracts";
import type Stripe from "stripe";
import type { Database } from "../../db/client.ts";
import type { PackageRow } from "../../db/schema/index.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { PlanTerms } from "./plan-terms.ts";

/** What the app asks of Stripe; billing/stripe.ts (`createStripeGateway`) implements it. */
export interface StripeGateway {
  createPaymentIntent(
    db: Database,
    user: LocalUser,
    options: { amount: number; currency: string; packageId?: string },
  ): Promise<PaymentIntent>;
  /** A card the browser set up with Stripe Elements: checked to belong to the user's customer. */
  retrieveCard(
    db: Database,
    user: LocalUser,
    paymentMethodId: string,
  ): Promise<{ brand: string; last4: string; expMonth: number; expYear: number; fingerprint: string | null }>;
  /**
   * Starts Stripe Billing for a plan: the saved card pays the first period now (a decline creates
   * nothing) and each period after, at `terms`' price and period; the webhooks move our row.
   */
  createSubscription(
    db: Database,
    user: LocalUser,
    options: { plan: PackageRow; terms: PlanTerms; paymentMethodId: string; subscriptionId: string },
  ): Promise<string>;
  /** Returns cancel_at_period_end as Stripe now reports it. */
  setCancelAtPeriodEnd(stripeSubscriptionId: string, cancel: boolean): Promise<boolean>;
  /** Verifies and applies one webhook delivery; a redelivered event id is acknowledged without effect. */
  handleWebhook(
    db: Database,
    rawBody: Buffer,
    signature: string | undefined,
  ): Promise<{ type: string; duplicate: boolean }>;
}

/** Connect events (payouts, modules/payouts) applied in the webhook's transaction. */
export interface ConnectEventHandler {
  types: Set<string>;
  /** Returns work to run once the event's transaction has committed. */
  apply(tx: Database, event: Stripe.Event): Promise<(() => Promise<void>) | undefined>;
}
