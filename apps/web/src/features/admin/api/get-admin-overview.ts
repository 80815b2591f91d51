import { AdminOverviewSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/** Every overview query starts with this key; a suspension invalidates all of them. */
export const adminOverviewQueryKey = ["admin-overview"] as const;

/** `GET /admin/overview`: the platform's figures from `from` to `to` (ISO days, `to` exclusive). */
const adminOverview = defineQuery({
  key: (from: string, to: string) => [...adminOverviewQueryKey, from, to] as const,
  fetch: (from, to, signal) =>
    apiRequest(`/admin/overview?from=${from}&to=${to}`, { schema: AdminOverviewSchema, signal }),
  retry: false,
});

export const useAdminOverview = adminOverview.useQuery;
