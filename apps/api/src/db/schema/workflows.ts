import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { users } from "./auth.ts";
import { createdAt, generatedId, reference, timestamptz, updatedAt } from "./columns.ts";

/** Seeded at start-up from the provider registry, so the list has stable ids. */
export const workflowProviders = pgTable("workflow_providers", {
  id: generatedId(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  description: text("description").notNull(),
  configSchema: jsonb("config_schema").notNull(),
  supportsStreaming: boolean("supports_streaming").notNull().default(false),
});

/**
 * A workflow app's provider settings as last saved (what the editor edits). Secret fields of
 * provider_config are stored encrypted. Calls never read them here: they read the version at
 * `production` (`active_version`) or the one they pinned (docs/decisions/060).
 */
export const workflows = pgTable("workflows", {
  id: generatedId(),
  applicationId: uuid("application_id")
    .notNull()
    .unique()
    .references(() => applications.id, { onDelete: "cascade" }),
  providerSlug: text("provider_slug"),
  providerConfig: jsonb("provider_config").notNull().default({}),
  timeoutSeconds: integer("timeout_seconds").notNull().default(300),
  maxIterations: integer("max_iterations").notNull().default(10),
  enableLogging: boolean("enable_logging").notNull().default(true),
  /** What callers get by default: the number of the version the `production` label points at. */
  activeVersion: integer("active_version").notNull().default(1),
  updatedAt: updatedAt(),
});

export const workflowVersions = pgTable(
  "workflow_versions",
  {
    id: generatedId(),
    workflowId: reference("workflow_id", () => workflows.id, "cascade"),
    version: integer("version").notNull(),
    providerSlug: text("provider_slug"),
    providerConfig: jsonb("provider_config").notNull(),
    timeoutSeconds: integer("timeout_seconds").notNull(),
    maxIterations: integer("max_iterations").notNull(),
    enableLogging: boolean("enable_logging").notNull(),
    authorId: uuid("author_id").references(() => users.id, { onDelete: "set null" }),
    changelog: text("changelog").notNull().default(""),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("workflow_versions_workflow_version_key").on(t.workflowId, t.version)],
);

/**
 * Labels other than `production` (which is `workflows.active_version`) and `latest` (the newest
 * version): `staging` and the creator's own, each pointing at one version (docs/decisions/060).
 */
export const workflowLabels = pgTable(
  "workflow_labels",
  {
    workflowId: reference("workflow_id", () => workflows.id, "cascade"),
    name: text("name").notNull(),
    versionId: reference("version_id", () => workflowVersions.id, "cascade"),
    movedBy: uuid("moved_by").references(() => users.id, { onDelete: "set null" }),
    movedAt: timestamptz("moved_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "workflow_labels_pkey", columns: [t.workflowId, t.name] })],
);

/** Every move of a workflow's label, `production` among them: releases and rollbacks, audited. */
export const workflowLabelMoves = pgTable(
  "workflow_label_moves",
  {
    id: generatedId(),
    workflowId: reference("workflow_id", () => workflows.id, "cascade"),
    name: text("name").notNull(),
    fromVersion: integer("from_version"),
    toVersion: integer("to_version"),
    actorId: uuid("actor_id").references(() => users.id, { onDelete: "set null" }),
    reason: text("reason").notNull().default(""),
    createdAt: createdAt(),
  },
  (t) => [index("workflow_label_moves_workflow_idx").on(t.workflowId, t.createdAt)],
);
