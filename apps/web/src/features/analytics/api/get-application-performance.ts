import { type AppPerformance, AppPerformanceSchema } from "@promptmint/contracts";
import { queryOptions } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import type { AnalyticsWindow } from "../analytics-window";
import { applicationAnalyticsQueryKey } from "./analytics-keys";

/** `GET /app/{slug}/analytics/performance/?days=`: success rate and response time per day. */
export function fetchApplicationPerformance(
  slug: string,
  days: AnalyticsWindow,
  signal?: AbortSignal,
): Promise<AppPerformance> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/analytics/performance/?days=${days}`, {
    schema: AppPerformanceSchema,
    signal,
  });
}

export function applicationPerformanceQueryOptions(slug: string, days: AnalyticsWindow) {
  return queryOptions({
    queryKey: [...applicationAnalyticsQueryKey(slug), "performance", days] as const,
    queryFn: ({ signal }) => fetchApplicationPerformance(slug, days, signal),
  });
}
