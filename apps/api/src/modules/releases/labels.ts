import type { LabelMove, PromptLabel } from "@promptmint/contracts";
import { and, desc, eq, max } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type AppVersionRow, appLabelMoves, appLabels, appVersions, users } from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { LATEST, PRODUCTION } from "./pins.ts";
import { authorName, lockApp } from "./versions.ts";

/**
 * Labels point at versions (docs/decisions/057, 060, 075), for every kind of app alike: each is a
 * row of `app_labels`, `production` (what callers get by default) among them; `latest` is the
 * newest version, set by every save and never moved by hand. Each move of any label, a release or
 * a rollback, is one `app_label_moves` row written in the same transaction as the move. What a
 * release must pass first (the price guard, an eval gate) is the kind's (release-kinds.ts).
 */

export interface LabelActor {
  id: string | null;
  reason?: string;
}

/** The version `production` points at, or null (an app whose first version is not saved yet). */
export async function productionOf(db: Database, applicationId: string): Promise<AppVersionRow | null> {
  const [row] = await db
    .select({ version: appVersions })
    .from(appLabels)
    .innerJoin(appVersions, eq(appVersions.id, appLabels.versionId))
    .where(and(eq(appLabels.applicationId, applicationId), eq(appLabels.name, PRODUCTION)))
    .limit(1);
  return row?.version ?? null;
}

/** Every label of an app with the version it points at, `production` and `latest` first. */
export async function labelsOf(db: Database, applicationId: string): Promise<PromptLabel[]> {
  const [latest] = await db
    .select({ version: max(appVersions.version), at: max(appVersions.createdAt) })
    .from(appVersions)
    .where(eq(appVersions.applicationId, applicationId));
  const rows = await db
    .select({
      name: appLabels.name,
      version: appVersions.version,
      movedAt: appLabels.movedAt,
      by: authorName,
    })
    .from(appLabels)
    .innerJoin(appVersions, eq(appVersions.id, appLabels.versionId))
    .leftJoin(users, eq(users.id, appLabels.movedBy))
    .where(eq(appLabels.applicationId, applicationId))
    .orderBy(appLabels.name);
  const toLabel = (row: (typeof rows)[number]): PromptLabel => ({
    name: row.name,
    version: row.version,
    moved_at: row.movedAt.toISOString(),
    moved_by_name: row.by ?? null,
  });
  const labels: PromptLabel[] = rows.filter((row) => row.name === PRODUCTION).map(toLabel);
  if (latest?.version)
    labels.push({
      name: LATEST,
      version: latest.version,
      moved_at: (latest.at ?? new Date()).toISOString(),
      moved_by_name: null,
    });
  for (const row of rows) if (row.name !== PRODUCTION) labels.push(toLabel(row));
  return labels;
}

/** The moves of an app's labels, newest first. */
export async function labelMovesOf(db: Database, applicationId: string, limit = 100): Promise<LabelMove[]> {
  const rows = await db
    .select({ move: appLabelMoves, actor: authorName })
    .from(appLabelMoves)
    .leftJoin(users, eq(users.id, appLabelMoves.actorId))
    .where(eq(appLabelMoves.applicationId, applicationId))
    .orderBy(desc(appLabelMoves.createdAt), desc(appLabelMoves.id))
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

/**
 * Points `name` at `version` inside the caller's transaction (the app's row locked first, so
 * moves and saves of one app take turns), with its audit row. A move to where the label already
 * points writes nothing. Answers whether it moved. Callers check what the kind requires of a
 * release before (releaseKind(…).guardServing, .gate): this only moves; and after their commit
 * they forget the cached lookups (the table's trigger tells other processes).
 */
export async function pointLabel(
  tx: Database,
  applicationId: string,
  name: string,
  version: Pick<AppVersionRow, "id" | "applicationId" | "version">,
  actor: LabelActor,
): Promise<boolean> {
  if (name === LATEST) throw invalidFields({ name: "latest is set by every save and cannot be moved" });
  if (version.applicationId !== applicationId) throw new Error("a label points at a version of its own app");
  await lockApp(tx, applicationId);
  const [current] = await tx
    .select({ versionId: appLabels.versionId, version: appVersions.version })
    .from(appLabels)
    .innerJoin(appVersions, eq(appVersions.id, appLabels.versionId))
    .where(and(eq(appLabels.applicationId, applicationId), eq(appLabels.name, name)));
  if (current?.versionId === version.id) return false;
  await tx
    .insert(appLabels)
    .values({ applicationId, name, versionId: version.id, movedBy: actor.id })
    .onConflictDoUpdate({
      target: [appLabels.applicationId, appLabels.name],
      set: { versionId: version.id, movedBy: actor.id, movedAt: new Date() },
    });
  await tx.insert(appLabelMoves).values({
    applicationId,
    name,
    fromVersion: current?.version ?? null,
    toVersion: version.version,
    actorId: actor.id,
    reason: actor.reason ?? "",
  });
  return true;
}

/** Removes one of the creator's labels (`production` and `latest` always exist). */
export async function removeLabel(
  db: Database,
  applicationId: string,
  name: string,
  actor: LabelActor,
): Promise<void> {
  if (name === PRODUCTION || name === LATEST)
    throw invalidFields({ name: `${name} always points at a version and cannot be removed` });
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await lockApp(t, applicationId);
    const [gone] = await t
      .delete(appLabels)
      .where(and(eq(appLabels.applicationId, applicationId), eq(appLabels.name, name)))
      .returning({ versionId: appLabels.versionId });
    if (!gone) throw new AppError("not_found", `This app has no label ${name}`);
    const [from] = await t
      .select({ version: appVersions.version })
      .from(appVersions)
      .where(eq(appVersions.id, gone.versionId));
    await t.insert(appLabelMoves).values({
      applicationId,
      name,
      fromVersion: from?.version ?? null,
      toVersion: null,
      actorId: actor.id,
      reason: actor.reason ?? "",
    });
  });
}
