import { AppPerformanceSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import type { AnalyticsWindow } from "../analytics-window";
import { applicationAnalyticsQueryKey } from "./analytics-keys";

/** `GET /app/{slug}/analytics/performance/?days=`: success rate and response time per day. */
export const applicationPerformance = defineQuery({
  key: (slug: string, days: AnalyticsWindow) =>
    [...applicationAnalyticsQueryKey(slug), "performance", days] as const,
  fetch: (slug, days, signal) =>
    apiRequest(`/app/${encodeURIComponent(slug)}/analytics/performance/?days=${days}`, {
      schema: AppPerformanceSchema,
      signal,
    }),
});
