import { SponsoredCreditSchema, TrialOfferSchema } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { exploreQueryKey } from "./explore-keys";

export const trialKey = (slug: string) => [...exploreQueryKey, "trial", slug] as const;
const trialPath = (slug: string) => `/app/${encodeURIComponent(slug)}/trial/`;

/** `GET /app/{slug}/trial/`: whether the signed-in caller took the app's free trial, and what is left. */
const trial = defineQuery({
  key: trialKey,
  fetch: (slug, signal) => apiRequest(trialPath(slug), { schema: TrialOfferSchema, signal }),
  staleTime: 0,
});

/** The caller's trial of the app; asked only when someone is signed in (`enabled`). */
export function useTrial(slug: string, enabled: boolean) {
  return useQuery({ ...trial.options(slug), enabled });
}

/** `POST /app/{slug}/trial/`: starts the caller's free trial (once per person). */
export function useStartTrial(slug: string) {
  return useInvalidatingMutation(
    () => apiRequest(trialPath(slug), { method: "POST", schema: SponsoredCreditSchema }),
    trialKey(slug),
  );
}
