import { useQuery } from "@tanstack/react-query";
import { useAuth } from "react-oidc-context";
import { z } from "zod";
import { apiRequest } from "./api-client";
import { defineQuery } from "./define-query";

const AdminAccessSchema = z.object({ admin: z.literal(true) });
const RolesSchema = z.object({ roles: z.array(z.string()) });

/**
 * `GET /admin/access`: 200 for one of the platform's operators (the role granted by
 * `npm run admin -- grant`), 403 (with the reason) for everyone else: the admin page reads it to
 * say why. The API refuses /admin's data to anyone else regardless.
 */
const adminAccess = defineQuery({
  key: () => ["admin-access"] as const,
  fetch: (signal) => apiRequest("/admin/access", { schema: AdminAccessSchema, signal }),
  retry: false,
});

/** The admin page: shows the server's reason when access is refused. */
export const useAdminAccess = adminAccess.useQuery;

/**
 * `GET /auth/roles/`: the signed-in person's roles, 200 for everyone, so the nav item on every
 * page costs no refused request (and no console error) for the many who are not operators.
 */
const roles = defineQuery({
  key: () => ["roles"] as const,
  fetch: (signal) => apiRequest("/auth/roles/", { schema: RolesSchema, signal }),
});

/** Whether the signed-in person is an operator: only the nav item depends on it. */
export function useIsOperator(): boolean {
  const auth = useAuth();
  const access = useQuery({ ...roles.options(), enabled: auth.isAuthenticated, staleTime: 5 * 60_000 });
  return access.data?.roles.includes("operator") === true;
}
