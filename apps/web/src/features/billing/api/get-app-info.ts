import { AppInfoSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { billingQueryKey } from "../../../lib/billing/billing-keys";
import { defineQuery } from "../../../lib/define-query";

/**
 * `GET /app/{slug}/info` (Dify compatible): the name and description of any app the caller may
 * call. `GET /app/{slug}/` would answer 404 to anyone but the owner.
 */
const appInfo = defineQuery({
  key: (appSlug: string) => [...billingQueryKey(appSlug), "info"] as const,
  fetch: (appSlug, signal) =>
    apiRequest(`/app/${encodeURIComponent(appSlug)}/info`, { schema: AppInfoSchema, signal }),
});

export const useAppInfo = appInfo.useQuery;
export const appInfoOptions = appInfo.options;
