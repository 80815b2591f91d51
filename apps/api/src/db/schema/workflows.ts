import { boolean, integer, jsonb, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { createdAt, generatedId, reference, updatedAt } from "./columns.ts";

/** Seeded at start-up from the provider registry, so the list has stable ids. */
export const workflowProviders = pgTable("workflow_providers", {
  id: generatedId(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  description: text("description").notNull(),
  configSchema: jsonb("config_schema").notNull(),
  supportsStreaming: boolean("supports_streaming").notNull().default(false),
});

/** A workflow app's provider settings. Secret fields of provider_config are stored encrypted. */
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
    changelog: text("changelog").notNull().default(""),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("workflow_versions_workflow_version_key").on(t.workflowId, t.version)],
);
