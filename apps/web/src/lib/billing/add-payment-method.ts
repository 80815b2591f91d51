import {
  type CreatePaymentMethodSchema,
  type PaymentMethod,
  PaymentMethodSchema,
} from "@promptmint/contracts";
import type { z } from "zod";
import { apiRequest } from "../api-client";
import { useInvalidatingMutation } from "../invalidating-mutation";
import { confirmSandboxPayment, paymentFailureMessage, type SandboxCard } from "../sandbox-payments";
import { PaymentNotCompletedError, runStep } from "./billing-errors";
import { createAppPaymentIntent } from "./create-payment-intent";
import { paymentMethodsPath, paymentMethodsQueryKey } from "./list-payment-methods";

export const SETUP_FAILED = "Failed to setup payment method";
const CREATE_FAILED = "Failed to create payment method";

/** `POST /app/{app}/payment-methods/`: saves the card the gateway has just set up. */
export function savePaymentMethod(appSlug: string, body: object): Promise<PaymentMethod> {
  return runStep(CREATE_FAILED, () =>
    apiRequest(paymentMethodsPath(appSlug), { method: "POST", body, schema: PaymentMethodSchema }),
  );
}

export type CreatePaymentMethodBody = z.input<typeof CreatePaymentMethodSchema> & { card: SandboxCard };

/**
 * SPEC §7: the card is set up first (a payment intent of amount 0 in usd, confirmed with the
 * card), then saved with its billing address; the server keeps only brand, last 4 and expiry.
 */
export async function addPaymentMethod(
  appSlug: string,
  body: CreatePaymentMethodBody,
): Promise<PaymentMethod> {
  const setup = await runStep(SETUP_FAILED, async () => {
    const intent = await createAppPaymentIntent(appSlug, { amount: 0, currency: "usd" });
    return confirmSandboxPayment(intent.client_secret, body.card);
  });
  const failure = paymentFailureMessage(setup);
  if (failure) throw new PaymentNotCompletedError(failure);
  return savePaymentMethod(appSlug, body);
}

export function useAddPaymentMethod(appSlug: string) {
  return useInvalidatingMutation(
    (body: CreatePaymentMethodBody) => addPaymentMethod(appSlug, body),
    paymentMethodsQueryKey(appSlug),
  );
}
