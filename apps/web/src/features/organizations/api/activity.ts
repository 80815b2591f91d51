import { AuditListSchema, OrganizationUsageSchema } from "@promptmint/contracts";
import { keepPreviousData } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { organizationQueryKey } from "./organization";

const organizationPath = (organizationId: string) => `/organizations/${encodeURIComponent(organizationId)}`;

/** `GET /organizations/{id}/audit/?page=`: who did what, newest first, a page at a time. */
const auditEvents = defineQuery({
  key: (organizationId: string, page: number) =>
    [...organizationQueryKey(organizationId), "audit", page] as const,
  fetch: (organizationId, page, signal) =>
    apiRequest(`${organizationPath(organizationId)}/audit/?page=${page}`, {
      schema: AuditListSchema,
      signal,
    }),
  // The previous page stays while the next loads: the list does not jump to "Loading".
  placeholderData: keepPreviousData,
});

export const useAuditEvents = auditEvents.useQuery;

/** `GET /organizations/{id}/usage/?month=YYYY-MM`: a UTC month's calls and charges by member, key and app. */
const usage = defineQuery({
  key: (organizationId: string, month: string) =>
    [...organizationQueryKey(organizationId), "usage", month] as const,
  fetch: (organizationId, month, signal) =>
    apiRequest(`${organizationPath(organizationId)}/usage/?month=${encodeURIComponent(month)}`, {
      schema: OrganizationUsageSchema,
      signal,
    }),
  placeholderData: keepPreviousData,
});

export const useOrganizationUsage = usage.useQuery;
