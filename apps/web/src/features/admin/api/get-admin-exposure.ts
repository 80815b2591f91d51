import { type AdminExposure, AdminExposureSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";

export const adminExposureQueryKey = ["admin-exposure"] as const;

/** `GET /admin/exposure`: what refunds and disputes of card top-ups could still cost (decision 045). */
export function fetchAdminExposure(signal?: AbortSignal): Promise<AdminExposure> {
  return apiRequest("/admin/exposure", { schema: AdminExposureSchema, signal });
}

export function adminExposureQueryOptions() {
  return queryOptions({
    queryKey: adminExposureQueryKey,
    queryFn: ({ signal }) => fetchAdminExposure(signal),
    retry: false,
  });
}

export function useAdminExposure() {
  return useQuery(adminExposureQueryOptions());
}
