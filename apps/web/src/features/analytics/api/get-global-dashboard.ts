import { type GlobalDashboard, GlobalDashboardSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import type { AnalyticsWindow } from "../analytics-window";
import { globalDashboardQueryKey } from "./analytics-keys";

/** `GET /analytics/dashboard/?days=`: every application of the caller over the window. */
export function fetchGlobalDashboard(days: AnalyticsWindow, signal?: AbortSignal): Promise<GlobalDashboard> {
  return apiRequest(`/analytics/dashboard/?days=${days}`, { schema: GlobalDashboardSchema, signal });
}

export function globalDashboardQueryOptions(days: AnalyticsWindow) {
  return queryOptions({
    queryKey: globalDashboardQueryKey(days),
    queryFn: ({ signal }) => fetchGlobalDashboard(days, signal),
  });
}

export function useGlobalDashboard(days: AnalyticsWindow) {
  return useQuery(globalDashboardQueryOptions(days));
}
