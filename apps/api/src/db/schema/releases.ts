import { sql } from "drizzle-orm";
import {
  check,
  index,
  integer,
  json,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { users } from "./auth.ts";
import { createdAt, generatedId, reference, timestamptz } from "./columns.ts";

/** What a version holds, by the kind of its app (the payload's type is its kind's: decision 075). */
export type AppVersionKind = "prompt" | "workflow";

/**
 * Every version of every app (migration 0054, docs/decisions/075): immutable, numbered from 1 per
 * application. `payload` is the kind's settings (a prompt's template, schemas and model settings;
 * a workflow's provider configuration, secrets sealed), typed and read by the kind's own module.
 * `json`, not `jsonb`: a prompt's input_schema keeps the creator's property order.
 */
export const appVersions = pgTable(
  "app_versions",
  {
    id: generatedId(),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    version: integer("version").notNull(),
    kind: text("kind", { enum: ["prompt", "workflow"] }).notNull(),
    payload: json("payload").$type<Record<string, unknown>>().notNull(),
    authorId: uuid("author_id").references(() => users.id, { onDelete: "set null" }),
    changelog: text("changelog").notNull().default(""),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("app_versions_app_version_key").on(t.applicationId, t.version),
    check("app_versions_kind_check", sql`${t.kind} in ('prompt', 'workflow')`),
  ],
);
export type AppVersionRow = typeof appVersions.$inferSelect;

/**
 * Every label of an app, each pointing at one version: `production` (what callers get by default),
 * `staging` and the creator's own. `latest` is no row: it is the newest version.
 */
export const appLabels = pgTable(
  "app_labels",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    name: text("name").notNull(),
    versionId: reference("version_id", () => appVersions.id, "cascade"),
    movedBy: uuid("moved_by").references(() => users.id, { onDelete: "set null" }),
    movedAt: timestamptz("moved_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "app_labels_pkey", columns: [t.applicationId, t.name] })],
);

/** Every move of any label, `production` among them: the audit trail of releases and rollbacks. */
export const appLabelMoves = pgTable(
  "app_label_moves",
  {
    id: generatedId(),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    name: text("name").notNull(),
    fromVersion: integer("from_version"),
    toVersion: integer("to_version"),
    actorId: uuid("actor_id").references(() => users.id, { onDelete: "set null" }),
    reason: text("reason").notNull().default(""),
    createdAt: createdAt(),
  },
  (t) => [index("app_label_moves_app_idx").on(t.applicationId, t.createdAt)],
);
