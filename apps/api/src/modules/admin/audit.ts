import { desc, lt } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { auditLog } from "../../db/schema/index.ts";

/** Who acted: an operator, or (actor id null) a payment provider's event. */
export interface Actor {
  id: string | null;
  email: string;
}

export const PROVIDER_ACTOR = (gateway: "stripe" | "sandbox"): Actor => ({
  id: null,
  email: gateway === "stripe" ? "stripe (webhook)" : "sandbox",
});

/** Appends one audit row inside the caller's transaction: it commits with the action or not at all. */
export async function writeAudit(
  db: Database,
  actor: Actor,
  entry: { action: string; targetKind: string; targetId: string; reason?: string; details?: object },
): Promise<void> {
  await db.insert(auditLog).values({
    actorId: actor.id,
    actorEmail: actor.email,
    action: entry.action,
    targetKind: entry.targetKind,
    targetId: entry.targetId,
    reason: entry.reason ?? "",
    details: entry.details ?? {},
  });
}

/** The latest audit rows, newest first; `before` pages on by id. */
export async function listAudit(db: Database, options: { limit: number; before?: number }) {
  return db
    .select()
    .from(auditLog)
    .where(options.before ? lt(auditLog.id, options.before) : undefined)
    .orderBy(desc(auditLog.id))
    .limit(options.limit);
}
