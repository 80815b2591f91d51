import { EarningsSummarySchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/** A payout, the onboarding's return and the sandbox clock each change the summary: they invalidate this key. */
export const earningsQueryKey = ["payouts"] as const;

/** `GET /payouts/`: what the creator earned, what can be paid out and when, their payouts. */
const earnings = defineQuery({
  key: () => earningsQueryKey,
  fetch: (signal) => apiRequest("/payouts/", { schema: EarningsSummarySchema, signal }),
});

export const useEarnings = earnings.useQuery;
