import type { Package, Subscription } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ApiClientError } from "../../../lib/api-client";
import { confirmStripeCardPayment, type StripeBillingDetails, type StripeCard } from "../../../lib/stripe";
import { walletQueryKey } from "../../../lib/wallet-query";
import { BillingStepError, PaymentNotCompletedError, runStep } from "./billing-errors";
import { createAppPaymentIntent } from "./create-payment-intent";
import { subscriptionsQueryKey } from "./list-subscriptions";
import { createSubscription, SUBSCRIBE_FAILED } from "./subscribe-to-plan";

/**
 * The server takes the payment once Stripe's webhook marked it succeeded, which can trail the
 * card confirmation by a moment: a 400 'not a completed payment' is retried after these waits.
 */
export const SUBSCRIBE_RETRY_DELAYS_MS = [1000, 2000, 3000] as const;

function isPaymentNotYetCompleted(error: unknown): boolean {
  return (
    error instanceof ApiClientError && error.status === 400 && /not a completed payment/i.test(error.message)
  );
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Plan checkout through Stripe (SPEC §7): a payment intent for the price × 100, confirmed by
 * Stripe with the card; only a succeeded payment goes on to create the subscription.
 */
export async function subscribeToPlanWithStripe(
  appSlug: string,
  plan: Package,
  card: StripeCard,
  billingDetails: StripeBillingDetails,
  retryDelaysMs: readonly number[] = SUBSCRIBE_RETRY_DELAYS_MS,
): Promise<Subscription> {
  const currency = plan.currency.toLowerCase();
  if (currency !== "usd")
    throw new BillingStepError(SUBSCRIBE_FAILED, new Error(`Plans in ${plan.currency} cannot be paid here`));
  const intent = await runStep(SUBSCRIBE_FAILED, () =>
    createAppPaymentIntent(appSlug, { amount: Math.round(plan.price * 100), currency, package_id: plan.id }),
  );
  const { failure } = await runStep(SUBSCRIBE_FAILED, () =>
    confirmStripeCardPayment(card, intent.client_secret, billingDetails),
  );
  if (failure) throw new PaymentNotCompletedError(failure);
  return runStep(SUBSCRIBE_FAILED, async () => {
    for (const delay of retryDelaysMs) {
      try {
        return await createSubscription(appSlug, { package_id: plan.id, payment_intent_id: intent.id });
      } catch (error) {
        if (!isPaymentNotYetCompleted(error)) throw error;
        await wait(delay);
      }
    }
    return createSubscription(appSlug, { package_id: plan.id, payment_intent_id: intent.id });
  });
}

export function useSubscribeToPlanWithStripe(appSlug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({
      plan,
      card,
      billingDetails,
    }: {
      plan: Package;
      card: StripeCard;
      billingDetails: StripeBillingDetails;
    }) => subscribeToPlanWithStripe(appSlug, plan, card, billingDetails),
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: subscriptionsQueryKey(appSlug) }),
        queryClient.invalidateQueries({ queryKey: walletQueryKey }),
      ]),
  });
}
