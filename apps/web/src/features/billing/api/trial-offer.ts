import { type TrialOffer, TrialOfferSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { billingQueryKey } from "../../../lib/billing/billing-keys";
import { defineQuery } from "../../../lib/define-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";

export function trialOfferQueryKey(appSlug: string) {
  return [...billingQueryKey(appSlug), "trial"] as const;
}

const trialPath = (appSlug: string) => `/app/${encodeURIComponent(appSlug)}/trial/`;

/** `GET /app/{app}/trial/`: the app's free trial (calls per consumer) and how many started it. */
const trialOffer = defineQuery({
  key: trialOfferQueryKey,
  fetch: (appSlug, signal) => apiRequest(trialPath(appSlug), { schema: TrialOfferSchema, signal }),
});

export const useTrialOffer = trialOffer.useQuery;

/** `PUT /app/{app}/trial/` (the owner): N free calls per consumer, paid from the owner's wallet; 0 ends it. */
export function saveTrialOffer(appSlug: string, trialCalls: number): Promise<TrialOffer> {
  return apiRequest(trialPath(appSlug), {
    method: "PUT",
    body: { trial_calls: trialCalls },
    schema: TrialOfferSchema,
  });
}

export function useSaveTrialOffer(appSlug: string) {
  return useInvalidatingMutation(
    (trialCalls: number) => saveTrialOffer(appSlug, trialCalls),
    trialOfferQueryKey(appSlug),
  );
}
