import { RecentInvocationsSchema } from "@promptmint/contracts";
import { applicationAnalyticsQueryKey } from "../../../lib/analytics-keys";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/** SPEC §9: the per-application screen lists the latest 20 invocations, whatever the window. */
const RECENT_INVOCATIONS_LIMIT = 20;

/** `GET /app/{slug}/analytics/invocations/?limit=20`, newest first. */
export const recentInvocations = defineQuery({
  key: (slug: string) =>
    [...applicationAnalyticsQueryKey(slug), "invocations", RECENT_INVOCATIONS_LIMIT] as const,
  fetch: (slug, signal) =>
    apiRequest(`/app/${encodeURIComponent(slug)}/analytics/invocations/?limit=${RECENT_INVOCATIONS_LIMIT}`, {
      schema: RecentInvocationsSchema,
      signal,
    }),
});
