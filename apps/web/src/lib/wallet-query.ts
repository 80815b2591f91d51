import { type Wallet, WalletSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "./api-client";

// The wallet is read by the wallet screen and by plan checkout (paying from the balance), so its
// fetcher and cache key live here, like the applications'. Payments invalidate this key.

export const walletQueryKey = ["wallet"] as const;

/** `GET /wallet/`: the caller's balance, held amount, earnings and latest movements. */
export function fetchWallet(signal?: AbortSignal): Promise<Wallet> {
  return apiRequest("/wallet/", { schema: WalletSchema, signal });
}

export function walletQueryOptions() {
  return queryOptions({ queryKey: walletQueryKey, queryFn: ({ signal }) => fetchWallet(signal) });
}

export function useWallet(options: { enabled?: boolean } = {}) {
  return useQuery({ ...walletQueryOptions(), enabled: options.enabled ?? true });
}
