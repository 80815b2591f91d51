import { OnboardingLinkSchema } from "@promptmint/contracts";
import { useMutation } from "@tanstack/react-query";
import type { z } from "zod";
import { apiRequest } from "../../../lib/api-client";

/** `POST /payouts/onboarding`: a link to Stripe's payout setup, which returns to /earnings. */
export function startPayoutOnboarding(): Promise<z.infer<typeof OnboardingLinkSchema>> {
  return apiRequest("/payouts/onboarding", { method: "POST", schema: OnboardingLinkSchema });
}

export function useStartPayoutOnboarding() {
  return useMutation({ mutationFn: startPayoutOnboarding });
}
