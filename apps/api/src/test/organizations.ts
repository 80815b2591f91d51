import { randomUUID } from "node:crypto";
import type { OrganizationRole } from "@promptmint/contracts";
import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { creators, organizationMembers, organizations, users } from "../db/schema/index.ts";
import { ORGANIZATION_ISSUER } from "../modules/organizations/membership.ts";
import type { ApiAnswer, Caller } from "./caller.ts";

/**
 * An organization made straight in the database (the rows POST /api/organizations/ makes), for
 * tests of what membership allows before or apart from the organization routes: its account, its
 * creator record, its details and its owner.
 */
export async function insertOrganization(db: Database, owner: Caller, name: string): Promise<string> {
  const ownerId = await userIdOf(db, owner);
  const id = await db.transaction(async (tx) => {
    const [account] = await tx
      .insert(users)
      .values({
        kind: "organization",
        issuer: ORGANIZATION_ISSUER,
        subject: randomUUID(),
        username: `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${randomUUID().slice(0, 6)}`,
        email: owner.email,
        displayName: name,
      })
      .returning({ id: users.id });
    if (!account) throw new Error("organization insert returned nothing");
    await tx.insert(creators).values({ userId: account.id, displayName: name });
    await tx.insert(organizations).values({ id: account.id, createdBy: ownerId });
    await tx
      .insert(organizationMembers)
      .values({ organizationId: account.id, userId: ownerId, role: "owner" });
    return account.id;
  });
  return id;
}

export async function userIdOf(db: Database, person: Caller): Promise<string> {
  const [row] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(sql`lower(${users.email})`, person.email.toLowerCase()), eq(users.kind, "person")));
  if (!row) throw new Error(`no user for ${person.email}`);
  return row.id;
}

export async function setMember(
  db: Database,
  organizationId: string,
  person: Caller,
  role: OrganizationRole,
  monthlyBudgetCents: number | null = null,
): Promise<string> {
  const userId = await userIdOf(db, person);
  await db
    .insert(organizationMembers)
    .values({ organizationId, userId, role, monthlyBudgetCents })
    .onConflictDoUpdate({
      target: [organizationMembers.organizationId, organizationMembers.userId],
      set: { role, monthlyBudgetCents },
    });
  return userId;
}

/** The person's calls made for the organization (`Promptmint-Organization`). */
export function actingFor(person: Caller, organizationId: string): Caller {
  return {
    ...person,
    api<T>(method: string, path: string, options: Parameters<Caller["api"]>[2] = {}): Promise<ApiAnswer<T>> {
      return person.api<T>(method, path, {
        ...options,
        headers: { "promptmint-organization": organizationId, ...options.headers },
      });
    },
  };
}
