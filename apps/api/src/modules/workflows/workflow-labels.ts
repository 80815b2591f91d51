import type { LabelMove, PromptLabel } from "@promptmint/contracts";
import { and, desc, eq, max, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import {
  type ApplicationRow,
  users,
  workflowLabelMoves,
  workflowLabels,
  workflows,
  workflowVersions,
} from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { describePin, LATEST, PRODUCTION, type VersionPin } from "../prompts/load-prompt.ts";

/**
 * A workflow app's versions and labels (docs/decisions/060), as prompt apps have them (decision
 * 057): `production` is `workflows.active_version` (what callers get by default), `latest` the
 * newest version (set by every save, never moved by hand), every other label a row of
 * `workflow_labels`. Each move of any label is one `workflow_label_moves` row written in the same
 * transaction as the move.
 */

export type WorkflowRow = typeof workflows.$inferSelect;
export type WorkflowVersionRow = typeof workflowVersions.$inferSelect;

export interface LabelActor {
  id: string | null;
  reason?: string;
}

/**
 * The app's workflow with the version a call is answered by: `production`, or the version or
 * label the caller pinned (404 `version_not_found` naming it). One query either way.
 */
export async function loadWorkflowVersion(
  db: Database,
  app: ApplicationRow,
  pin?: VersionPin,
): Promise<{ workflow: WorkflowRow; version: WorkflowVersionRow }> {
  if (app.type !== "workflow") throw notFound("Workflow");
  const sameWorkflow = eq(workflowVersions.workflowId, workflows.id);
  const join =
    !pin || ("label" in pin && pin.label === PRODUCTION)
      ? and(sameWorkflow, eq(workflowVersions.version, workflows.activeVersion))
      : "version" in pin
        ? and(sameWorkflow, eq(workflowVersions.version, pin.version))
        : pin.label === LATEST
          ? and(
              sameWorkflow,
              eq(
                workflowVersions.version,
                sql`(select max(v.version) from workflow_versions v where v.workflow_id = ${workflows.id})`,
              ),
            )
          : undefined;
  const [row] = join
    ? await db
        .select({ workflow: workflows, version: workflowVersions })
        .from(workflows)
        .innerJoin(workflowVersions, join)
        .where(eq(workflows.applicationId, app.id))
        .limit(1)
    : await db
        .select({ workflow: workflows, version: workflowVersions })
        .from(workflows)
        .innerJoin(
          workflowLabels,
          and(
            eq(workflowLabels.workflowId, workflows.id),
            eq(workflowLabels.name, (pin as { label: string }).label),
          ),
        )
        .innerJoin(workflowVersions, eq(workflowVersions.id, workflowLabels.versionId))
        .where(eq(workflows.applicationId, app.id))
        .limit(1);
  if (!row) {
    if (!pin) throw notFound("Workflow");
    throw new AppError(
      "version_not_found",
      `This app has no ${"version" in pin ? "version" : "label"} ${describePin(pin)}`,
    );
  }
  return row;
}

/** Every label of a workflow with the version it points at, `production` and `latest` first. */
export async function workflowLabelsOf(db: Database, workflow: WorkflowRow): Promise<PromptLabel[]> {
  const [latest] = await db
    .select({ version: max(workflowVersions.version) })
    .from(workflowVersions)
    .where(eq(workflowVersions.workflowId, workflow.id));
  const [lastRelease] = await db
    .select({ at: workflowLabelMoves.createdAt, by: users.username })
    .from(workflowLabelMoves)
    .leftJoin(users, eq(users.id, workflowLabelMoves.actorId))
    .where(and(eq(workflowLabelMoves.workflowId, workflow.id), eq(workflowLabelMoves.name, PRODUCTION)))
    .orderBy(desc(workflowLabelMoves.createdAt))
    .limit(1);
  const own = await db
    .select({
      name: workflowLabels.name,
      version: workflowVersions.version,
      movedAt: workflowLabels.movedAt,
      by: users.username,
    })
    .from(workflowLabels)
    .innerJoin(workflowVersions, eq(workflowVersions.id, workflowLabels.versionId))
    .leftJoin(users, eq(users.id, workflowLabels.movedBy))
    .where(eq(workflowLabels.workflowId, workflow.id))
    .orderBy(workflowLabels.name);
  const labels: PromptLabel[] = [
    {
      name: PRODUCTION,
      version: workflow.activeVersion,
      moved_at: (lastRelease?.at ?? workflow.updatedAt).toISOString(),
      moved_by_name: lastRelease?.by ?? null,
    },
  ];
  if (latest?.version)
    labels.push({
      name: LATEST,
      version: latest.version,
      moved_at: workflow.updatedAt.toISOString(),
      moved_by_name: null,
    });
  for (const label of own)
    labels.push({
      name: label.name,
      version: label.version,
      moved_at: label.movedAt.toISOString(),
      moved_by_name: label.by ?? null,
    });
  return labels;
}

/** The moves of a workflow's labels, newest first. */
export async function workflowLabelMovesOf(
  db: Database,
  workflowId: string,
  limit = 100,
): Promise<LabelMove[]> {
  const rows = await db
    .select({ move: workflowLabelMoves, actor: users.username })
    .from(workflowLabelMoves)
    .leftJoin(users, eq(users.id, workflowLabelMoves.actorId))
    .where(eq(workflowLabelMoves.workflowId, workflowId))
    .orderBy(desc(workflowLabelMoves.createdAt), desc(workflowLabelMoves.id))
    .limit(limit);
  return rows.map(({ move, actor }) => ({
    id: move.id,
    name: move.name,
    from_version: move.fromVersion,
    to_version: move.toVersion,
    actor_name: actor ?? null,
    reason: move.reason,
    created_at: move.createdAt.toISOString(),
  }));
}

/** A workflow's version by its number, or a 404 `version_not_found` naming it. */
export async function workflowVersionByNumber(
  db: Database,
  workflowId: string,
  version: number,
): Promise<WorkflowVersionRow> {
  const [row] = await db
    .select()
    .from(workflowVersions)
    .where(and(eq(workflowVersions.workflowId, workflowId), eq(workflowVersions.version, version)))
    .limit(1);
  if (!row) throw new AppError("version_not_found", `This app has no version v${version}`);
  return row;
}

/**
 * Points `name` at `version` inside the caller's transaction (the workflow's row locked first, so
 * moves and saves of one workflow take turns), with its audit row. A move to where the label
 * already points writes nothing. Answers whether it moved. `production` is moved by
 * promoteWorkflowVersion (workflows.service.ts), which also keeps the app's provider fields.
 */
export async function pointWorkflowLabel(
  tx: Database,
  workflowId: string,
  name: string,
  version: WorkflowVersionRow,
  actor: LabelActor,
): Promise<boolean> {
  if (name === LATEST) throw invalidFields({ name: "latest is set by every save and cannot be moved" });
  const [locked] = await tx
    .select({ activeVersion: workflows.activeVersion })
    .from(workflows)
    .where(eq(workflows.id, workflowId))
    .for("update");
  if (!locked) throw notFound("Workflow");
  let from: number | null = null;
  if (name === PRODUCTION) {
    if (locked.activeVersion === version.version) return false;
    from = locked.activeVersion;
    await tx
      .update(workflows)
      .set({ activeVersion: version.version, updatedAt: new Date() })
      .where(eq(workflows.id, workflowId));
  } else {
    const [current] = await tx
      .select({ versionId: workflowLabels.versionId, version: workflowVersions.version })
      .from(workflowLabels)
      .innerJoin(workflowVersions, eq(workflowVersions.id, workflowLabels.versionId))
      .where(and(eq(workflowLabels.workflowId, workflowId), eq(workflowLabels.name, name)));
    if (current?.versionId === version.id) return false;
    from = current?.version ?? null;
    await tx
      .insert(workflowLabels)
      .values({ workflowId, name, versionId: version.id, movedBy: actor.id })
      .onConflictDoUpdate({
        target: [workflowLabels.workflowId, workflowLabels.name],
        set: { versionId: version.id, movedBy: actor.id, movedAt: new Date() },
      });
  }
  await tx.insert(workflowLabelMoves).values({
    workflowId,
    name,
    fromVersion: from,
    toVersion: version.version,
    actorId: actor.id,
    reason: actor.reason ?? "",
  });
  return true;
}

/** Removes one of the creator's labels (`production` and `latest` always exist). */
export async function removeWorkflowLabel(
  db: Database,
  workflowId: string,
  name: string,
  actor: LabelActor,
): Promise<void> {
  if (name === PRODUCTION || name === LATEST)
    throw invalidFields({ name: `${name} always points at a version and cannot be removed` });
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await t.select({ id: workflows.id }).from(workflows).where(eq(workflows.id, workflowId)).for("update");
    const [gone] = await t
      .delete(workflowLabels)
      .where(and(eq(workflowLabels.workflowId, workflowId), eq(workflowLabels.name, name)))
      .returning({ versionId: workflowLabels.versionId });
    if (!gone) throw new AppError("not_found", `This app has no label ${name}`);
    const [from] = await t
      .select({ version: workflowVersions.version })
      .from(workflowVersions)
      .where(eq(workflowVersions.id, gone.versionId));
    await t.insert(workflowLabelMoves).values({
      workflowId,
      name,
      fromVersion: from?.version ?? null,
      toVersion: null,
      actorId: actor.id,
      reason: actor.reason ?? "",
    });
  });
}
