import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { userRoles, users } from "../../db/schema/index.ts";
import { addressKey } from "../../lib/email-address.ts";
import { type Actor, writeAudit } from "./audit.ts";

/**
 * Who holds the operator's powers (docs/decisions/041): a role stored per user, granted by
 * `npm run admin -- grant EMAIL` or, once, by the ADMIN_EMAILS bootstrap, and only ever to a user
 * whose address is verified. Every grant and revoke is in the audit log, in the same transaction.
 */
export const BOOTSTRAP_ACTOR: Actor = { id: null, email: "ADMIN_EMAILS bootstrap" };

type UserRow = typeof users.$inferSelect;

/** Whether this user holds the operator role now (granted, not revoked, address verified). */
export async function isOperator(
  db: Database,
  user: { id: string; emailVerified: boolean },
): Promise<boolean> {
  if (!user.emailVerified) return false;
  const [row] = await db
    .select({ userId: userRoles.userId })
    .from(userRoles)
    .where(and(eq(userRoles.userId, user.id), eq(userRoles.role, "operator"), isNull(userRoles.revokedAt)))
    .limit(1);
  return Boolean(row);
}

/**
 * The bootstrap: a user whose verified address is in ADMIN_EMAILS is granted the role the first
 * time they are seen so. An unverified address gets nothing; a revoked role stays revoked.
 */
export async function bootstrapOperator(
  db: Database,
  adminEmails: string[],
  user: UserRow,
): Promise<boolean> {
  if (!user.emailVerified || !adminEmails.includes(addressKey(user.email))) return false;
  return db.transaction(async (tx) => {
    const [granted] = await tx
      .insert(userRoles)
      .values({ userId: user.id, role: "operator", grantedBy: BOOTSTRAP_ACTOR.email })
      .onConflictDoNothing()
      .returning();
    if (!granted) return false;
    await writeAudit(tx as unknown as Database, BOOTSTRAP_ACTOR, {
      action: "operator.grant",
      targetKind: "user",
      targetId: user.id,
      reason: `${user.email} is in ADMIN_EMAILS and verified`,
      details: { email: user.email },
    });
    return true;
  });
}

export type RoleChange =
  | { ok: true; changed: UserRow[]; unchanged: UserRow[] }
  | { ok: false; message: string };

async function usersWithEmail(db: Database, email: string): Promise<UserRow[]> {
  return db
    .select()
    .from(users)
    .where(eq(users.email, addressKey(email)))
    .orderBy(asc(users.dateJoined));
}

/** Grants the role to the verified user(s) with this address; refuses an unknown or unverified one. */
export async function grantOperator(db: Database, email: string, actor: Actor): Promise<RoleChange> {
  const found = await usersWithEmail(db, email);
  if (found.length === 0)
    return {
      ok: false,
      message: `No user with the address ${email} has signed in yet: they must sign up (and verify the address) first.`,
    };
  const verified = found.filter((user) => user.emailVerified);
  if (verified.length === 0)
    return {
      ok: false,
      message: `${email} is not verified: they must open the verification link mailed to that address (or use "Resend verification email" on the Earnings page), then sign in again; grant after that. An unverified address is never granted.`,
    };
  return changeRole(db, verified, actor, "operator.grant", (tx, user) =>
    tx
      .insert(userRoles)
      .values({ userId: user.id, role: "operator", grantedBy: actor.email })
      .onConflictDoUpdate({
        target: [userRoles.userId, userRoles.role],
        set: { grantedBy: actor.email, grantedAt: new Date(), revokedAt: null },
        setWhere: sql`${userRoles.revokedAt} is not null`,
      })
      .returning(),
  );
}

/**
 * Applies one role change to each user, each in its own transaction with its audit entry; a user
 * the statement leaves as they were (no row returned) is listed unchanged and not audited.
 */
async function changeRole(
  db: Database,
  targets: UserRow[],
  actor: Actor,
  action: "operator.grant" | "operator.revoke",
  statement: (tx: Database, user: UserRow) => Promise<unknown[]>,
): Promise<RoleChange> {
  const changed: UserRow[] = [];
  const unchanged: UserRow[] = [];
  for (const user of targets) {
    const done = await db.transaction(async (tx) => {
      const [row] = await statement(tx as unknown as Database, user);
      if (!row) return false;
      await writeAudit(tx as unknown as Database, actor, {
        action,
        targetKind: "user",
        targetId: user.id,
        details: { email: user.email },
      });
      return true;
    });
    (done ? changed : unchanged).push(user);
  }
  return { ok: true, changed, unchanged };
}

/** Revokes the role of every user with this address. */
export async function revokeOperator(db: Database, email: string, actor: Actor): Promise<RoleChange> {
  const found = await usersWithEmail(db, email);
  if (found.length === 0) return { ok: false, message: `No user with the address ${email}.` };
  return changeRole(db, found, actor, "operator.revoke", (tx, user) =>
    tx
      .update(userRoles)
      .set({ revokedAt: new Date() })
      .where(and(eq(userRoles.userId, user.id), eq(userRoles.role, "operator"), isNull(userRoles.revokedAt)))
      .returning(),
  );
}

/** Every current operator, earliest grant first. */
export async function listOperators(db: Database) {
  return db
    .select({
      userId: users.id,
      email: users.email,
      emailVerified: users.emailVerified,
      grantedBy: userRoles.grantedBy,
      grantedAt: userRoles.grantedAt,
    })
    .from(userRoles)
    .innerJoin(users, eq(users.id, userRoles.userId))
    .where(and(eq(userRoles.role, "operator"), isNull(userRoles.revokedAt)))
    .orderBy(asc(userRoles.grantedAt));
}
