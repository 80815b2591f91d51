import { type GatewayResponse, GatewayResponseSchema, type TryAppRequest } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { useRefreshWalletAfterCall } from "../../../lib/wallet-query";
import { trialKey } from "./trial";

/** `POST /explore/apps/{slug}/try`: one call as the signed-in user, paid like any call. */
export function tryExploreApp(slug: string, body: TryAppRequest): Promise<GatewayResponse> {
  return apiRequest(`/explore/apps/${encodeURIComponent(slug)}/try`, {
    method: "POST",
    body,
    schema: GatewayResponseSchema,
  });
}

export function useTryExploreApp(slug: string) {
  const refreshWallet = useRefreshWalletAfterCall();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: TryAppRequest) => tryExploreApp(slug, body),
    // The call was paid from the wallet (its balance changed) or by a free trial (its calls left).
    onSuccess: () =>
      Promise.all([refreshWallet(), queryClient.invalidateQueries({ queryKey: trialKey(slug) })]),
  });
}
