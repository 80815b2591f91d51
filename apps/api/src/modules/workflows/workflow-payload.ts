import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, type AppVersionRow, appVersions, workflows } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import type { VersionPin } from "../releases/pins.ts";
import { pinnedVersion, versionNotFound } from "../releases/versions.ts";

/**
 * A workflow version's payload as stored in `app_versions.payload` (docs/decisions/060, 075): its
 * provider and that provider's configuration (secret fields sealed, as in `workflows`).
 */
export const WorkflowPayloadSchema = z.object({
  provider_slug: z.string().nullable(),
  provider_config: z.record(z.string(), z.unknown()),
  timeout_seconds: z.number().int(),
  max_iterations: z.number().int(),
  enable_logging: z.boolean(),
});
export type WorkflowPayload = z.infer<typeof WorkflowPayloadSchema>;

export type WorkflowRow = typeof workflows.$inferSelect;

/** A workflow version as the workflow code reads it: the store's row with its payload laid out. */
export interface WorkflowVersionRow {
  id: string;
  applicationId: string;
  version: number;
  providerSlug: string | null;
  providerConfig: Record<string, unknown>;
  timeoutSeconds: number;
  maxIterations: number;
  enableLogging: boolean;
  authorId: string | null;
  changelog: string;
  createdAt: Date;
}

export type WorkflowContent = Pick<
  WorkflowVersionRow,
  "providerSlug" | "providerConfig" | "timeoutSeconds" | "maxIterations" | "enableLogging"
>;

export function workflowVersionOf(row: AppVersionRow): WorkflowVersionRow {
  const p = WorkflowPayloadSchema.parse(row.payload);
  return {
    id: row.id,
    applicationId: row.applicationId,
    version: row.version,
    providerSlug: p.provider_slug,
    providerConfig: p.provider_config,
    timeoutSeconds: p.timeout_seconds,
    maxIterations: p.max_iterations,
    enableLogging: p.enable_logging,
    authorId: row.authorId,
    changelog: row.changelog,
    createdAt: row.createdAt,
  };
}

export function workflowPayloadOf(content: WorkflowContent): WorkflowPayload {
  return {
    provider_slug: content.providerSlug,
    provider_config: content.providerConfig as Record<string, unknown>,
    timeout_seconds: content.timeoutSeconds,
    max_iterations: content.maxIterations,
    enable_logging: content.enableLogging,
  };
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
  const [row] = await db
    .select({ workflow: workflows, version: appVersions })
    .from(workflows)
    .innerJoin(appVersions, pinnedVersion(workflows.applicationId, pin))
    .where(eq(workflows.applicationId, app.id))
    .limit(1);
  if (!row) {
    if (!pin) throw notFound("Workflow");
    throw versionNotFound(pin);
  }
  return { workflow: row.workflow, version: workflowVersionOf(row.version) };
}
