import { AuditEntrySchema } from "@promptmint/contracts";
import { z } from "zod";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

export const auditQueryKey = ["admin-audit"] as const;

const AuditListSchema = z.object({ entries: z.array(AuditEntrySchema) });

/** `GET /admin/audit`: the latest 50 entries of the audit log, newest first. */
const auditEntries = defineQuery({
  key: () => auditQueryKey,
  fetch: (signal) => apiRequest("/admin/audit?limit=50", { schema: AuditListSchema, signal }),
  retry: false,
});

export const useAuditEntries = auditEntries.useQuery;
