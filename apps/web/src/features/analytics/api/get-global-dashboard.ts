import { GlobalDashboardSchema } from "@promptmint/contracts";
import { globalDashboardQueryKey } from "../../../lib/analytics-keys";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/** `GET /analytics/dashboard/?days=`: every application of the caller over the window. */
const globalDashboard = defineQuery({
  key: globalDashboardQueryKey,
  fetch: (days, signal) =>
    apiRequest(`/analytics/dashboard/?days=${days}`, { schema: GlobalDashboardSchema, signal }),
});

export const useGlobalDashboard = globalDashboard.useQuery;
