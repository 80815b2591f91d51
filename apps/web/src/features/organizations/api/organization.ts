import {
  type CreateOrganization,
  type Organization,
  OrganizationSchema,
  type UpdateOrganization,
} from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { organizationsQueryKey } from "../../../lib/organizations-query";

/** Every query about one organization sits under this key. */
export function organizationQueryKey(id: string) {
  return [...organizationsQueryKey, id] as const;
}

const path = (id: string) => `/organizations/${encodeURIComponent(id)}/`;

/** `GET /organizations/{id}/`: one of the caller's organizations with their role (404 for others). */
const organization = defineQuery({
  key: (id: string) => [...organizationQueryKey(id), "detail"] as const,
  fetch: (id, signal) => apiRequest(path(id), { schema: OrganizationSchema, signal }),
});

export const useOrganization = organization.useQuery;

/** `POST /organizations/`: answers 201 with the organization, the caller its owner. */
export function createOrganization(input: CreateOrganization): Promise<Organization> {
  return apiRequest("/organizations/", { method: "POST", body: input, schema: OrganizationSchema });
}

export function useCreateOrganization() {
  return useInvalidatingMutation(createOrganization, organizationsQueryKey);
}

/** `PATCH /organizations/{id}/`: name and billing details (manage only). */
export function updateOrganization({
  id,
  changes,
}: {
  id: string;
  changes: UpdateOrganization;
}): Promise<Organization> {
  return apiRequest(path(id), { method: "PATCH", body: changes, schema: OrganizationSchema });
}

export function useUpdateOrganization() {
  return useInvalidatingMutation(updateOrganization, organizationsQueryKey);
}
