import { isUuid } from "@promptmint/contracts";
import { and, eq, inArray, or, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { applications, suspensions, users } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import { type Actor, writeAudit } from "./audit.ts";

/**
 * Suspension by the operator (docs/decisions/028). A suspended app, and every app of a suspended
 * user, is not found for any caller (gateway, OpenAI route, embed, explore): every lookup of an
 * app by slug carries `appNotSuspended`. Its owner still sees it, marked, in the dashboard. A
 * suspended user's credentials are all refused (403 account_suspended: sign-in tokens in
 * `requireUser`, API keys and OAuth tokens in `requireCaller`, decision 046) and nothing is paid out
 * to them (`isPayoutBlocked`).
 */
export type SuspensionTarget = "application" | "user";

/** For an app lookup's where clause: the app is not suspended, nor is its owner. */
export const appNotSuspended: SQL = sql`not exists (
  select 1 from ${suspensions} s
  where (s.target_kind = 'application' and s.target_id = ${applications.id})
     or (s.target_kind = 'user' and s.target_id = ${applications.ownerId}))`;

/** For an API key lookup: whether the key's user is suspended. */
export const userSuspended = (userId: SQL | typeof users.id) =>
  sql<boolean>`exists (select 1 from ${suspensions} s where s.target_kind = 'user' and s.target_id = ${userId})`;

/** Whether the operator suspended this user: every credential of theirs is refused (decision 046). */
export async function isUserSuspended(db: Database, userId: string): Promise<boolean> {
  return isPayoutBlocked(db, userId);
}

/** Whether nothing may be paid out to this user (for payouts: helper B's schedule and withdraw). */
export async function isPayoutBlocked(db: Database, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ reason: suspensions.reason })
    .from(suspensions)
    .where(and(eq(suspensions.targetKind, "user"), eq(suspensions.targetId, userId)))
    .limit(1);
  return row !== undefined;
}

/** Why each of these apps (of one owner) is suspended, if it is: the app's own or its owner's. */
export async function suspensionsOf(
  db: Database,
  ownerId: string,
  appIds: string[],
): Promise<Map<string, { reason: string; since: Date }>> {
  const result = new Map<string, { reason: string; since: Date }>();
  if (appIds.length === 0) return result;
  const rows = await db
    .select()
    .from(suspensions)
    .where(
      or(
        and(eq(suspensions.targetKind, "user"), eq(suspensions.targetId, ownerId)),
        and(eq(suspensions.targetKind, "application"), inArray(suspensions.targetId, appIds)),
      ),
    );
  const owner = rows.find((row) => row.targetKind === "user");
  for (const id of appIds) {
    const own = rows.find((row) => row.targetKind === "application" && row.targetId === id);
    const found = own ?? owner;
    if (found)
      result.set(id, {
        reason: owner && !own ? `Your account is suspended: ${owner.reason}` : found.reason,
        since: found.createdAt,
      });
  }
  return result;
}

/** Suspends (or lifts the suspension of) an app or a user, with the audit row, in one transaction. */
export async function setSuspended(
  db: Database,
  actor: Actor,
  target: { kind: SuspensionTarget; id: string; reason: string; suspended: boolean },
): Promise<{ changed: boolean }> {
  if (!isUuid(target.id)) throw notFound(target.kind === "user" ? "User" : "Application");
  const table = target.kind === "user" ? users : applications;
  const [exists] = await db.select({ id: table.id }).from(table).where(eq(table.id, target.id)).limit(1);
  if (!exists) throw notFound(target.kind === "user" ? "User" : "Application");
  if (target.kind === "user" && target.id === actor.id && target.suspended)
    throw new AppError("conflict", "An operator cannot suspend their own account");
  const changed = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const match = and(eq(suspensions.targetKind, target.kind), eq(suspensions.targetId, target.id));
    const rows = target.suspended
      ? await t
          .insert(suspensions)
          .values({ targetKind: target.kind, targetId: target.id, reason: target.reason, actorId: actor.id })
          .onConflictDoNothing()
          .returning({ id: suspensions.targetId })
      : await t.delete(suspensions).where(match).returning({ id: suspensions.targetId });
    if (rows.length === 0) return false;
    await writeAudit(t, actor, {
      action: `${target.kind === "user" ? "user" : "app"}.${target.suspended ? "suspend" : "unsuspend"}`,
      targetKind: target.kind,
      targetId: target.id,
      reason: target.reason,
    });
    return true;
  });
  // This process serves the change at once; another within the lookup cache's TTL.
  forgetLookups(db, "applications", "apiKeys");
  return { changed };
}
