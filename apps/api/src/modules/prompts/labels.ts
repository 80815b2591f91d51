import type { LabelMove, PromptLabel } from "@promptmint/contracts";
import { and, desc, eq, inArray, max } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { promptLabelMoves, promptLabels, prompts, promptVersions, users } from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import { LATEST, PRODUCTION } from "./load-prompt.ts";

/**
 * Labels point at versions (docs/decisions/057). `production` is what callers get by default and
 * lives in `prompts.active_version_id` (the one column the paid path joins on); `latest` is the
 * newest version, set by every save and never moved by hand; every other label is a row of
 * `prompt_labels`. Each move of any label, a release or a rollback, is one `prompt_label_moves`
 * row written in the same transaction as the move.
 */

type PromptRow = typeof prompts.$inferSelect;
type VersionRow = typeof promptVersions.$inferSelect;

export interface LabelActor {
  id: string | null;
  reason?: string;
}

/** Every label of a prompt with the version it points at, `production` and `latest` first. */
export async function labelsOf(db: Database, prompt: PromptRow): Promise<PromptLabel[]> {
  const [latest] = await db
    .select({ version: max(promptVersions.version) })
    .from(promptVersions)
    .where(eq(promptVersions.promptId, prompt.id));
  const [production] = prompt.activeVersionId
    ? await db
        .select({ version: promptVersions.version })
        .from(promptVersions)
        .where(eq(promptVersions.id, prompt.activeVersionId))
    : [];
  const [lastRelease] = await db
    .select({ at: promptLabelMoves.createdAt, by: users.username })
    .from(promptLabelMoves)
    .leftJoin(users, eq(users.id, promptLabelMoves.actorId))
    .where(and(eq(promptLabelMoves.promptId, prompt.id), eq(promptLabelMoves.name, PRODUCTION)))
    .orderBy(desc(promptLabelMoves.createdAt))
    .limit(1);
  const own = await db
    .select({
      name: promptLabels.name,
      version: promptVersions.version,
      movedAt: promptLabels.movedAt,
      by: users.username,
    })
    .from(promptLabels)
    .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
    .leftJoin(users, eq(users.id, promptLabels.movedBy))
    .where(eq(promptLabels.promptId, prompt.id))
    .orderBy(promptLabels.name);
  const labels: PromptLabel[] = [];
  if (production)
    labels.push({
      name: PRODUCTION,
      version: production.version,
      moved_at: (lastRelease?.at ?? prompt.updatedAt).toISOString(),
      moved_by_name: lastRelease?.by ?? null,
    });
  if (latest?.version)
    labels.push({
      name: LATEST,
      version: latest.version,
      moved_at: prompt.updatedAt.toISOString(),
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

/** The moves of a prompt's labels, newest first. */
export async function labelMovesOf(db: Database, promptId: string, limit = 100): Promise<LabelMove[]> {
  const rows = await db
    .select({ move: promptLabelMoves, actor: users.username })
    .from(promptLabelMoves)
    .leftJoin(users, eq(users.id, promptLabelMoves.actorId))
    .where(eq(promptLabelMoves.promptId, promptId))
    .orderBy(desc(promptLabelMoves.createdAt), desc(promptLabelMoves.id))
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

/** The version of a prompt by its number, or a 404 naming it. */
export async function versionByNumber(db: Database, promptId: string, version: number): Promise<VersionRow> {
  const [row] = await db
    .select()
    .from(promptVersions)
    .where(and(eq(promptVersions.promptId, promptId), eq(promptVersions.version, version)))
    .limit(1);
  if (!row) throw new AppError("version_not_found", `This app has no version v${version}`);
  return row;
}

/**
 * Points `name` at `version` inside the caller's transaction (the prompt's row locked first, so
 * moves and saves of one prompt take turns), with its audit row. A move to where the label already
 * points writes nothing. Answers whether it moved. Callers check the price guard (and, for
 * `production`, a required eval run) before: this only moves; and after their commit they
 * forget the cached prompts (`forgetLookups(db, "prompts")`).
 */
export async function pointLabel(
  tx: Database,
  prompt: PromptRow,
  name: string,
  version: VersionRow,
  actor: LabelActor,
): Promise<boolean> {
  if (name === LATEST) throw invalidFields({ name: "latest is set by every save and cannot be moved" });
  await tx.select({ id: prompts.id }).from(prompts).where(eq(prompts.id, prompt.id)).for("update");
  let from: number | null = null;
  if (name === PRODUCTION) {
    const [current] = await tx
      .select({ id: promptVersions.id, version: promptVersions.version })
      .from(prompts)
      .leftJoin(promptVersions, eq(promptVersions.id, prompts.activeVersionId))
      .where(eq(prompts.id, prompt.id));
    if (current?.id === version.id) return false;
    from = current?.version ?? null;
    await tx
      .update(prompts)
      .set({ activeVersionId: version.id, updatedAt: new Date() })
      .where(eq(prompts.id, prompt.id));
  } else {
    const [current] = await tx
      .select({ versionId: promptLabels.versionId, version: promptVersions.version })
      .from(promptLabels)
      .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
      .where(and(eq(promptLabels.promptId, prompt.id), eq(promptLabels.name, name)));
    if (current?.versionId === version.id) return false;
    from = current?.version ?? null;
    await tx
      .insert(promptLabels)
      .values({ promptId: prompt.id, name, versionId: version.id, movedBy: actor.id })
      .onConflictDoUpdate({
        target: [promptLabels.promptId, promptLabels.name],
        set: { versionId: version.id, movedBy: actor.id, movedAt: new Date() },
      });
  }
  await tx.insert(promptLabelMoves).values({
    promptId: prompt.id,
    name,
    fromVersion: from,
    toVersion: version.version,
    actorId: actor.id,
    reason: actor.reason ?? "",
  });
  return true;
}

/** Removes one of the creator's labels (`production` and `latest` always exist). */
export async function removeLabel(
  db: Database,
  prompt: PromptRow,
  name: string,
  actor: LabelActor,
): Promise<void> {
  if (name === PRODUCTION || name === LATEST)
    throw invalidFields({ name: `${name} always points at a version and cannot be removed` });
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await t.select({ id: prompts.id }).from(prompts).where(eq(prompts.id, prompt.id)).for("update");
    const removed = await t
      .delete(promptLabels)
      .where(and(eq(promptLabels.promptId, prompt.id), eq(promptLabels.name, name)))
      .returning({ versionId: promptLabels.versionId });
    const [gone] = removed;
    if (!gone) throw new AppError("not_found", `This app has no label ${name}`);
    const [from] = await t
      .select({ version: promptVersions.version })
      .from(promptVersions)
      .where(inArray(promptVersions.id, [gone.versionId]));
    await t.insert(promptLabelMoves).values({
      promptId: prompt.id,
      name,
      fromVersion: from?.version ?? null,
      toVersion: null,
      actorId: actor.id,
      reason: actor.reason ?? "",
    });
  });
  forgetLookups(db, "prompts");
}
