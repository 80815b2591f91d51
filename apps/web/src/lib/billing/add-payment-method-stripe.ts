import type { CreatePaymentMethodSchema, PaymentMethod } from "@promptmint/contracts";
import type { z } from "zod";
import { useInvalidatingMutation } from "../invalidating-mutation";
import { confirmStripeCardSetup, type StripeCard, stripeBillingDetails } from "../stripe";
import { SETUP_FAILED, savePaymentMethod } from "./add-payment-method";
import { PaymentNotCompletedError, runStep } from "./billing-errors";
import { createAppPaymentIntent } from "./create-payment-intent";
import { paymentMethodsQueryKey } from "./list-payment-methods";

export type StripePaymentMethodBody = Pick<
  z.input<typeof CreatePaymentMethodSchema>,
  "billing_address" | "set_default"
> & { card: StripeCard };

/**
 * SPEC §7 through Stripe: a payment intent of amount 0 answers a SetupIntent's client_secret,
 * Stripe sets the card up with it, and the resulting payment method is saved with the address.
 */
export async function addPaymentMethodWithStripe(
  appSlug: string,
  { billing_address, set_default, card }: StripePaymentMethodBody,
): Promise<PaymentMethod> {
  const setup = await runStep(SETUP_FAILED, async () => {
    const intent = await createAppPaymentIntent(appSlug, { amount: 0, currency: "usd" });
    return confirmStripeCardSetup(card, intent.client_secret, stripeBillingDetails(billing_address));
  });
  if (setup.failure !== null) throw new PaymentNotCompletedError(setup.failure);
  const body = { billing_address, stripe_payment_method_id: setup.paymentMethodId, set_default };
  return savePaymentMethod(appSlug, body);
}

export function useAddPaymentMethodWithStripe(appSlug: string) {
  return useInvalidatingMutation(
    (body: StripePaymentMethodBody) => addPaymentMethodWithStripe(appSlug, body),
    paymentMethodsQueryKey(appSlug),
  );
}
