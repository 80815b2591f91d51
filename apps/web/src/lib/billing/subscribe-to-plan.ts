import {
  type CreateSubscriptionSchema,
  type DeviceWallet,
  type Package,
  type Subscription,
  SubscriptionSchema,
} from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { z } from "zod";
import { apiRequest } from "../api-client";
import { confirmSandboxPayment, paymentFailureMessage, type SandboxCard } from "../sandbox-payments";
import { walletQueryKey } from "../wallet-query";
import { BillingStepError, PaymentNotCompletedError, runStep } from "./billing-errors";
import { createAppPaymentIntent } from "./create-payment-intent";
import { accountSubscriptionsQueryKey } from "./list-account-subscriptions";
import { subscriptionsQueryKey } from "./list-subscriptions";

export const SUBSCRIBE_FAILED = "Failed to initiate subscription";

/** `saved`: a card saved earlier pays the first period (the sandbox has no recurring card billing). */
export type PlanPayment =
  | { method: "card"; card: SandboxCard }
  | { method: "saved"; paymentMethodId: string }
  /** Apple Pay or Google Pay for the first period (sandbox, decision 083); renewals from the wallet. */
  | { method: "device_wallet"; wallet: DeviceWallet }
  | { method: "wallet" };

/** `POST /app/{app}/subscriptions/`: with a payment_intent_id the card paid; without, the wallet pays. */
export function createSubscription(
  appSlug: string,
  body: z.input<typeof CreateSubscriptionSchema>,
): Promise<Subscription> {
  return apiRequest(`/app/${encodeURIComponent(appSlug)}/subscriptions/`, {
    method: "POST",
    body,
    schema: SubscriptionSchema,
  });
}

/**
 * Plan checkout (SPEC §7): a payment intent for the price × 100 in the plan's lowercase currency,
 * confirmed with the card; only a succeeded payment goes on to create the subscription.
 * Paying from the wallet creates the subscription directly (402 when the balance is short).
 */
export async function subscribeToPlan(
  appSlug: string,
  plan: Package,
  payment: PlanPayment,
): Promise<Subscription> {
  if (payment.method === "wallet") {
    return runStep(SUBSCRIBE_FAILED, () => createSubscription(appSlug, { package_id: plan.id }));
  }
  const currency = plan.currency.toLowerCase();
  // The contract takes usd only, as every plan is priced today.
  if (currency !== "usd")
    throw new BillingStepError(SUBSCRIBE_FAILED, new Error(`Plans in ${plan.currency} cannot be paid here`));
  const intent = await runStep(SUBSCRIBE_FAILED, () =>
    createAppPaymentIntent(appSlug, { amount: Math.round(plan.price * 100), currency, package_id: plan.id }),
  );
  const result = await runStep(SUBSCRIBE_FAILED, () =>
    confirmSandboxPayment(
      intent.client_secret,
      payment.method === "saved"
        ? { savedCardId: payment.paymentMethodId }
        : payment.method === "device_wallet"
          ? { wallet: payment.wallet }
          : payment.card,
    ),
  );
  const failure = paymentFailureMessage(result);
  if (failure) throw new PaymentNotCompletedError(failure);
  return runStep(SUBSCRIBE_FAILED, () =>
    createSubscription(appSlug, { package_id: plan.id, payment_intent_id: intent.id }),
  );
}

export function useSubscribeToPlan(appSlug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ plan, payment }: { plan: Package; payment: PlanPayment }) =>
      subscribeToPlan(appSlug, plan, payment),
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: subscriptionsQueryKey(appSlug) }),
        queryClient.invalidateQueries({ queryKey: accountSubscriptionsQueryKey }),
        queryClient.invalidateQueries({ queryKey: walletQueryKey }),
      ]),
  });
}
