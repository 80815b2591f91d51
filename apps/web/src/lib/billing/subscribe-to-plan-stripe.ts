import type { Package, Subscription } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { StripeCard } from "../stripe";
import { addPaymentMethodWithStripe, type StripePaymentMethodBody } from "./add-payment-method-stripe";
import { runStep } from "./billing-errors";
import { accountSubscriptionsQueryKey } from "./list-account-subscriptions";
import { paymentMethodsQueryKey } from "./list-payment-methods";
import { subscriptionsQueryKey } from "./list-subscriptions";
import { createSubscription, SUBSCRIBE_FAILED } from "./subscribe-to-plan";

/** A saved card, or a new one that Stripe sets up (and the server saves) before it is charged. */
export type StripePlanPayment =
  | { method: "saved"; paymentMethodId: string }
  | { method: "new"; card: StripeCard; billingAddress: StripePaymentMethodBody["billing_address"] };

/**
 * Plan checkout through Stripe Billing: the subscription is created on a saved card, which pays
 * this period and each one after it. Stripe's webhook activates it once the first invoice is paid,
 * so it may answer `incomplete` for a moment.
 */
export async function subscribeToPlanWithStripe(
  appSlug: string,
  plan: Package,
  payment: StripePlanPayment,
): Promise<Subscription> {
  const paymentMethodId =
    payment.method === "saved"
      ? payment.paymentMethodId
      : (
          await addPaymentMethodWithStripe(appSlug, {
            card: payment.card,
            billing_address: payment.billingAddress,
            set_default: false,
          })
        ).id;
  return runStep(SUBSCRIBE_FAILED, () =>
    createSubscription(appSlug, { package_id: plan.id, payment_method_id: paymentMethodId }),
  );
}

export function useSubscribeToPlanWithStripe(appSlug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ plan, payment }: { plan: Package; payment: StripePlanPayment }) =>
      subscribeToPlanWithStripe(appSlug, plan, payment),
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: subscriptionsQueryKey(appSlug) }),
        queryClient.invalidateQueries({ queryKey: accountSubscriptionsQueryKey }),
        queryClient.invalidateQueries({ queryKey: paymentMethodsQueryKey(appSlug) }),
      ]),
  });
}
