import { UsageExportReconcileSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/**
 * `GET /admin/usage-export/reconcile?days=N`: each export sink's progress, and per creator and UTC
 * day of the last N days the ledger's charged calls, the log's and each sink's export (decision 068).
 */
const usageExport = defineQuery({
  key: (days: number) => ["admin-usage-export", days] as const,
  fetch: (days, signal) =>
    apiRequest(`/admin/usage-export/reconcile?days=${days}`, { schema: UsageExportReconcileSchema, signal }),
  retry: false,
});

export const useUsageExport = usageExport.useQuery;
