import { type EarningsHistory, EarningsHistorySchema } from "@promptmint/contracts";
import { useInfiniteQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { WALLET_STALE_TIME_MS, walletQueryKey } from "../../../lib/wallet-query";

/** Days per page of the earnings history. */
export const EARNINGS_PAGE_DAYS = 30;

/**
 * `GET /wallet/earnings/?days=&cursor=`: a creator's earnings, one line per UTC day and kind
 * (issue 32). Under the wallet's key, so whatever refreshes the wallet refreshes it too.
 */
export function fetchEarningsHistory(cursor: string | null, signal?: AbortSignal): Promise<EarningsHistory> {
  const query = `?days=${EARNINGS_PAGE_DAYS}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
  return apiRequest(`/wallet/earnings/${query}`, { schema: EarningsHistorySchema, signal });
}

export function useEarningsHistory() {
  return useInfiniteQuery({
    queryKey: [...walletQueryKey, "earnings"] as const,
    queryFn: ({ pageParam, signal }) => fetchEarningsHistory(pageParam, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    staleTime: WALLET_STALE_TIME_MS,
  });
}
