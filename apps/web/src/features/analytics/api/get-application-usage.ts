import { type AppUsageAnalytics, AppUsageAnalyticsSchema } from "@promptmint/contracts";
import { queryOptions } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import type { AnalyticsWindow } from "../analytics-window";
import { applicationAnalyticsQueryKey } from "./analytics-keys";

/** `GET /app/{slug}/analytics/usage/?days=`: invocations, users and revenue per day. */
export function fetchApplicationUsage(
  slug: string,
  days: AnalyticsWindow,
  signal?: AbortSignal,
): Promise<AppUsageAnalytics> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/analytics/usage/?days=${days}`, {
    schema: AppUsageAnalyticsSchema,
    signal,
  });
}

export function applicationUsageQueryOptions(slug: string, days: AnalyticsWindow) {
  return queryOptions({
    queryKey: [...applicationAnalyticsQueryKey(slug), "usage", days] as const,
    queryFn: ({ signal }) => fetchApplicationUsage(slug, days, signal),
  });
}
