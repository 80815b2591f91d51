import { boolean, integer, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { generatedId, updatedAt } from "./columns.ts";

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
  updatedAt: updatedAt(),
});
