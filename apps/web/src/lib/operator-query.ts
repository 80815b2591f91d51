import { useQuery } from "@tanstack/react-query";
import { useAuth } from "react-oidc-context";
import { z } from "zod";
import { apiRequest } from "./api-client";

/**
 * Whether the signed-in person is one of the platform's operators (the role granted by `npm run admin -- grant`): the server
 * answers `GET /admin/access` with 200 for them and 403 for everyone else. Only the nav item
 * depends on it; the API refuses /admin's data to anyone else regardless.
 */
export function useIsOperator(): boolean {
  const auth = useAuth();
  const access = useQuery({
    queryKey: ["admin-access"],
    queryFn: ({ signal }) =>
      apiRequest("/admin/access", { schema: z.object({ admin: z.literal(true) }), signal }),
    enabled: auth.isAuthenticated,
    retry: false,
    staleTime: 5 * 60_000,
  });
  return access.data?.admin === true;
}
