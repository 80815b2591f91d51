import type { Stripe, StripeCardElement, StripeElementsOptions } from "@stripe/stripe-js";
import { loadStripe } from "@stripe/stripe-js/pure";
import { useRuntimeConfig } from "./runtime-config";
import { PAYMENT_NOT_COMPLETED } from "./sandbox-payments";

// Card payments through Stripe Elements (SPEC §7), used when the host runs Stripe: `GET /api/config`
// answers `sandbox.payments: false` with a publishable key. The sandbox flow is in sandbox-payments.ts.
// `@stripe/stripe-js/pure` loads Stripe.js only when `loadStripe` is first called, never on import.

/** After a succeeded top-up: the wallet is credited by Stripe's webhook, a moment later. */
export const PAYMENT_PENDING_CREDIT = "Payment received — your balance updates in a moment";

/** SPEC §7: the provider's stripe-style theme with primary colour #2563eb. */
export const STRIPE_ELEMENTS_OPTIONS: StripeElementsOptions = {
  appearance: { theme: "stripe", variables: { colorPrimary: "#2563eb" } },
};

const stripePromises = new Map<string, Promise<Stripe | null>>();

/** One `loadStripe` per publishable key for the life of the page. */
export function getStripePromise(publishableKey: string): Promise<Stripe | null> {
  let promise = stripePromises.get(publishableKey);
  if (!promise) {
    promise = loadStripe(publishableKey);
    stripePromises.set(publishableKey, promise);
  }
  return promise;
}

/** The publishable key when card payments go through Stripe; null on the sandbox processor. */
export function useStripePublishableKey(): string | null {
  const config = useRuntimeConfig();
  if (config.sandbox.payments) return null;
  return config.stripe_publishable_key || null;
}

/** A loaded Stripe and the mounted card field a payment is confirmed with. */
export interface StripeCard {
  stripe: Stripe;
  card: StripeCardElement;
}

export interface StripeBillingDetails {
  name: string;
  address: {
    line1: string;
    line2?: string;
    city: string;
    state?: string;
    postal_code: string;
    country: string;
  };
}

/** The billing address a form collected, as Stripe's billing_details. */
export function stripeBillingDetails(
  address: Pick<StripeBillingDetails, "name"> & StripeBillingDetails["address"],
): StripeBillingDetails {
  const { name, ...rest } = address;
  return {
    name,
    address: {
      line1: rest.line1,
      city: rest.city,
      postal_code: rest.postal_code,
      country: rest.country,
      ...(rest.line2 ? { line2: rest.line2 } : {}),
      ...(rest.state ? { state: rest.state } : {}),
    },
  };
}

/** Stripe's own message for a declined card; anything else that is not 'succeeded' reads SPEC §4's. */
function failureOf(error: { message?: string } | undefined): string {
  return error?.message?.trim() ? error.message : PAYMENT_NOT_COMPLETED;
}

/** Confirms a payment intent with the card; `failure` is null only when it succeeded. */
export async function confirmStripeCardPayment(
  { stripe, card }: StripeCard,
  clientSecret: string,
  billingDetails?: StripeBillingDetails,
): Promise<{ failure: string | null }> {
  const result = await stripe.confirmCardPayment(clientSecret, {
    payment_method: billingDetails ? { card, billing_details: billingDetails } : { card },
  });
  if (result.error) return { failure: failureOf(result.error) };
  if (result.paymentIntent?.status !== "succeeded") return { failure: PAYMENT_NOT_COMPLETED };
  return { failure: null };
}

/** Sets up the card for later payments; answers the saved Stripe payment method's id. */
export async function confirmStripeCardSetup(
  { stripe, card }: StripeCard,
  clientSecret: string,
  billingDetails: StripeBillingDetails,
): Promise<{ failure: string; paymentMethodId?: undefined } | { failure: null; paymentMethodId: string }> {
  const result = await stripe.confirmCardSetup(clientSecret, {
    payment_method: { card, billing_details: billingDetails },
  });
  if (result.error) return { failure: failureOf(result.error) };
  const intent = result.setupIntent;
  const method = intent?.payment_method;
  const paymentMethodId = typeof method === "string" ? method : method?.id;
  if (intent?.status !== "succeeded" || !paymentMethodId) return { failure: PAYMENT_NOT_COMPLETED };
  return { failure: null, paymentMethodId };
}
