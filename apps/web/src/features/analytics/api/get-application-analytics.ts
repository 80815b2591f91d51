import {
  type AppPerformance,
  AppPerformanceSchema,
  type AppUsageAnalytics,
  AppUsageAnalyticsSchema,
  type RecentInvocations,
} from "@promptmint/contracts";
import { useQueries } from "@tanstack/react-query";
import { applicationAnalyticsQueryKey } from "../../../lib/analytics-keys";
import type { AnalyticsWindow } from "../../../lib/analytics-window";
import { apiRequest, type Parser } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { recentInvocations } from "./list-recent-invocations";

/** `GET /app/{slug}/analytics/{part}/?days=`: one part of the application's report over the window. */
function windowedReport<Report>(part: "usage" | "performance", schema: Parser<Report>) {
  return defineQuery({
    key: (slug: string, days: AnalyticsWindow) =>
      [...applicationAnalyticsQueryKey(slug), part, days] as const,
    fetch: (slug, days, signal) =>
      apiRequest(`/app/${encodeURIComponent(slug)}/analytics/${part}/?days=${days}`, { schema, signal }),
  });
}

/** Invocations, users and revenue per day. */
const applicationUsage = windowedReport("usage", AppUsageAnalyticsSchema);
/** Success rate and response time per day. */
const applicationPerformance = windowedReport("performance", AppPerformanceSchema);

export interface ApplicationAnalytics {
  usage: AppUsageAnalytics["summary"];
  /** Gross, platform fee, model cost and net over the window (docs/decisions/029). */
  figures: AppUsageAnalytics["figures"];
  /** The window per prompt version, newest first; adds up to `figures` (issue 31). */
  byVersion: AppUsageAnalytics["by_version"];
  performance: AppPerformance["performance"];
  recentInvocations: RecentInvocations["recent_invocations"];
}

/**
 * SPEC §7: once the application has loaded (`enabled`), its usage, performance and recent
 * invocations load in parallel; the screen shows them together, or fails as one.
 */
export function useApplicationAnalytics(
  slug: string,
  days: AnalyticsWindow,
  { enabled }: { enabled: boolean },
) {
  return useQueries({
    queries: [
      { ...applicationUsage.options(slug, days), enabled },
      { ...applicationPerformance.options(slug, days), enabled },
      { ...recentInvocations.options(slug), enabled },
    ],
    combine: ([usage, performance, invocations]) => {
      const data: ApplicationAnalytics | undefined =
        usage.data && performance.data && invocations.data
          ? {
              usage: usage.data.summary,
              figures: usage.data.figures,
              byVersion: usage.data.by_version,
              performance: performance.data.performance,
              recentInvocations: invocations.data.recent_invocations,
            }
          : undefined;
      return {
        data,
        isError: usage.isError || performance.isError || invocations.isError,
        error: usage.error ?? performance.error ?? invocations.error,
      };
    },
  });
}
