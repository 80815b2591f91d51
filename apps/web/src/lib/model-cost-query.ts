import {
  type CostEstimate,
  type CostEstimateRequest,
  CostEstimateSchema,
  type ModelKeyList,
  ModelKeyListSchema,
  type ModelKeyProvider,
  ModelKeySchema,
} from "@promptmint/contracts";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "./api-client";

/**
 * `POST /model-prices/estimate`: the worst-case model cost of one call and the margin at a price,
 * computed by the server from the same price table and tokenizer as the price guard (doc 026).
 */
export function useCostEstimate(request: CostEstimateRequest | null) {
  return useQuery({
    queryKey: ["model-prices", "estimate", request] as const,
    queryFn: ({ signal }): Promise<CostEstimate> =>
      apiRequest("/model-prices/estimate", {
        method: "POST",
        body: request,
        schema: CostEstimateSchema,
        signal,
      }),
    enabled: request !== null,
    placeholderData: keepPreviousData,
    staleTime: 60_000,
  });
}

export const modelKeysQueryKey = ["model-keys"] as const;

/** `GET /model-keys`: the creator's own keys, masked. */
export function useModelKeys() {
  return useQuery({
    queryKey: modelKeysQueryKey,
    queryFn: ({ signal }): Promise<ModelKeyList> =>
      apiRequest("/model-keys", { schema: ModelKeyListSchema, signal }),
  });
}

export function useSaveModelKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ provider, apiKey }: { provider: ModelKeyProvider; apiKey: string }) =>
      apiRequest(`/model-keys/${provider}`, {
        method: "PUT",
        body: { api_key: apiKey },
        schema: ModelKeySchema,
      }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: modelKeysQueryKey }),
  });
}

export function useDeleteModelKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (provider: ModelKeyProvider) => apiRequest(`/model-keys/${provider}`, { method: "DELETE" }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: modelKeysQueryKey }),
  });
}
