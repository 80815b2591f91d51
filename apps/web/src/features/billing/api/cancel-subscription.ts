import { type Subscription, SubscriptionSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { subscriptionsQueryKey } from "./list-subscriptions";

/** `POST /app/{app}/subscriptions/{id}/cancel/`: stops renewal; the paid period runs to its end. */
export function cancelSubscription(appSlug: string, id: string): Promise<Subscription> {
  return apiRequest(`/app/${encodeURIComponent(appSlug)}/subscriptions/${encodeURIComponent(id)}/cancel/`, {
    method: "POST",
    schema: SubscriptionSchema,
  });
}

export function useCancelSubscription(appSlug: string) {
  return useInvalidatingMutation(
    (id: string) => cancelSubscription(appSlug, id),
    subscriptionsQueryKey(appSlug),
  );
}
