import { AppUsageAnalyticsSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import type { AnalyticsWindow } from "../analytics-window";
import { applicationAnalyticsQueryKey } from "./analytics-keys";

/** `GET /app/{slug}/analytics/usage/?days=`: invocations, users and revenue per day. */
export const applicationUsage = defineQuery({
  key: (slug: string, days: AnalyticsWindow) =>
    [...applicationAnalyticsQueryKey(slug), "usage", days] as const,
  fetch: (slug, days, signal) =>
    apiRequest(`/app/${encodeURIComponent(slug)}/analytics/usage/?days=${days}`, {
      schema: AppUsageAnalyticsSchema,
      signal,
    }),
});
