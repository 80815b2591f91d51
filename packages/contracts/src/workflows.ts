import { z } from "zod";
import { UuidSchema } from "./ids.ts";
import { LabelMoveSchema, PromptLabelSchema } from "./prompts.ts";

/** One field of a provider's configuration form (JSON-schema style, drives the editor's form). */
export const ConfigPropertySchema = z.object({
  title: z.string(),
  description: z.string(),
  type: z.enum(["string", "number", "boolean"]),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  enum: z.array(z.string()).optional(),
  /** Secrets are stored encrypted and returned masked ('••••' + last 4). */
  secret: z.boolean().optional(),
  format: z.enum(["uri"]).optional(),
});

export const ConfigSchemaSchema = z.object({
  type: z.literal("object"),
  properties: z.record(z.string(), ConfigPropertySchema),
  required: z.array(z.string()),
});
export type ConfigSchema = z.infer<typeof ConfigSchemaSchema>;

export const WorkflowProviderSchema = z.object({
  id: z.string(),
  slug: z.enum(["dify", "n8n", "flowise", "webhook"]),
  name: z.string(),
  description: z.string(),
  config_schema: ConfigSchemaSchema,
  supports_streaming: z.boolean(),
});
export type WorkflowProvider = z.infer<typeof WorkflowProviderSchema>;
export const WorkflowProviderListSchema = z.array(WorkflowProviderSchema);

export const ProviderConfigValuesSchema = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean()]),
);

export const WORKFLOW_DEFAULTS = { timeout_seconds: 300, max_iterations: 10, enable_logging: true } as const;

/**
 * `GET /app/{slug}/workflow/`: id is the workflow's id used by `/workflows/{id}/versions/`. The
 * settings are the latest version's (what the editor edits); callers get `production_version`
 * (docs/decisions/060).
 */
export const WorkflowConfigSchema = z.object({
  id: z.string(),
  application_slug: z.string(),
  provider: WorkflowProviderSchema.nullable(),
  /** Secrets masked. */
  provider_config: ProviderConfigValuesSchema,
  timeout_seconds: z.number().int(),
  max_iterations: z.number().int(),
  enable_logging: z.boolean(),
  /** The latest version: what these settings are. */
  current_version: z.number().int(),
  /** What callers get unless they pin another: the `production` label. */
  production_version: z.number().int(),
  /** Every label (`production`, `latest`, the creator's own) and the version it points at. */
  labels: z.array(PromptLabelSchema),
});
export type WorkflowConfig = z.infer<typeof WorkflowConfigSchema>;

export const UpdateWorkflowConfigSchema = z.strictObject({
  /** Provider slug (dify, n8n, flowise, webhook). */
  provider: z.enum(["dify", "n8n", "flowise", "webhook"]).optional(),
  /** Send a secret's mask back unchanged to keep the stored secret. */
  provider_config: ProviderConfigValuesSchema.optional(),
  timeout_seconds: z
    .number()
    .int()
    .min(1, "must be between 1 and 900")
    .max(900, "must be between 1 and 900")
    .optional(),
  max_iterations: z
    .number()
    .int()
    .min(1, "must be between 1 and 100")
    .max(100, "must be between 1 and 100")
    .optional(),
  enable_logging: z.boolean().optional(),
  changelog: z.string().max(500).optional(),
  /**
   * Also move `production` to the saved version. A live app's save changes nothing for its callers
   * without it; a draft app's save always moves `production` (nobody calls it yet).
   */
  promote: z.boolean().optional(),
});
export type UpdateWorkflowConfig = z.infer<typeof UpdateWorkflowConfigSchema>;

export const WorkflowTestRequestSchema = z.strictObject({
  provider: z.enum(["dify", "n8n", "flowise", "webhook"]).optional(),
  provider_config: ProviderConfigValuesSchema.default({}),
});

export const WorkflowTestResponseSchema = z.object({
  success: z.boolean(),
  message: z.string(),
  error: z.string().nullable(),
  app_info: z.record(z.string(), z.unknown()).nullable(),
});
export type WorkflowTestResponse = z.infer<typeof WorkflowTestResponseSchema>;

export const WorkflowVersionSchema = z.object({
  id: z.string(),
  version: z.number().int(),
  provider: z.string().nullable(),
  provider_config: ProviderConfigValuesSchema,
  timeout_seconds: z.number().int(),
  max_iterations: z.number().int(),
  enable_logging: z.boolean(),
  changelog: z.string(),
  created_at: z.string(),
  /** Whether callers get this version (`production` points at it). */
  is_active: z.boolean(),
  author_name: z.string().nullable(),
  /** The labels pointing at this version. */
  labels: z.array(z.string()),
});
export type WorkflowVersion = z.infer<typeof WorkflowVersionSchema>;
export const WorkflowVersionListSchema = z.array(WorkflowVersionSchema);
export const RestoreWorkflowVersionSchema = z.strictObject({
  version_id: UuidSchema,
  changelog: z.string().max(500).optional(),
  /** As for a save: also move `production` to the restored copy (a draft app's always moves). */
  promote: z.boolean().optional(),
});

/** `GET /workflows/{id}/labels/`: a workflow's labels and their moves (newest first, at most 100). */
export const WorkflowLabelsSchema = z.object({
  labels: z.array(PromptLabelSchema),
  moves: z.array(LabelMoveSchema),
});
export type WorkflowLabels = z.infer<typeof WorkflowLabelsSchema>;
