import {
  type CreateInvitation,
  type Invitation,
  InvitationListSchema,
  InvitationPreviewSchema,
  InvitationSchema,
} from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { organizationsQueryKey } from "../../../lib/organizations-query";
import { organizationQueryKey } from "./organization";

const invitationsPath = (organizationId: string) =>
  `/organizations/${encodeURIComponent(organizationId)}/invitations/`;

/** `GET /organizations/{id}/invitations/`: the organization's invitations, pending ones first. */
const invitations = defineQuery({
  key: (organizationId: string) => [...organizationQueryKey(organizationId), "invitations"] as const,
  fetch: (organizationId, signal) =>
    apiRequest(invitationsPath(organizationId), { schema: InvitationListSchema, signal }),
});

export const useInvitations = invitations.useQuery;

/** `POST /organizations/{id}/invitations/`: emails the address a link to join with the role. */
export function createInvitation({
  organizationId,
  invitation,
}: {
  organizationId: string;
  invitation: CreateInvitation;
}): Promise<Invitation> {
  return apiRequest(invitationsPath(organizationId), {
    method: "POST",
    body: invitation,
    schema: InvitationSchema,
  });
}

export function useCreateInvitation(organizationId: string) {
  return useInvalidatingMutation(createInvitation, organizationQueryKey(organizationId));
}

/** `DELETE /organizations/{id}/invitations/{invitation_id}/`: the link stops working. */
export async function revokeInvitation({
  organizationId,
  invitationId,
}: {
  organizationId: string;
  invitationId: string;
}) {
  await apiRequest(`${invitationsPath(organizationId)}${encodeURIComponent(invitationId)}/`, {
    method: "DELETE",
  });
}

export function useRevokeInvitation(organizationId: string) {
  return useInvalidatingMutation(revokeInvitation, organizationQueryKey(organizationId));
}

const invitationPath = (token: string) => `/invitations/${encodeURIComponent(token)}/`;

/** `GET /invitations/{token}/`: what the link offers the signed-in person who holds it. */
const invitationPreview = defineQuery({
  key: (token: string) => ["invitation", token] as const,
  fetch: (token, signal) => apiRequest(invitationPath(token), { schema: InvitationPreviewSchema, signal }),
});

export const useInvitationPreview = invitationPreview.useQuery;

/** `POST /invitations/{token}/accept/`: the signed-in person joins with the invited role. */
export async function acceptInvitation(token: string): Promise<void> {
  await apiRequest(`${invitationPath(token)}accept/`, { method: "POST" });
}

export function useAcceptInvitation() {
  return useInvalidatingMutation(acceptInvitation, organizationsQueryKey);
}
