import { type WalletStatement, WalletStatementSchema } from "@promptmint/contracts";
import { useInfiniteQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { WALLET_STALE_TIME_MS, walletQueryKey } from "../../../lib/wallet-query";

/** Lines per page of the statement. */
export const STATEMENT_PAGE_SIZE = 25;

/**
 * `GET /wallet/statement/?limit=&cursor=`: paid calls per app and day, top-ups, plan payments and
 * refunds, newest first (docs/decisions/029). Under the wallet's key, so whatever refreshes the
 * wallet (a top-up, a plan, a call) refreshes it too.
 */
export function fetchWalletStatement(cursor: string | null, signal?: AbortSignal): Promise<WalletStatement> {
  const query = `?limit=${STATEMENT_PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
  return apiRequest(`/wallet/statement/${query}`, { schema: WalletStatementSchema, signal });
}

export function useWalletStatement() {
  return useInfiniteQuery({
    queryKey: [...walletQueryKey, "statement"] as const,
    queryFn: ({ pageParam, signal }) => fetchWalletStatement(pageParam, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    staleTime: WALLET_STALE_TIME_MS,
  });
}
