import { SubscriptionListSchema } from "@promptmint/contracts";
import { apiRequest } from "../api-client";
import { defineQuery } from "../define-query";
import { billingQueryKey } from "./billing-keys";

export function subscriptionsQueryKey(appSlug: string) {
  return [...billingQueryKey(appSlug), "subscriptions"] as const;
}

/** `GET /app/{app}/subscriptions/`: the caller's own subscriptions to this app. */
const subscriptions = defineQuery({
  key: subscriptionsQueryKey,
  fetch: (appSlug, signal) =>
    apiRequest(`/app/${encodeURIComponent(appSlug)}/subscriptions/`, {
      schema: SubscriptionListSchema,
      signal,
    }),
  // A card subscription is incomplete until Stripe's webhook reports its first invoice paid.
  refetchInterval: (query) =>
    query.state.data?.some((subscription) => subscription.status === "incomplete") ? 2000 : false,
});

export const useSubscriptions = subscriptions.useQuery;
export const subscriptionsQueryOptions = subscriptions.options;
