import { isUuid, type OrganizationRole } from "@promptmint/contracts";
import type { Database } from "../../db/client.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import {
  type Capability,
  findMembership,
  type Membership,
  ROLE_CAPABILITIES,
  roleMay,
} from "./membership.ts";

/**
 * Who may use an organization's own routes (/api/organizations/{id}/…): its members, each as far
 * as their role goes. The organization comes from the path, the person from their sign-in token.
 */

/** What each capability lets a role do, as a refusal says it ("it may not …"). */
const CAPABILITY_TEXT: Record<Capability, string> = {
  read: "see its data",
  read_billing: "see its money (wallet, receipts, payment methods, payouts)",
  build: "change its apps, prompts and workflows",
  call: "call apps for it or manage its API keys",
  billing: "spend or move its money",
  manage: "manage members and settings",
};

/**
 * The person's membership of the organization, holding `capability` when one is named. Anyone who
 * is not a member gets the 404 of an organization that does not exist (so no one learns which
 * ids do); a member whose role lacks the capability, a 403 naming their role.
 */
export async function memberOf(
  db: Database,
  organizationId: string,
  person: LocalUser,
  capability?: Capability,
): Promise<Membership> {
  const membership = isUuid(organizationId) ? await findMembership(db, organizationId, person.id) : undefined;
  if (!membership) throw notFound("Organization");
  if (capability && !roleMay(membership.role, capability)) throw roleRefusal(membership, capability);
  return membership;
}

/** 403 `organization_role`: "Your role in Acme is developer: it may not manage members and settings; ask an owner or admin". */
export function roleRefusal(membership: Membership, capability: Capability): AppError {
  const able = (Object.keys(ROLE_CAPABILITIES) as OrganizationRole[]).filter((role) =>
    roleMay(role, capability),
  );
  return new AppError(
    "organization_role",
    `Your role in ${nameOf(membership)} is ${membership.role}: it may not ${CAPABILITY_TEXT[capability]}; ask ${whoIs(able)}`,
  );
}

/** 403 `organization_role` for what only an owner may do (give, take or invite the owner role). */
export function ownersOnly(membership: Membership, what: string): AppError {
  return new AppError(
    "organization_role",
    `Your role in ${nameOf(membership)} is ${membership.role}: only an owner may ${what}; ask an owner`,
  );
}

export const nameOf = (membership: Membership): string =>
  membership.organization.displayName || membership.organization.username;

/** "an owner or admin", "an owner, admin or billing member". */
function whoIs(roles: OrganizationRole[]): string {
  const names = roles.map((role) => (role === "billing" ? "billing member" : role));
  const listed = names.length > 1 ? `${names.slice(0, -1).join(", ")} or ${names.at(-1)}` : (names[0] ?? "");
  return `${/^[aeiou]/.test(listed) ? "an" : "a"} ${listed}`;
}
