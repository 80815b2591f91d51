import type { MoveLabel, PromptLabels, ServingState } from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, experiments, users } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { type ExperimentKind, ownSubject } from "./experiment-subjects.ts";
import { toExperiment } from "./experiments.service.ts";
import { labelMovesOf, labelsOf, pointLabel, productionOf, removeLabel } from "./labels.ts";
import { PRODUCTION } from "./pins.ts";
import { releaseKind, releaseProduction } from "./release-kinds.ts";
import { authorName, lockApp, versionByNumber } from "./versions.ts";

/**
 * The creator's labels of an app of either kind (docs/decisions/057, 060, 075): read them, point
 * one at a version (a move of `production` is a release or a rollback), remove one. One code path
 * for every kind; what a release must pass is the kind's (release-kinds.ts).
 */

/** An app's labels and their moves (newest first), if the user owns it. */
export async function ownLabels(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
): Promise<PromptLabels> {
  const { app } = await ownSubject(db, owner, kind, subjectId);
  return { labels: await labelsOf(db, app.id), moves: await labelMovesOf(db, app.id) };
}

/** "v1 50% / v2 50%": an experiment's split, as a sentence names it. */
export function splitOf(arms: { version: number; percent: number }[]): string {
  return arms.map((arm) => `v${arm.version} ${arm.percent}%`).join(" / ");
}

/**
 * Points a label at a version. `production` is judged by the kind's serving guard first (the
 * price guard and eval gate for a prompt) and, in the transaction, its release gate. While an
 * experiment splits the app's callers, moving `production` would leave them on the experiment's
 * arms, not on the new production: refused (409 `experiment_running`, naming the split) unless
 * the request says `end_experiment: true`, which ends it ("stopped") in the same transaction as
 * the move, so no caller sees one without the other.
 */
export async function moveOwnLabel(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
  name: string,
  input: MoveLabel,
  { feePercent }: { feePercent: number },
): Promise<PromptLabels> {
  const { app } = await ownSubject(db, owner, kind, subjectId);
  const side = releaseKind(kind);
  const version = await versionByNumber(db, app.id, input.version);
  const actor = { id: owner.id, reason: input.reason };
  if (name === PRODUCTION) await side.guardServing(db, app, version, feePercent);
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    if (name !== PRODUCTION) {
      await pointLabel(t, app.id, name, version, actor);
      return;
    }
    await lockApp(t, app.id);
    const [running] = await t
      .select()
      .from(experiments)
      .where(and(eq(experiments.applicationId, app.id), eq(experiments.status, "running")))
      .limit(1);
    if (running && !input.end_experiment)
      throw new AppError(
        "experiment_running",
        `An experiment is running (${splitOf(running.arms)}): end it to move production, or send end_experiment: true`,
        {
          fields: {
            end_experiment: `must be true to end the running experiment (${splitOf(running.arms)}) with this move`,
          },
        },
      );
    if (running)
      await t
        .update(experiments)
        .set({
          status: "ended",
          endedAt: new Date(),
          endedBy: owner.id,
          outcome: "stopped",
          winnerVersion: null,
          endReason: `Ended by moving production to v${version.version}${input.reason ? `: ${input.reason}` : ""}`,
        })
        .where(and(eq(experiments.id, running.id), eq(experiments.status, "running")));
    await releaseProduction(t, app, version, actor);
  });
  forgetLookups(db, "prompts", ...side.lookups);
  return ownLabels(db, owner, kind, subjectId);
}

export async function deleteOwnLabel(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
  name: string,
): Promise<PromptLabels> {
  const { app } = await ownSubject(db, owner, kind, subjectId);
  await removeLabel(db, app.id, name, { id: owner.id });
  forgetLookups(db, "prompts");
  return ownLabels(db, owner, kind, subjectId);
}

/** What the app's callers get now: `production`, and the running experiment if any. */
export async function servingState(
  db: Database,
  app: ApplicationRow,
  subjectId: string,
): Promise<ServingState> {
  const kind: ExperimentKind = app.type === "workflow" ? "workflow" : "prompt";
  const production = await productionOf(db, app.id);
  const [running] = await db
    .select({ experiment: experiments, by: authorName })
    .from(experiments)
    .leftJoin(users, eq(users.id, experiments.startedBy))
    .where(and(eq(experiments.applicationId, app.id), eq(experiments.status, "running")))
    .limit(1);
  return {
    production_version: production?.version ?? null,
    experiment: running
      ? toExperiment(running.experiment, running.by ?? null, { kind, id: subjectId })
      : null,
  };
}

export async function ownServingState(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
): Promise<ServingState> {
  const { app, id } = await ownSubject(db, owner, kind, subjectId);
  return servingState(db, app, id);
}
