import { type AppUsage, AppUsageSchema } from "@promptmint/contracts";
import { useQueries } from "@tanstack/react-query";
import { noMoneyFigures } from "../../../components/ui/money-figures";
import { apiRequest } from "../../../lib/api-client";
import { applicationQueryKey } from "../../../lib/applications-query";
import { defineQuery } from "../../../lib/define-query";

/** SPEC §9: the default day window. */
export const USAGE_DAYS = 30;

const NO_USAGE: AppUsage = { total_invocations: 0, total_revenue: 0, figures: noMoneyFigures(USAGE_DAYS) };

/**
 * `GET /app/{slug}/analytics/usage/?days=30`. SPEC §8: a failure is only logged and the
 * figures show 0, so this never ends in an error state.
 */
async function fetchApplicationUsage(slug: string, signal: AbortSignal): Promise<AppUsage> {
  try {
    return await apiRequest(`/app/${encodeURIComponent(slug)}/analytics/usage/?days=${USAGE_DAYS}`, {
      schema: AppUsageSchema,
      signal,
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    console.warn(`[analytics] usage of ${slug} failed to load`, error);
    return NO_USAGE;
  }
}

const applicationUsage = defineQuery({
  key: (slug: string) => [...applicationQueryKey(slug), "usage", USAGE_DAYS] as const,
  fetch: fetchApplicationUsage,
});

export const useApplicationUsage = applicationUsage.useQuery;

/** The usage of every listed application, keyed by slug (missing until loaded). */
export function useApplicationsUsage(slugs: readonly string[]): Map<string, AppUsage> {
  return useQueries({
    queries: slugs.map((slug) => applicationUsage.options(slug)),
    combine: (results) => {
      const bySlug = new Map<string, AppUsage>();
      results.forEach((result, index) => {
        const slug = slugs[index];
        if (slug !== undefined && result.data) bySlug.set(slug, result.data);
      });
      return bySlug;
    },
  });
}
