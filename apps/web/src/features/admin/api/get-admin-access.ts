import { queryOptions, useQuery } from "@tanstack/react-query";
import { z } from "zod";
import { apiRequest } from "../../../lib/api-client";

/** The nav item's query (lib/operator-query.ts) uses the same key: one answer for both. */
export const adminAccessQueryKey = ["admin-access"] as const;

const AdminAccessSchema = z.object({ admin: z.literal(true) });

/** `GET /admin/access`: 200 for an operator, 403 (with the reason) for everyone else. */
export function fetchAdminAccess(signal?: AbortSignal): Promise<z.infer<typeof AdminAccessSchema>> {
  return apiRequest("/admin/access", { schema: AdminAccessSchema, signal });
}

export function adminAccessQueryOptions() {
  return queryOptions({
    queryKey: adminAccessQueryKey,
    queryFn: ({ signal }) => fetchAdminAccess(signal),
    retry: false,
  });
}

export function useAdminAccess() {
  return useQuery(adminAccessQueryOptions());
}
