import { useQuery } from "@tanstack/react-query";
import { useAuth } from "react-oidc-context";
import { z } from "zod";
import { apiRequest } from "./api-client";
import { defineQuery } from "./define-query";

const AdminAccessSchema = z.object({ admin: z.literal(true) });

/**
 * `GET /admin/access`: 200 for one of the platform's operators (the role granted by
 * `npm run admin -- grant`), 403 (with the reason) for everyone else. The nav item and the admin
 * page read this one query, so they share one answer; the API refuses /admin's data to anyone
 * else regardless.
 */
const adminAccess = defineQuery({
  key: () => ["admin-access"] as const,
  fetch: (signal) => apiRequest("/admin/access", { schema: AdminAccessSchema, signal }),
  retry: false,
});

/** The admin page: shows the server's reason when access is refused. */
export const useAdminAccess = adminAccess.useQuery;

/** Whether the signed-in person is an operator: only the nav item depends on it. */
export function useIsOperator(): boolean {
  const auth = useAuth();
  const access = useQuery({ ...adminAccess.options(), enabled: auth.isAuthenticated, staleTime: 5 * 60_000 });
  return access.data?.admin === true;
}
