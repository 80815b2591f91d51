import { type Subscription, SubscriptionSchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { subscriptionsQueryKey } from "./list-subscriptions";

/** `POST /app/{app}/subscriptions/{id}/cancel/`: stops renewal; the paid period runs to its end. */
export function cancelSubscription(appSlug: string, id: string): Promise<Subscription> {
  return apiRequest(`/app/${encodeURIComponent(appSlug)}/subscriptions/${encodeURIComponent(id)}/cancel/`, {
    method: "POST",
    schema: SubscriptionSchema,
  });
}

export function useCancelSubscription(appSlug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => cancelSubscription(appSlug, id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: subscriptionsQueryKey(appSlug) }),
  });
}
