import { AuditEntrySchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { z } from "zod";
import { apiRequest } from "../../../lib/api-client";

export const auditQueryKey = ["admin-audit"] as const;

const AuditListSchema = z.object({ entries: z.array(AuditEntrySchema) });

/** `GET /admin/audit`: the latest 50 entries of the audit log, newest first. */
export function fetchAuditEntries(signal?: AbortSignal): Promise<z.infer<typeof AuditListSchema>> {
  return apiRequest("/admin/audit?limit=50", { schema: AuditListSchema, signal });
}

export function auditEntriesQueryOptions() {
  return queryOptions({
    queryKey: auditQueryKey,
    queryFn: ({ signal }) => fetchAuditEntries(signal),
    retry: false,
  });
}

export function useAuditEntries() {
  return useQuery(auditEntriesQueryOptions());
}
