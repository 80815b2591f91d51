import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { applications, evalRuns, prompts } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";

/**
 * The release gate of evals (docs/decisions/059): when a creator requires a passing eval run, a
 * version takes `production` only once a run of it has passed. Read here, from the eval_runs table
 * alone, so that prompts never imports releases (the module that writes the runs).
 */
export async function refuseUnevaluatedRelease(
  db: Database,
  prompt: { id: string; requirePassingEval: boolean; activeVersionId: string | null },
  version: { id: string; version: number },
): Promise<void> {
  if (!prompt.requirePassingEval || prompt.activeVersionId === version.id) return;
  const [passed] = await db
    .select({ id: evalRuns.id })
    .from(evalRuns)
    .where(
      and(
        eq(evalRuns.promptId, prompt.id),
        eq(evalRuns.version, version.version),
        eq(evalRuns.status, "passed"),
      ),
    )
    .limit(1);
  if (passed) return;
  const [app] = await db
    .select({ slug: applications.slug })
    .from(prompts)
    .innerJoin(applications, eq(applications.id, prompts.applicationId))
    .where(eq(prompts.id, prompt.id));
  throw new AppError(
    "conflict",
    `Version v${version.version} has no passing eval run, and this app requires one before a version goes to production: run the evals on v${version.version} first (/prompts/${app?.slug ?? ""}/evals)`,
  );
}
