import { CardElement, Elements, useElements, useStripe } from "@stripe/react-stripe-js";
import { type ReactNode, useCallback } from "react";
import {
  getStripePromise,
  STRIPE_ELEMENTS_OPTIONS,
  type StripeCard,
  useStripePublishableKey,
} from "../../lib/stripe";

/**
 * Around every payment form: Stripe Elements when the host runs Stripe. On the sandbox processor
 * it is given no Stripe, so nothing loads and `useStripeCard` answers null.
 */
export function PaymentElementsProvider({ children }: { children: ReactNode }) {
  const publishableKey = useStripePublishableKey();
  return (
    <Elements
      stripe={publishableKey ? getStripePromise(publishableKey) : null}
      options={STRIPE_ELEMENTS_OPTIONS}
    >
      {children}
    </Elements>
  );
}

/** Inside `PaymentElementsProvider`: the loaded Stripe with its mounted card field, or null (SPEC §5). */
export function useStripeCard(): () => StripeCard | null {
  const stripe = useStripe();
  const elements = useElements();
  return useCallback(() => {
    const card = elements?.getElement(CardElement);
    return stripe && card ? { stripe, card } : null;
  }, [stripe, elements]);
}

/** Stripe's card field (number, expiry, CVC and, unless an address is asked for, postcode). */
export function StripeCardField({
  disabled,
  hidePostalCode,
}: {
  disabled?: boolean;
  hidePostalCode?: boolean;
}) {
  return (
    <div
      data-testid="stripe-card-field"
      className="rounded-lg border border-slate-300 bg-white px-3 py-3 focus-within:border-brand-600 focus-within:ring-2 focus-within:ring-brand-600/20"
    >
      <CardElement
        options={{
          disabled,
          hidePostalCode,
          style: { base: { fontSize: "14px", color: "#0f172a", "::placeholder": { color: "#94a3b8" } } },
        }}
      />
    </div>
  );
}
