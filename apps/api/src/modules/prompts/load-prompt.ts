import { eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, prompts, promptVersions } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";

/**
 * A prompt app's prompt with its active version: what every reader of a prompt starts from (the
 * gateway, the price guard, the editor). Kept apart from prompts.service.ts, which writes prompts
 * and calls the price guard (cost-guard.ts), so that the guard can read a prompt without a cycle.
 */
export interface LoadedPrompt {
  prompt: typeof prompts.$inferSelect;
  active: typeof promptVersions.$inferSelect;
}

export async function loadPrompt(db: Database, app: ApplicationRow): Promise<LoadedPrompt> {
  if (app.type !== "prompt") throw notFound("Prompt");
  const [row] = await db
    .select({ prompt: prompts, active: promptVersions })
    .from(prompts)
    .innerJoin(promptVersions, eq(promptVersions.id, prompts.activeVersionId))
    .where(eq(prompts.applicationId, app.id))
    .limit(1);
  if (!row) throw notFound("Prompt");
  return row;
}
