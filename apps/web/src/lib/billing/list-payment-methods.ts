import { PaymentMethodListSchema } from "@promptmint/contracts";
import { apiRequest } from "../api-client";
import { defineQuery } from "../define-query";
import { billingQueryKey } from "./billing-keys";

export function paymentMethodsQueryKey(appSlug: string) {
  return [...billingQueryKey(appSlug), "payment-methods"] as const;
}

export function paymentMethodsPath(appSlug: string): string {
  return `/app/${encodeURIComponent(appSlug)}/payment-methods/`;
}

/** `GET /app/{app}/payment-methods/`: the caller's saved cards, the default first. */
const paymentMethods = defineQuery({
  key: paymentMethodsQueryKey,
  fetch: (appSlug, signal) =>
    apiRequest(paymentMethodsPath(appSlug), { schema: PaymentMethodListSchema, signal }),
});

export const paymentMethodsQueryOptions = paymentMethods.options;
export const usePaymentMethods = paymentMethods.useQuery;
