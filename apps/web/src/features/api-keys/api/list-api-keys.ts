import { type ApiKey, ApiKeyListSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";

export const apiKeysQueryKey = ["api-keys"] as const;

/** `GET /keys/`: the caller's keys, without their secret part. */
export function fetchApiKeys(signal?: AbortSignal): Promise<ApiKey[]> {
  return apiRequest("/keys/", { schema: ApiKeyListSchema, signal });
}

export function apiKeysQueryOptions() {
  return queryOptions({ queryKey: apiKeysQueryKey, queryFn: ({ signal }) => fetchApiKeys(signal) });
}

export function useApiKeys() {
  return useQuery(apiKeysQueryOptions());
}
