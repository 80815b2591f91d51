import { AppInfoSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { billingQueryKey } from "./billing-keys";

/**
 * `GET /app/{slug}/info` (Dify compatible): the name and description of any app the caller may
 * call. `GET /app/{slug}/` would answer 404 to anyone but the owner.
 */
export function fetchAppInfo(appSlug: string, signal?: AbortSignal) {
  return apiRequest(`/app/${encodeURIComponent(appSlug)}/info`, { schema: AppInfoSchema, signal });
}

export function appInfoQueryOptions(appSlug: string) {
  return queryOptions({
    queryKey: [...billingQueryKey(appSlug), "info"] as const,
    queryFn: ({ signal }) => fetchAppInfo(appSlug, signal),
  });
}

export function useAppInfo(appSlug: string) {
  return useQuery(appInfoQueryOptions(appSlug));
}
