import type { OrganizationRole } from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { organizationMembers, users } from "../../db/schema/index.ts";
import { lookupCache } from "../../lib/lookup-cache.ts";
import type { LocalUser } from "../auth/auth.service.ts";

/**
 * Membership of organizations (docs/decisions/084): who may act for which organization, with what
 * role. An organization is an account (a `users` row of kind 'organization'); a member acts for it
 * with their own sign-in token and the `Promptmint-Organization` header, or with a key they made.
 */

/** The issuer of organizations' account rows: no token names it, so no one signs in as one. */
export const ORGANIZATION_ISSUER = "promptmint:organization";

/**
 * What a role may do, by capability (modules/organizations/access.ts says which a route needs):
 * - read: see the organization's data but its money (apps, prompts, analytics, keys' names);
 * - read_billing: see its money (wallet, ledger, receipts, payment methods, payouts, usage by member);
 * - build: change what it sells (apps, prompts, workflows, releases, evals, plans sold, webhooks);
 * - call: call apps for it and manage its API keys;
 * - billing: spend and move its money (top-ups, payment methods, buying plans, payouts, codes);
 * - manage: members, invitations, settings and the audit log.
 */
export type Capability = "read" | "read_billing" | "build" | "call" | "billing" | "manage";

export const ROLE_CAPABILITIES: Record<OrganizationRole, ReadonlySet<Capability>> = {
  owner: new Set(["read", "read_billing", "build", "call", "billing", "manage"]),
  admin: new Set(["read", "read_billing", "build", "call", "billing", "manage"]),
  developer: new Set(["read", "build", "call"]),
  billing: new Set(["read", "read_billing", "billing"]),
  viewer: new Set(["read"]),
};

export const roleMay = (role: OrganizationRole, capability: Capability): boolean =>
  ROLE_CAPABILITIES[role].has(capability);

/** A person acting for an organization: set on the request by the auth guard (authenticate.ts). */
export interface ActingMember {
  organizationId: string;
  /** The person (the signed-in member, or the maker of the organization's key). */
  userId: string;
  role: OrganizationRole;
  /** What their calls may spend of the organization's money per UTC month; null: no budget. */
  monthlyBudgetCents: number | null;
}

export interface Membership extends ActingMember {
  organization: LocalUser;
}

/**
 * A person's membership of an organization, or undefined when they are not a member (or it is not
 * an organization). Cached per process like keys (lib/lookup-cache.ts): a change to
 * organization_members, users or suspensions by any process drops the copies at once through the
 * change feed (migration 0061's trigger), so a removed member or a lowered role is refused within
 * moments everywhere.
 */
export async function findMembership(
  db: Database,
  organizationId: string,
  userId: string,
): Promise<Membership | undefined> {
  return lookupCache<Membership>(db, "memberships").get(`${organizationId}:${userId}`, async () => {
    const [row] = await db
      .select({
        organization: users,
        role: organizationMembers.role,
        monthlyBudgetCents: organizationMembers.monthlyBudgetCents,
      })
      .from(organizationMembers)
      .innerJoin(users, eq(users.id, organizationMembers.organizationId))
      .where(
        and(
          eq(organizationMembers.organizationId, organizationId),
          eq(organizationMembers.userId, userId),
          eq(users.kind, "organization"),
        ),
      )
      .limit(1);
    return (
      row && {
        organization: row.organization,
        organizationId,
        userId,
        role: row.role,
        monthlyBudgetCents: row.monthlyBudgetCents,
      }
    );
  });
}
