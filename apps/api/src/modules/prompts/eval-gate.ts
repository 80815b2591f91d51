import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { applications, evalRuns } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";

/**
 * The release gate of evals (docs/decisions/059): when a creator requires a passing eval run, a
 * version takes `production` only once a run of it has passed. Read here, from the eval_runs table
 * alone, (prompts may import releases, but the gate needs nothing of it beyond the table).
 *
 * `publishing`: the app goes live with `version` as its production. That releases it to callers
 * as a label move would, though the label need not move (a draft's saves move it ungated, nobody
 * calling it), so the version is judged even when it is production already.
 */
export async function refuseUnevaluatedRelease(
  db: Database,
  prompt: { applicationId: string; requirePassingEval: boolean; productionVersionId: string | null },
  version: { id: string; version: number },
  { publishing = false }: { publishing?: boolean } = {},
): Promise<void> {
  if (!prompt.requirePassingEval) return;
  if (!publishing && prompt.productionVersionId === version.id) return;
  const [passed] = await db
    .select({ id: evalRuns.id })
    .from(evalRuns)
    .where(
      and(
        eq(evalRuns.applicationId, prompt.applicationId),
        eq(evalRuns.version, version.version),
        eq(evalRuns.status, "passed"),
      ),
    )
    .limit(1);
  if (passed) return;
  const [app] = await db
    .select({ slug: applications.slug })
    .from(applications)
    .where(eq(applications.id, prompt.applicationId));
  const page = `/prompts/${app?.slug ?? ""}/evals`;
  throw new AppError(
    "conflict",
    publishing
      ? `Version v${version.version} has no passing eval run, and this app requires one before it goes live: run the evals on v${version.version} first (${page}), or turn off "Require a passing eval run before production" there`
      : `Version v${version.version} has no passing eval run, and this app requires one before a version goes to production: run the evals on v${version.version} first (${page})`,
  );
}
