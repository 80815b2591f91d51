import type { Database } from "../../db/client.ts";
import { organizationAuditEvents } from "../../db/schema/index.ts";

/**
 * One action in an organization, for its audit log (who, what, when; decision 084). `action` is a
 * dotted name (`member.removed`, `invitation.created`) or, for the actions the auth guard records
 * for every change a member makes through the API, the route (`POST /api/keys/`).
 */
export interface AuditEntry {
  organizationId: string;
  /** The person who acted; null for the platform itself. */
  actorId: string | null;
  action: string;
  /** What it was done to, as a person reads it: an address, a key's name, an app's slug. */
  target?: string;
  details?: Record<string, unknown>;
}

/** Records it; `db` may be a transaction, so the entry commits with the change it describes. */
export async function recordAuditEvent(db: Database, entry: AuditEntry): Promise<void> {
  await db.insert(organizationAuditEvents).values({
    organizationId: entry.organizationId,
    actorId: entry.actorId,
    action: entry.action,
    target: entry.target ?? "",
    details: entry.details ?? {},
  });
}
