import { type RecentInvocations, RecentInvocationsSchema } from "@promptmint/contracts";
import { queryOptions } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationAnalyticsQueryKey } from "./analytics-keys";

/** SPEC §9: the per-application screen lists the latest 20 invocations, whatever the window. */
export const RECENT_INVOCATIONS_LIMIT = 20;

/** `GET /app/{slug}/analytics/invocations/?limit=20`, newest first. */
export function fetchRecentInvocations(slug: string, signal?: AbortSignal): Promise<RecentInvocations> {
  return apiRequest(
    `/app/${encodeURIComponent(slug)}/analytics/invocations/?limit=${RECENT_INVOCATIONS_LIMIT}`,
    { schema: RecentInvocationsSchema, signal },
  );
}

export function recentInvocationsQueryOptions(slug: string) {
  return queryOptions({
    queryKey: [...applicationAnalyticsQueryKey(slug), "invocations", RECENT_INVOCATIONS_LIMIT] as const,
    queryFn: ({ signal }) => fetchRecentInvocations(slug, signal),
  });
}
