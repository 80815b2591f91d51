import type { DeviceWallet } from "@promptmint/contracts";
import { Elements, ExpressCheckoutElement, useElements, useStripe } from "@stripe/react-stripe-js";
import { Smartphone } from "lucide-react";
import { useState } from "react";
import { useRuntimeConfig } from "../../lib/runtime-config";
import { PAYMENT_NOT_COMPLETED } from "../../lib/sandbox-payments";
import { getStripePromise, STRIPE_ELEMENTS_OPTIONS, useStripePublishableKey } from "../../lib/stripe";
import type { PayWithChoice } from "./pay-with-option";

// SPEC §5's payment methods beside the card: Apple Pay and Google Pay (decision 083).
// - With Stripe: its Express Checkout Element, on the same payment intent a card would confirm
//   (the server creates intents with automatic payment methods). Stripe shows a wallet's button
//   only where the device and browser offer it; where none is offered, nothing is drawn.
// - On the sandbox processor: a 'Pay with' choice per wallet, confirmed like a test card
//   (`wallet: apple_pay`), so the flow can be tried and tested offline.

/** The sandbox's wallet choices, in the order checkout shows them. */
export const SANDBOX_WALLET_CHOICES: readonly (PayWithChoice & { value: DeviceWallet })[] = [
  { value: "apple_pay", icon: Smartphone, label: "Apple Pay", detail: "Pay with the wallet on your device" },
  {
    value: "google_pay",
    icon: Smartphone,
    label: "Google Pay",
    detail: "Pay with the wallet on your device",
  },
];

/** Whether a 'Pay with' value is a device wallet. */
export function isDeviceWallet(value: string): value is DeviceWallet {
  return value === "apple_pay" || value === "google_pay";
}

/** Whether this host offers the sandbox's device wallets as 'Pay with' choices. */
export function useSandboxWallets(): boolean {
  return useRuntimeConfig().sandbox.payments;
}

/** Stripe's own message for a refused wallet payment, or SPEC §4's. */
function failureOf(error: { message?: string } | undefined): string {
  return error?.message?.trim() ? error.message : PAYMENT_NOT_COMPLETED;
}

/**
 * Apple Pay and Google Pay buttons through Stripe, for a payment of `amountCents`. The intent is
 * created only once the buyer approves in their wallet (`createClientSecret`); `onOutcome` gets
 * null when the payment succeeded, else why not. Renders nothing without Stripe or an amount.
 */
export function StripeExpressCheckout({
  amountCents,
  createClientSecret,
  onOutcome,
}: {
  amountCents: number | null;
  createClientSecret: () => Promise<string>;
  onOutcome: (failure: string | null) => void;
}) {
  const publishableKey = useStripePublishableKey();
  if (!publishableKey || amountCents === null || amountCents <= 0) return null;
  return (
    <Elements
      stripe={getStripePromise(publishableKey)}
      options={{
        appearance: STRIPE_ELEMENTS_OPTIONS.appearance,
        mode: "payment",
        amount: amountCents,
        currency: "usd",
      }}
    >
      <ExpressButtons createClientSecret={createClientSecret} onOutcome={onOutcome} />
    </Elements>
  );
}

function ExpressButtons({
  createClientSecret,
  onOutcome,
}: {
  createClientSecret: () => Promise<string>;
  onOutcome: (failure: string | null) => void;
}) {
  const stripe = useStripe();
  const elements = useElements();
  const [offered, setOffered] = useState(true);
  if (!offered) return null;
  return (
    <div data-testid="express-checkout">
      <ExpressCheckoutElement
        options={{
          paymentMethods: {
            applePay: "always",
            googlePay: "always",
            link: "never",
            paypal: "never",
            amazonPay: "never",
          },
          buttonHeight: 44,
        }}
        onReady={({ availablePaymentMethods }) => setOffered(Boolean(availablePaymentMethods))}
        onConfirm={async () => {
          if (!stripe || !elements) return onOutcome(PAYMENT_NOT_COMPLETED);
          const submitted = await elements.submit();
          if (submitted.error) return onOutcome(failureOf(submitted.error));
          try {
            const clientSecret = await createClientSecret();
            const result = await stripe.confirmPayment({
              elements,
              clientSecret,
              confirmParams: { return_url: window.location.href },
              redirect: "if_required",
            });
            if (result.error) return onOutcome(failureOf(result.error));
            onOutcome(result.paymentIntent?.status === "succeeded" ? null : PAYMENT_NOT_COMPLETED);
          } catch (error) {
            onOutcome(error instanceof Error && error.message ? error.message : PAYMENT_NOT_COMPLETED);
          }
        }}
      />
      <p className="mt-3 text-center text-xs text-slate-500">or pay with a card</p>
    </div>
  );
}
