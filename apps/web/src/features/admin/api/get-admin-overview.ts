import { type AdminOverview, AdminOverviewSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";

/** Every overview query starts with this key; a suspension invalidates all of them. */
export const adminOverviewQueryKey = ["admin-overview"] as const;

/** `GET /admin/overview`: the platform's figures from `from` to `to` (ISO days, `to` exclusive). */
export function fetchAdminOverview(from: string, to: string, signal?: AbortSignal): Promise<AdminOverview> {
  return apiRequest(`/admin/overview?from=${from}&to=${to}`, { schema: AdminOverviewSchema, signal });
}

export function adminOverviewQueryOptions(from: string, to: string) {
  return queryOptions({
    queryKey: [...adminOverviewQueryKey, from, to],
    queryFn: ({ signal }) => fetchAdminOverview(from, to, signal),
    retry: false,
  });
}

export function useAdminOverview(from: string, to: string) {
  return useQuery(adminOverviewQueryOptions(from, to));
}
