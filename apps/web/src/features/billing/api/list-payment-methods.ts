import { type PaymentMethod, PaymentMethodListSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { billingQueryKey } from "./billing-keys";

export function paymentMethodsQueryKey(appSlug: string) {
  return [...billingQueryKey(appSlug), "payment-methods"] as const;
}

export function paymentMethodsPath(appSlug: string): string {
  return `/app/${encodeURIComponent(appSlug)}/payment-methods/`;
}

/** `GET /app/{app}/payment-methods/`: the caller's saved cards, the default first. */
export function fetchPaymentMethods(appSlug: string, signal?: AbortSignal): Promise<PaymentMethod[]> {
  return apiRequest(paymentMethodsPath(appSlug), { schema: PaymentMethodListSchema, signal });
}

export function paymentMethodsQueryOptions(appSlug: string) {
  return queryOptions({
    queryKey: paymentMethodsQueryKey(appSlug),
    queryFn: ({ signal }) => fetchPaymentMethods(appSlug, signal),
  });
}

export function usePaymentMethods(appSlug: string) {
  return useQuery(paymentMethodsQueryOptions(appSlug));
}
