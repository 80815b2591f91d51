import { WalletSchema } from "@promptmint/contracts";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "./api-client";
import { defineQuery } from "./define-query";

// The wallet is read by the wallet screen and by plan checkout (paying from the balance), so its
// fetcher and cache key live here, like the applications'. Payments invalidate this key.

export const walletQueryKey = ["wallet"] as const;

/**
 * The balance moves where this tab cannot see it (calls with API keys, calls that earn a creator
 * money), so a screen showing the wallet reads it afresh on every visit: the app-wide 30 s
 * freshness would show the balance of the last visit after in-app navigation.
 */
export const WALLET_STALE_TIME_MS = 0;

/** `GET /wallet/`: the caller's balance, held amount, earnings and latest movements. */
const wallet = defineQuery({
  key: () => walletQueryKey,
  fetch: (signal) => apiRequest("/wallet/", { schema: WalletSchema, signal }),
  staleTime: WALLET_STALE_TIME_MS,
});

/** After a call that may have been paid from the wallet: every wallet figure is read again. */
export function useRefreshWalletAfterCall() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: walletQueryKey });
}

export function useWallet(options: { enabled?: boolean } = {}) {
  return useQuery({ ...wallet.options(), enabled: options.enabled ?? true });
}
