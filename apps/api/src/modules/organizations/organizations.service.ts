import { randomUUID } from "node:crypto";
import {
  AUDIT_PAGE_SIZE,
  type AuditList,
  type CreateOrganization,
  type Organization,
  type OrganizationRole,
  type UpdateOrganization,
} from "@promptmint/contracts";
import { and, asc, count, desc, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import {
  creators,
  organizationAuditEvents,
  organizationMembers,
  organizations,
  users,
} from "../../db/schema/index.ts";
import { addressKey } from "../../lib/email-address.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { recordAuditEvent } from "./audit.ts";
import { ORGANIZATION_ISSUER } from "./membership.ts";

/**
 * Organizations themselves (decision 084): made by a person, who becomes their first owner; listed
 * for their members; their name and billing details changed by those who manage them.
 */

/** The most organizations one person may own: each is an account with its own wallet and keys. */
export const MAX_OWNED_ORGANIZATIONS = 20;

/** Organizations, each as one of its members sees it (with their role). */
async function organizationsOf(
  db: Database,
  personId: string,
  organizationId?: string,
): Promise<Organization[]> {
  const rows = await db
    .select({
      id: users.id,
      name: users.displayName,
      slug: users.username,
      billingEmail: organizations.billingEmail,
      billingAddress: organizations.billingAddress,
      taxId: organizations.taxId,
      createdAt: organizations.createdAt,
      role: organizationMembers.role,
      memberCount: sql<number>`(select count(*) from ${organizationMembers} others
        where others.organization_id = ${users.id})`.mapWith(Number),
    })
    .from(organizationMembers)
    .innerJoin(users, eq(users.id, organizationMembers.organizationId))
    .innerJoin(organizations, eq(organizations.id, users.id))
    .where(
      and(
        eq(organizationMembers.userId, personId),
        eq(users.kind, "organization"),
        organizationId ? eq(users.id, organizationId) : undefined,
      ),
    )
    .orderBy(asc(sql`lower(${users.displayName})`), asc(users.id));
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    slug: row.slug,
    billing_email: row.billingEmail,
    billing_address: row.billingAddress,
    tax_id: row.taxId,
    created_at: row.createdAt.toISOString(),
    role: row.role as OrganizationRole,
    member_count: row.memberCount,
  }));
}

export const listOrganizations = (db: Database, person: LocalUser) => organizationsOf(db, person.id);

/** The organization as the person sees it; callers check the membership first (memberOf). */
export async function getOrganization(
  db: Database,
  organizationId: string,
  person: LocalUser,
): Promise<Organization> {
  const [found] = await organizationsOf(db, person.id, organizationId);
  if (!found) throw notFound("Organization");
  return found;
}

/**
 * Makes an organization in one transaction: its account (a `users` row of kind 'organization'
 * that no token names), its creator record (so it can sell apps), its billing details, the person
 * as its owner, and the audit log's first entry. The person's row is locked meanwhile, so
 * concurrent requests cannot pass the limit together.
 */
export async function createOrganization(
  db: Database,
  person: LocalUser,
  input: CreateOrganization,
): Promise<Organization> {
  const id = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await t.execute(sql`select id from ${users} where ${users.id} = ${person.id} for update`);
    const [owned] = await t
      .select({ n: count() })
      .from(organizationMembers)
      .where(and(eq(organizationMembers.userId, person.id), eq(organizationMembers.role, "owner")));
    if ((owned?.n ?? 0) >= MAX_OWNED_ORGANIZATIONS)
      throw new AppError(
        "conflict",
        `You own ${MAX_OWNED_ORGANIZATIONS} organizations, the most one person may: delete one or hand it to another owner first`,
      );
    const account = await insertAccount(t, person, input);
    await t.insert(creators).values({ userId: account.id, displayName: account.displayName });
    await t.insert(organizations).values({
      id: account.id,
      billingEmail: billingEmailOf(input) ?? null,
      billingAddress: input.billing_address ?? "",
      taxId: input.tax_id ?? "",
      createdBy: person.id,
    });
    await t
      .insert(organizationMembers)
      .values({ organizationId: account.id, userId: person.id, role: "owner", addedBy: person.id });
    await recordAuditEvent(t, {
      organizationId: account.id,
      actorId: person.id,
      action: "organization.created",
      target: account.displayName,
      details: { slug: account.username },
    });
    return account.id;
  });
  return getOrganization(db, id, person);
}

/** The organization's account row, under a unique username made from its name. */
async function insertAccount(db: Database, person: LocalUser, input: CreateOrganization) {
  const base = slugOf(input.name);
  for (let attempt = 0; attempt < 8; attempt++) {
    const username = attempt === 0 ? base : `${base}-${Math.floor(Math.random() * 9000 + 1000)}`;
    // ON CONFLICT DO NOTHING leaves the transaction usable when the username is taken.
    const [account] = await db
      .insert(users)
      .values({
        kind: "organization",
        issuer: ORGANIZATION_ISSUER,
        subject: randomUUID(),
        username,
        displayName: input.name,
        email: billingEmailOf(input) ?? person.email,
        emailVerified: person.emailVerified,
      })
      .onConflictDoNothing()
      .returning();
    if (account) return account;
  }
  throw new AppError("conflict", "Could not make a unique name for the organization; try again");
}

/** Billing addresses are stored as every address is (lib/email-address.ts). */
const billingEmailOf = (input: { billing_email?: string | null }) =>
  input.billing_email ? addressKey(input.billing_email) : input.billing_email;

/** "Acme Labs, Inc." → "acme-labs-inc": what people see in URLs and on the catalogue. */
export function slugOf(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  return slug.length >= 2 ? slug : `org-${randomUUID().slice(0, 8)}`;
}

/** Changes the name (the account's display name too) and billing details; audited with what changed. */
export async function updateOrganization(
  db: Database,
  organizationId: string,
  person: LocalUser,
  change: UpdateOrganization,
): Promise<Organization> {
  const before = await getOrganization(db, organizationId, person);
  const input = { ...change, billing_email: billingEmailOf(change) };
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of ["name", "billing_email", "billing_address", "tax_id"] as const) {
    const to = input[field];
    if (to !== undefined && to !== before[field]) changes[field] = { from: before[field], to };
  }
  if (Object.keys(changes).length === 0) return before;
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    if (input.name !== undefined)
      await t
        .update(users)
        .set({ displayName: input.name, updatedAt: new Date() })
        .where(eq(users.id, organizationId));
    await t
      .update(organizations)
      .set({
        ...(input.billing_email !== undefined ? { billingEmail: input.billing_email } : {}),
        ...(input.billing_address !== undefined ? { billingAddress: input.billing_address } : {}),
        ...(input.tax_id !== undefined ? { taxId: input.tax_id } : {}),
      })
      .where(eq(organizations.id, organizationId));
    await recordAuditEvent(t, {
      organizationId,
      actorId: person.id,
      action: "organization.updated",
      target: input.name ?? before.name,
      details: changes,
    });
  });
  // The membership lookup carries the account row (its name, in refusals).
  forgetLookups(db, "memberships");
  return getOrganization(db, organizationId, person);
}

/** The audit log, newest first, a page at a time, with each actor's name and address. */
export async function listAuditEvents(
  db: Database,
  organizationId: string,
  page: number,
): Promise<AuditList> {
  const where = eq(organizationAuditEvents.organizationId, organizationId);
  const [total] = await db.select({ n: count() }).from(organizationAuditEvents).where(where);
  const rows = await db
    .select({
      event: organizationAuditEvents,
      actorName: users.displayName,
      actorUsername: users.username,
      actorEmail: users.email,
    })
    .from(organizationAuditEvents)
    .leftJoin(users, eq(users.id, organizationAuditEvents.actorId))
    .where(where)
    .orderBy(desc(organizationAuditEvents.createdAt), desc(organizationAuditEvents.id))
    .limit(AUDIT_PAGE_SIZE)
    .offset((page - 1) * AUDIT_PAGE_SIZE);
  const n = total?.n ?? 0;
  return {
    data: rows.map(({ event, actorName, actorUsername, actorEmail }) => ({
      id: event.id,
      at: event.createdAt.toISOString(),
      actor:
        event.actorId && actorEmail !== null
          ? { user_id: event.actorId, name: actorName || actorUsername || "", email: actorEmail }
          : null,
      action: event.action,
      target: event.target,
      details: event.details,
    })),
    page,
    page_size: AUDIT_PAGE_SIZE,
    total: n,
    has_more: page * AUDIT_PAGE_SIZE < n,
  };
}
