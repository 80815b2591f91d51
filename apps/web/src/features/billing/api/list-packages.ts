import { type Package, PackageListSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { billingQueryKey } from "./billing-keys";

export function packagesQueryKey(appSlug: string) {
  return [...billingQueryKey(appSlug), "packages"] as const;
}

/** `GET /app/{app}/packages/`: the app's plans, withdrawn ones included (is_active false). */
export function fetchPackages(appSlug: string, signal?: AbortSignal): Promise<Package[]> {
  return apiRequest(`/app/${encodeURIComponent(appSlug)}/packages/`, { schema: PackageListSchema, signal });
}

export function packagesQueryOptions(appSlug: string) {
  return queryOptions({
    queryKey: packagesQueryKey(appSlug),
    queryFn: ({ signal }) => fetchPackages(appSlug, signal),
  });
}

export function usePackages(appSlug: string) {
  return useQuery(packagesQueryOptions(appSlug));
}
