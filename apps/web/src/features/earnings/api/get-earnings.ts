import { type EarningsSummary, EarningsSummarySchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";

/** A payout, the onboarding's return and the sandbox clock each change the summary: they invalidate this key. */
export const earningsQueryKey = ["payouts"] as const;

/** `GET /payouts/`: what the creator earned, what can be paid out and when, their payouts. */
export function fetchEarnings(signal?: AbortSignal): Promise<EarningsSummary> {
  return apiRequest("/payouts/", { schema: EarningsSummarySchema, signal });
}

export function earningsQueryOptions() {
  return queryOptions({ queryKey: earningsQueryKey, queryFn: ({ signal }) => fetchEarnings(signal) });
}

export function useEarnings() {
  return useQuery(earningsQueryOptions());
}
