import type { OrganizationRole } from "@promptmint/contracts";

/**
 * What a role may do for its organization, by capability: a copy of the API's table
 * (apps/api/src/modules/organizations/membership.ts ROLE_CAPABILITIES), which decides. The web
 * app only uses it to hide what a role cannot use; the API refuses it anyway (403
 * `organization_role`). Keep the two the same (organization-capabilities.test.ts reads the API's).
 */
export type Capability = "read" | "read_billing" | "build" | "call" | "billing" | "manage";

export const ROLE_CAPABILITIES: Record<OrganizationRole, ReadonlySet<Capability>> = {
  owner: new Set(["read", "read_billing", "build", "call", "billing", "manage"]),
  admin: new Set(["read", "read_billing", "build", "call", "billing", "manage"]),
  developer: new Set(["read", "build", "call"]),
  billing: new Set(["read", "read_billing", "billing"]),
  viewer: new Set(["read"]),
};

/** Whether the acting account may do it: a person for themselves may do everything (role null). */
export function accountMay(role: OrganizationRole | null, capability: Capability): boolean {
  return role === null || ROLE_CAPABILITIES[role].has(capability);
}

/** The roles in the order a person reads them, most power first. */
export const ORGANIZATION_ROLES: readonly OrganizationRole[] = [
  "owner",
  "admin",
  "developer",
  "billing",
  "viewer",
];
