import { type Subscription, SubscriptionListSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { billingQueryKey } from "./billing-keys";

export function subscriptionsQueryKey(appSlug: string) {
  return [...billingQueryKey(appSlug), "subscriptions"] as const;
}

/** `GET /app/{app}/subscriptions/`: the caller's own subscriptions to this app. */
export function fetchSubscriptions(appSlug: string, signal?: AbortSignal): Promise<Subscription[]> {
  return apiRequest(`/app/${encodeURIComponent(appSlug)}/subscriptions/`, {
    schema: SubscriptionListSchema,
    signal,
  });
}

export function subscriptionsQueryOptions(appSlug: string) {
  return queryOptions({
    queryKey: subscriptionsQueryKey(appSlug),
    queryFn: ({ signal }) => fetchSubscriptions(appSlug, signal),
    // A card subscription is incomplete until Stripe's webhook reports its first invoice paid.
    refetchInterval: (query) =>
      query.state.data?.some((subscription) => subscription.status === "incomplete") ? 2000 : false,
  });
}

export function useSubscriptions(appSlug: string) {
  return useQuery(subscriptionsQueryOptions(appSlug));
}
