import { and, eq, isNull, or } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, invocations } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import { findApplicationBySlugCached } from "../applications/applications.service.ts";
import type { LocalUser } from "../auth/auth.service.ts";

/**
 * DESIGN.md §5: the owner may call any of their apps; others only live apps that are public or
 * embed. Everything else answers exactly like a missing app, so existence never leaks.
 */
export async function findCallableApp(
  db: Database,
  slug: string,
  caller: LocalUser,
): Promise<ApplicationRow> {
  const app = await findApplicationBySlugCached(db, slug);
  if (!app) throw notFound("Application");
  if (app.ownerId === caller.id) return app;
  if (app.status !== "live" || app.visibility === "private") throw notFound("Application");
  return app;
}

/**
 * One of the caller's own calls to the app (its invocation; the message or run id Dify clients
 * hold), or undefined: another caller's is not found. With `user`, only that Dify end user's
 * successful calls count (a message to rate).
 */
export async function findOwnCall(
  db: Database,
  application: ApplicationRow,
  caller: LocalUser,
  id: string,
  message?: { user: string | undefined },
): Promise<typeof invocations.$inferSelect | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  const endUser = message?.user
    ? eq(invocations.endUser, message.user)
    : or(isNull(invocations.endUser), eq(invocations.endUser, ""));
  const [found] = await db
    .select()
    .from(invocations)
    .where(
      and(
        eq(invocations.id, id),
        eq(invocations.applicationId, application.id),
        eq(invocations.callerUserId, caller.id),
        message ? and(eq(invocations.status, "success"), endUser) : undefined,
      ),
    );
  return found;
}
