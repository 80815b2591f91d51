import { and, desc, eq, inArray, max, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client.ts";
import {
  type AppVersionKind,
  type AppVersionRow,
  appLabels,
  applications,
  appVersions,
  users,
} from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { describePin, LATEST, type VersionPin } from "./pins.ts";

/**
 * The one version store (docs/decisions/075): every app's immutable versions, numbered from 1,
 * whatever its kind. The payload is the kind's (prompts/prompt-payload.ts,
 * workflows/workflow-payload.ts): this module stores and finds versions, it never reads a payload.
 */

export type { AppVersionKind, AppVersionRow };

/**
 * Locks the app's row until the transaction ends: saves, label moves and experiment starts and
 * ends of one app take turns (each reads what the one before it wrote). `no key update`: calls
 * recording invocations of the app (a foreign key's share lock) are not held up.
 */
export async function lockApp(tx: Database, applicationId: string): Promise<void> {
  await tx
    .select({ id: applications.id })
    .from(applications)
    .where(eq(applications.id, applicationId))
    .for("no key update");
}

/**
 * The condition on `app_versions` that picks the version a pin names, for the app whose id is
 * `applicationId` (a value or a column of the query it joins): `production` and every other label
 * through `app_labels`, `latest` the newest, a number itself. One join, so a loader stays one query.
 */
export function pinnedVersion(applicationId: AnyPgColumn | string, pin?: VersionPin) {
  const app = typeof applicationId === "string" ? sql`${applicationId}::uuid` : applicationId;
  const ofApp =
    typeof applicationId === "string"
      ? eq(appVersions.applicationId, applicationId)
      : eq(appVersions.applicationId, applicationId);
  if (pin && "version" in pin) return and(ofApp, eq(appVersions.version, pin.version));
  if (pin?.label === LATEST)
    return and(
      ofApp,
      eq(
        appVersions.version,
        sql`(select max(v.version) from app_versions v where v.application_id = ${app})`,
      ),
    );
  const label = pin?.label ?? "production";
  return and(
    ofApp,
    eq(
      appVersions.id,
      sql`(select l.version_id from app_labels l where l.application_id = ${app} and l.name = ${label})`,
    ),
  );
}

/** The 404 a pin the app does not have answers, naming it. */
export function versionNotFound(pin: VersionPin): AppError {
  return new AppError(
    "version_not_found",
    `This app has no ${"version" in pin ? "version" : "label"} ${describePin(pin)}`,
  );
}

/** The version a pin names (`production` without one), or undefined. One query. */
export async function findVersion(
  db: Database,
  applicationId: string,
  pin?: VersionPin,
): Promise<AppVersionRow | undefined> {
  const [row] = await db.select().from(appVersions).where(pinnedVersion(applicationId, pin)).limit(1);
  return row;
}

/** The version of an app by its number, or a 404 `version_not_found` naming it. */
export async function versionByNumber(
  db: Database,
  applicationId: string,
  version: number,
): Promise<AppVersionRow> {
  const row = await findVersion(db, applicationId, { version });
  if (!row) throw versionNotFound({ version });
  return row;
}

/** Those of these version numbers the app has. */
export async function versionsByNumber(
  db: Database,
  applicationId: string,
  numbers: number[],
): Promise<Map<number, AppVersionRow>> {
  if (numbers.length === 0) return new Map();
  const rows = await db
    .select()
    .from(appVersions)
    .where(and(eq(appVersions.applicationId, applicationId), inArray(appVersions.version, numbers)));
  return new Map(rows.map((row) => [row.version, row]));
}

/** The app's version with this id, if it is the app's. */
export async function versionById(
  db: Database,
  applicationId: string,
  id: string,
): Promise<AppVersionRow | undefined> {
  const [row] = await db
    .select()
    .from(appVersions)
    .where(and(eq(appVersions.applicationId, applicationId), eq(appVersions.id, id)))
    .limit(1);
  return row;
}

/** What an author is shown as: their display name, else their username. */
export const authorName = sql<string | null>`coalesce(nullif(${users.displayName}, ''), ${users.username})`;

/** Every version of an app, newest first, with its author's name. */
export async function versionsOf(
  db: Database,
  applicationId: string,
): Promise<Array<{ version: AppVersionRow; author: string | null }>> {
  return db
    .select({ version: appVersions, author: authorName })
    .from(appVersions)
    .leftJoin(users, eq(users.id, appVersions.authorId))
    .where(eq(appVersions.applicationId, applicationId))
    .orderBy(desc(appVersions.version));
}

/** The names of these users as authors are shown (display name, else username). */
export async function authorNames(db: Database, ids: (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await db
    .select({ id: users.id, name: authorName })
    .from(users)
    .where(inArray(users.id, wanted));
  return new Map(rows.map((row) => [row.id, row.name ?? ""]));
}

/** What a new version is: its app, its kind, the kind's payload, who wrote it and why. */
interface NewVersion {
  applicationId: string;
  kind: AppVersionKind;
  payload: Record<string, unknown>;
  authorId: string | null;
  changelog: string;
}

async function insertVersion(
  tx: Database,
  version: NewVersion & { version: number },
): Promise<AppVersionRow> {
  const [row] = await tx.insert(appVersions).values(version).returning();
  if (!row) throw new Error("version insert returned nothing");
  return row;
}

/**
 * The app's next version, under its row lock (lockApp), so concurrent saves get consecutive
 * numbers. The payload is the kind's, checked by its module before.
 */
export async function insertNextVersion(
  tx: Database,
  applicationId: string,
  kind: AppVersionKind,
  payload: Record<string, unknown>,
  { authorId, changelog }: { authorId: string | null; changelog: string },
): Promise<AppVersionRow> {
  await lockApp(tx, applicationId);
  const [latest] = await tx
    .select({ n: max(appVersions.version) })
    .from(appVersions)
    .where(eq(appVersions.applicationId, applicationId));
  const version = (latest?.n ?? 0) + 1;
  return insertVersion(tx, { applicationId, version, kind, payload, authorId, changelog });
}

/**
 * A new app's first version, with `production` pointing at it (no move is audited: nothing was
 * released before it).
 */
export async function insertFirstVersion(
  tx: Database,
  applicationId: string,
  kind: AppVersionKind,
  payload: Record<string, unknown>,
  { authorId, changelog }: { authorId: string | null; changelog: string },
): Promise<AppVersionRow> {
  const row = await insertVersion(tx, { applicationId, version: 1, kind, payload, authorId, changelog });
  await tx
    .insert(appLabels)
    .values({ applicationId, name: "production", versionId: row.id, movedBy: authorId });
  return row;
}
