import type { FastifyInstance } from "fastify";
import type { Database } from "../../db/client.ts";
import { organizationAuditEvents } from "../../db/schema/index.ts";
import { routeAccess } from "./access.ts";

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

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The change a member makes for an organization through any account route (a key made, an app
 * published, a top-up, a plan bought) goes in its audit log as the route that did it, with the
 * ids it named, written before the answer leaves (decision 084). Calls of apps are not actions
 * but usage (GET /api/organizations/{id}/usage/), and are not written here; neither are requests
 * an organization's key makes (its maker is in the usage).
 */
export function auditOrganizationWrites(app: FastifyInstance, db: Database): void {
  app.addHook("onSend", async (request, reply, payload) => {
    const member = request.member;
    if (!member || !request.person || READ_METHODS.has(request.method)) return payload;
    if (reply.statusCode >= 400) return payload;
    const route = request.routeOptions.url ?? request.url;
    if (routeAccess(request.method, route) === "call" && !/\/keys(\/|$)/.test(route)) return payload;
    const params = Object.values((request.params ?? {}) as Record<string, unknown>).filter(
      (value): value is string => typeof value === "string",
    );
    await recordAuditEvent(db, {
      organizationId: member.organizationId,
      actorId: member.userId,
      action: `${request.method} ${route.replace(/^\/api\/v1\//, "/api/")}`,
      target: params.join(" "),
      details: { status: reply.statusCode },
    });
    return payload;
  });
}
