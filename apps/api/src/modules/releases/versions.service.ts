import { isUuid } from "@promptmint/contracts";
import type { Database } from "../../db/client.ts";
import { notFound } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { type ExperimentKind, ownSubject } from "./experiment-subjects.ts";
import { labelsOf, productionOf } from "./labels.ts";
import { releaseKind } from "./release-kinds.ts";
import { versionById, versionsOf } from "./versions.ts";

/**
 * The creator's versions of an app of either kind (docs/decisions/057, 060, 075): list them,
 * restore one. The ownership check, the lookup and the list are one code path for every kind;
 * what a version shows of its payload and how a kind saves a copy are the kind's (release-kinds.ts).
 */

/** An app's versions, newest first, each with its author and the labels pointing at it. */
export async function ownVersions(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
): Promise<unknown[]> {
  const { app } = await ownSubject(db, owner, kind, subjectId);
  const side = releaseKind(kind);
  const labels = await labelsOf(db, app.id);
  const production = await productionOf(db, app.id);
  const rows = await versionsOf(db, app.id);
  return rows.map((row) =>
    side.listedVersion(row.version, { production, labels, author: row.author ?? null }),
  );
}

/**
 * Restoring never rewrites history: the chosen version's payload becomes a new latest version
 * through the kind's save path, which takes `production` only with `promote` (or before the app
 * is live). A rollback of what callers get is a move of `production`, not a restore.
 */
export async function restoreOwnVersion(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
  input: { version_id: string; changelog?: string; promote?: boolean },
  { feePercent }: { feePercent: number },
): Promise<unknown> {
  const { app } = await ownSubject(db, owner, kind, subjectId);
  const side = releaseKind(kind);
  const source = isUuid(input.version_id) ? await versionById(db, app.id, input.version_id) : undefined;
  if (!source) throw notFound(`${side.noun} version`);
  return side.restore(db, app, source, {
    authorId: owner.id,
    changelog: input.changelog ?? `Restored version ${source.version}`,
    promote: input.promote ?? false,
    feePercent,
  });
}
