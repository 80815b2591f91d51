import type { Organization } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { apiRequest } from "./api-client";

// The signed-in person's organizations are read by the nav's account switcher and by the
// organizations pages, so their fetcher and key live here, like the profile's.

/** Every organization query starts with this key: a change to one refreshes the switcher too. */
export const organizationsQueryKey = ["organizations"] as const;

/** The schema loads when first needed: the nav is on every page, zod is not (bench/web). */
async function loadOrganizationListSchema() {
  return (await import("@promptmint/contracts/organizations")).OrganizationListSchema;
}

/** `GET /organizations/`: the organizations the signed-in person belongs to, with their role in each. */
export async function fetchOrganizations(signal?: AbortSignal): Promise<Organization[]> {
  return apiRequest("/organizations/", { schema: await loadOrganizationListSchema(), signal });
}

export function organizationListQueryOptions() {
  return {
    queryKey: [...organizationsQueryKey, "list"] as const,
    queryFn: ({ signal }: { signal: AbortSignal }) => fetchOrganizations(signal),
  };
}

export function useOrganizations(options: { enabled?: boolean } = {}) {
  return useQuery({ ...organizationListQueryOptions(), enabled: options.enabled ?? true });
}
