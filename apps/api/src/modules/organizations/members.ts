import { isUuid, type Member, type OrganizationRole, type UpdateMember } from "@promptmint/contracts";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { apiKeys, memberSpend, organizationMembers, organizations, users } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { recordAuditEvent } from "./audit.ts";
import { nameOf, ownersOnly, roleRefusal } from "./member-access.ts";
import { type Membership, roleMay } from "./membership.ts";

/**
 * An organization's members: their roles and monthly budgets, changed by those who manage it, and
 * their leaving. An organization always keeps an owner: the last one can neither lose the role nor
 * leave. Every change locks the organization's row first, so two changes at once (two admins
 * demoting the last two owners) are judged one after the other.
 */

/** The first moment of this UTC calendar month: member budgets' period (as keys' monthly limits). */
function monthStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

export async function listMembers(db: Database, organizationId: string, userId?: string): Promise<Member[]> {
  const rows = await db
    .select({
      member: organizationMembers,
      name: users.displayName,
      username: users.username,
      email: users.email,
      spentMicros: memberSpend.spentMicros,
    })
    .from(organizationMembers)
    .innerJoin(users, eq(users.id, organizationMembers.userId))
    .leftJoin(
      memberSpend,
      and(
        eq(memberSpend.organizationId, organizationMembers.organizationId),
        eq(memberSpend.userId, organizationMembers.userId),
        eq(memberSpend.periodStart, monthStart()),
      ),
    )
    .where(
      and(
        eq(organizationMembers.organizationId, organizationId),
        userId ? eq(organizationMembers.userId, userId) : undefined,
      ),
    )
    .orderBy(asc(organizationMembers.createdAt), asc(organizationMembers.userId));
  return rows.map(({ member, name, username, email, spentMicros }) => ({
    user_id: member.userId,
    name: name || username,
    email,
    role: member.role as OrganizationRole,
    monthly_budget_cents: member.monthlyBudgetCents,
    spent_this_month_micros: spentMicros ?? 0,
    joined_at: member.createdAt.toISOString(),
  }));
}

type MemberRow = typeof organizationMembers.$inferSelect;

/**
 * Locks the organization's row, then reads the member and how many owners it has: what every
 * change to its members is judged on.
 */
async function lockedMember(tx: Database, organizationId: string, userId: string) {
  await tx.execute(
    sql`select id from ${organizations} where ${organizations.id} = ${organizationId} for update`,
  );
  const [member] = isUuid(userId)
    ? await tx
        .select({ row: organizationMembers, email: users.email })
        .from(organizationMembers)
        .innerJoin(users, eq(users.id, organizationMembers.userId))
        .where(
          and(eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, userId)),
        )
        .limit(1)
    : [];
  if (!member) throw notFound("Member");
  const [owners] = await tx
    .select({ n: sql<number>`count(*)`.mapWith(Number) })
    .from(organizationMembers)
    .where(
      and(eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.role, "owner")),
    );
  return { member: member.row, email: member.email, owners: owners?.n ?? 0 };
}

function lastOwner(membership: Membership, doing: string): AppError {
  return new AppError(
    "conflict",
    `${nameOf(membership)} has no other owner, so its last owner cannot ${doing}: make another member an owner first`,
  );
}

/**
 * Changes a member's role (capability manage; only an owner gives or takes the owner role) or
 * monthly budget (manage or billing). Audited as `member.role_changed` / `member.budget_changed`.
 */
export async function updateMember(
  db: Database,
  actor: { membership: Membership; person: LocalUser },
  userId: string,
  input: UpdateMember,
): Promise<Member> {
  const { membership, person } = actor;
  const { organizationId } = membership;
  if (input.role !== undefined && !roleMay(membership.role, "manage"))
    throw roleRefusal(membership, "manage");
  if (
    input.monthly_budget_cents !== undefined &&
    !roleMay(membership.role, "manage") &&
    !roleMay(membership.role, "billing")
  )
    throw roleRefusal(membership, "billing");
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const { member, email, owners } = await lockedMember(t, organizationId, userId);
    const changes: Partial<MemberRow> = {};
    if (input.role !== undefined && input.role !== member.role) {
      if ((member.role === "owner" || input.role === "owner") && membership.role !== "owner")
        throw ownersOnly(membership, "give or take the owner role");
      if (member.role === "owner" && owners <= 1) throw lastOwner(membership, "lose the role");
      changes.role = input.role;
      await audit(t, membership, person, "member.role_changed", email, { from: member.role, to: input.role });
    }
    const budget = input.monthly_budget_cents;
    if (budget !== undefined && budget !== member.monthlyBudgetCents) {
      changes.monthlyBudgetCents = budget;
      await audit(t, membership, person, "member.budget_changed", email, {
        from: member.monthlyBudgetCents,
        to: budget,
      });
    }
    if (Object.keys(changes).length === 0) return;
    await t
      .update(organizationMembers)
      .set({ ...changes, updatedAt: new Date() })
      .where(
        and(eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, userId)),
      );
  });
  // The change feed tells the other processes; this one forgets at once. A role decides whether
  // the member's keys for the organization still work.
  forgetLookups(db, "memberships", "apiKeys");
  const [updated] = await listMembers(db, organizationId, userId);
  if (!updated) throw notFound("Member");
  return updated;
}

/**
 * Removes a member (capability manage), or lets a member leave. The last owner can do neither. In
 * the same transaction every key the member made for the organization is revoked, so nothing they
 * made keeps acting for it once they are gone.
 */
export async function removeMember(
  db: Database,
  actor: { membership: Membership; person: LocalUser },
  userId: string,
): Promise<void> {
  const { membership, person } = actor;
  const { organizationId } = membership;
  const leaving = userId === person.id;
  if (!leaving && !roleMay(membership.role, "manage")) throw roleRefusal(membership, "manage");
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const { member, email, owners } = await lockedMember(t, organizationId, userId);
    if (!leaving && member.role === "owner" && membership.role !== "owner")
      throw ownersOnly(membership, "remove an owner");
    if (member.role === "owner" && owners <= 1) throw lastOwner(membership, leaving ? "leave" : "be removed");
    await t
      .delete(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, organizationId), eq(organizationMembers.userId, userId)),
      );
    const revoked = await t
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(
        and(eq(apiKeys.userId, organizationId), eq(apiKeys.createdBy, userId), isNull(apiKeys.revokedAt)),
      )
      .returning({ id: apiKeys.id });
    await audit(t, membership, person, leaving ? "member.left" : "member.removed", email, {
      role: member.role,
      keys_revoked: revoked.length,
    });
  });
  forgetLookups(db, "apiKeys", "memberships");
}

const audit = (
  db: Database,
  membership: Membership,
  person: LocalUser,
  action: string,
  target: string,
  details: Record<string, unknown>,
) =>
  recordAuditEvent(db, {
    organizationId: membership.organizationId,
    actorId: person.id,
    action,
    target,
    details,
  });
