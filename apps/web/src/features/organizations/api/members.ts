import { type Member, MemberListSchema, MemberSchema, type UpdateMember } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { organizationsQueryKey } from "../../../lib/organizations-query";
import { organizationQueryKey } from "./organization";

const membersPath = (organizationId: string) =>
  `/organizations/${encodeURIComponent(organizationId)}/members/`;
const memberPath = (organizationId: string, userId: string) =>
  `${membersPath(organizationId)}${encodeURIComponent(userId)}/`;

/** `GET /organizations/{id}/members/`: members with their role, budget and this month's spend. */
const members = defineQuery({
  key: (organizationId: string) => [...organizationQueryKey(organizationId), "members"] as const,
  fetch: (organizationId, signal) =>
    apiRequest(membersPath(organizationId), { schema: MemberListSchema, signal }),
});

export const useMembers = members.useQuery;

/** `PATCH /organizations/{id}/members/{user_id}/`: a member's role or monthly budget. */
export function updateMember({
  organizationId,
  userId,
  changes,
}: {
  organizationId: string;
  userId: string;
  changes: UpdateMember;
}): Promise<Member> {
  return apiRequest(memberPath(organizationId, userId), {
    method: "PATCH",
    body: changes,
    schema: MemberSchema,
  });
}

export function useUpdateMember(organizationId: string) {
  return useInvalidatingMutation(updateMember, organizationQueryKey(organizationId));
}

/**
 * `DELETE /organizations/{id}/members/{user_id}/`: removes a member (or the caller leaves); the
 * keys they made for it are revoked. The switcher's list changes too when the caller leaves.
 */
export async function removeMember({ organizationId, userId }: { organizationId: string; userId: string }) {
  await apiRequest(memberPath(organizationId, userId), { method: "DELETE" });
}

export function useRemoveMember() {
  return useInvalidatingMutation(removeMember, organizationsQueryKey);
}
