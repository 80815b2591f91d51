import { PackageListSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { billingQueryKey } from "../../../lib/billing/billing-keys";
import { defineQuery } from "../../../lib/define-query";

export function packagesQueryKey(appSlug: string) {
  return [...billingQueryKey(appSlug), "packages"] as const;
}

/** `GET /app/{app}/packages/`: the app's plans, withdrawn ones included (is_active false). */
const packages = defineQuery({
  key: packagesQueryKey,
  fetch: (appSlug, signal) =>
    apiRequest(`/app/${encodeURIComponent(appSlug)}/packages/`, { schema: PackageListSchema, signal }),
});

export const usePackages = packages.useQuery;
