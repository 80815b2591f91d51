import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { findApplicationBySlugCached } from "./applications.service.ts";

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
