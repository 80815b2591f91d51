import { AccountSubscriptionListSchema } from "@promptmint/contracts";
import { apiRequest } from "../api-client";
import { defineQuery } from "../define-query";

/** The caller's subscriptions across apps; every subscribe, cancel or resume invalidates it. */
export const accountSubscriptionsQueryKey = ["account-subscriptions"] as const;

/** `GET /subscriptions/`: every subscription of the signed-in person, newest first, with its app's name. */
const accountSubscriptions = defineQuery({
  key: () => accountSubscriptionsQueryKey,
  fetch: (signal) => apiRequest("/subscriptions/", { schema: AccountSubscriptionListSchema, signal }),
  // A card subscription is incomplete until Stripe's webhook reports its first invoice paid.
  refetchInterval: (query) =>
    query.state.data?.some((subscription) => subscription.status === "incomplete") ? 2000 : false,
});

export const useAccountSubscriptions = accountSubscriptions.useQuery;
