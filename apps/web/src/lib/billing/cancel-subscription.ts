import { type Subscription, SubscriptionSchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../api-client";
import { accountSubscriptionsQueryKey } from "./list-account-subscriptions";
import { subscriptionsQueryKey } from "./list-subscriptions";

const subscriptionPath = (appSlug: string, id: string) =>
  `/app/${encodeURIComponent(appSlug)}/subscriptions/${encodeURIComponent(id)}/`;

/** `POST /app/{app}/subscriptions/{id}/cancel/`: stops renewal; the paid period runs to its end. */
export function cancelSubscription(appSlug: string, id: string): Promise<Subscription> {
  return apiRequest(`${subscriptionPath(appSlug, id)}cancel/`, {
    method: "POST",
    schema: SubscriptionSchema,
  });
}

/** `PATCH /app/{app}/subscriptions/{id}/` {cancel_at_period_end: false}: undoes a pending cancel. */
export function resumeSubscription(appSlug: string, id: string): Promise<Subscription> {
  return apiRequest(subscriptionPath(appSlug, id), {
    method: "PATCH",
    body: { cancel_at_period_end: false },
    schema: SubscriptionSchema,
  });
}

/** Cancels at period end, or resumes, a subscription to the app `appSlug`; both lists are read again. */
function useSubscriptionChange(change: (appSlug: string, id: string) => Promise<Subscription>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ appSlug, id }: { appSlug: string; id: string }) => change(appSlug, id),
    onSuccess: (_updated, { appSlug }) =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: subscriptionsQueryKey(appSlug) }),
        queryClient.invalidateQueries({ queryKey: accountSubscriptionsQueryKey }),
      ]),
  });
}

export const useCancelSubscription = () => useSubscriptionChange(cancelSubscription);
export const useResumeSubscription = () => useSubscriptionChange(resumeSubscription);
