import { and, eq, or } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, applications } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { findApplicationBySlugCached, openApplicationsWhere } from "./applications.service.ts";

/**
 * What a caller is told when an app cannot be called: the same words whether the app is missing or
 * someone else's private or draft app (no existence oracle), but naming the usual reason (issue 42).
 */
export const APP_NOT_CALLABLE =
  "Application not found. If it is yours, check it is Public and Live; a private or draft app answers only its owner.";

const notCallable = () => new AppError("not_found", APP_NOT_CALLABLE);

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
  if (!app) throw notCallable();
  if (app.ownerId === caller.id) return app;
  if (app.status !== "live" || app.visibility === "private") throw notCallable();
  return app;
}

/**
 * Apps the caller may call, the same rule as a list (the OpenAI-compatible /models): their own,
 * and live public or embeddable ones; never archived or suspended ones. At most `limit`.
 */
export function listCallableApps(db: Database, caller: LocalUser, limit: number): Promise<ApplicationRow[]> {
  return openApplicationsWhere(
    db,
    or(
      eq(applications.ownerId, caller.id),
      and(
        eq(applications.status, "live"),
        or(eq(applications.visibility, "public"), eq(applications.visibility, "embed")),
      ),
    ),
    limit,
  );
}
