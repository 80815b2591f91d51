import { z } from "zod";

export const SchemaFieldTypeSchema = z.enum(["string", "number", "integer", "boolean", "array", "object"]);
export type SchemaFieldType = z.infer<typeof SchemaFieldTypeSchema>;

/** One property of an input/output schema (SPEC §3 "Schema"). */
export const SchemaPropertySchema = z.strictObject({
  type: SchemaFieldTypeSchema,
  description: z.string().max(1000).optional(),
  default: z.unknown().optional(),
  enum: z
    .array(z.union([z.string(), z.number(), z.boolean()]))
    .max(200)
    .optional(),
  minLength: z.number().int().min(0).optional(),
  maxLength: z.number().int().min(0).optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  pattern: z.string().max(500).optional(),
  items: z
    .strictObject({ type: SchemaFieldTypeSchema, description: z.string().max(1000).optional() })
    .optional(),
});
export type SchemaProperty = z.infer<typeof SchemaPropertySchema>;

export const IoSchemaSchema = z.strictObject({
  type: z.literal("object"),
  properties: z.record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a valid variable name"),
    SchemaPropertySchema,
  ),
  required: z.array(z.string()).default([]),
  additionalProperties: z.literal(false).default(false),
});
export type IoSchema = z.infer<typeof IoSchemaSchema>;

/** Fields a schema may declare when it is saved or tested (each may carry a pattern run on every call). */
export const MAX_SCHEMA_FIELDS = 100;
/**
 * A schema as creators send it: IoSchemaSchema plus a bound on its size. Stored schemas are read
 * with IoSchemaSchema alone, so a schema saved before the bound still loads.
 */
export const NewIoSchemaSchema = IoSchemaSchema.refine(
  (schema) => Object.keys(schema.properties).length <= MAX_SCHEMA_FIELDS,
  { message: `must declare at most ${MAX_SCHEMA_FIELDS} fields`, path: ["properties"] },
).refine((schema) => schema.required.length <= MAX_SCHEMA_FIELDS, {
  message: `must list at most ${MAX_SCHEMA_FIELDS} fields`,
  path: ["required"],
});
export const EMPTY_IO_SCHEMA: IoSchema = {
  type: "object",
  properties: {},
  required: [],
  additionalProperties: false,
};

export const PromptVersionSchema = z.object({
  id: z.string(),
  version: z.number().int(),
  system_prompt: z.string(),
  prompt_template: z.string(),
  input_schema: IoSchemaSchema,
  output_schema: IoSchemaSchema.nullable(),
  changelog: z.string(),
  created_at: z.string(),
  is_active: z.boolean(),
});
export type PromptVersion = z.infer<typeof PromptVersionSchema>;
export const PromptVersionListSchema = z.array(PromptVersionSchema);

export const ModelSettingsSchema = z.object({
  model: z.string(),
  temperature: z.number(),
  max_tokens: z.number().int(),
  top_p: z.number(),
  frequency_penalty: z.number(),
  presence_penalty: z.number(),
});

/** `GET /app/{slug}/prompt/`: id is the prompt's id used by `/prompts/{id}/versions/`. */
export const PromptConfigSchema = ModelSettingsSchema.extend({
  id: z.string(),
  application_slug: z.string(),
  current_version: z.number().int(),
  active_version: PromptVersionSchema,
});
export type PromptConfig = z.infer<typeof PromptConfigSchema>;

export const modelSettingLimits = {
  temperature: z.number().min(0, "must be between 0 and 2").max(2, "must be between 0 and 2"),
  max_tokens: z
    .number()
    .int("must be a whole number")
    .min(1, "must be between 1 and 8192")
    .max(8192, "must be between 1 and 8192"),
  top_p: z.number().min(0, "must be between 0 and 1").max(1, "must be between 0 and 1"),
  frequency_penalty: z.number().min(-2, "must be between -2 and 2").max(2, "must be between -2 and 2"),
  presence_penalty: z.number().min(-2, "must be between -2 and 2").max(2, "must be between -2 and 2"),
};

export const UpdatePromptConfigSchema = z.strictObject({
  model: z.string().min(1).max(100).optional(),
  temperature: modelSettingLimits.temperature.optional(),
  max_tokens: modelSettingLimits.max_tokens.optional(),
  top_p: modelSettingLimits.top_p.optional(),
  frequency_penalty: modelSettingLimits.frequency_penalty.optional(),
  presence_penalty: modelSettingLimits.presence_penalty.optional(),
  system_prompt: z.string().max(50_000).optional(),
  prompt_template: z.string().max(50_000).optional(),
  input_schema: NewIoSchemaSchema.optional(),
  output_schema: NewIoSchemaSchema.nullable().optional(),
  changelog: z.string().max(500).optional(),
});
export type UpdatePromptConfig = z.infer<typeof UpdatePromptConfigSchema>;

export const RestoreVersionSchema = z.strictObject({
  version_id: z.string(),
  changelog: z.string().max(500).optional(),
});

export const TestConfigRequestSchema = z.strictObject({
  prompt_template: z.string().max(50_000),
  system_prompt: z.string().max(50_000).optional(),
  model: z.string().max(100).optional(),
  temperature: z.number().optional(),
  max_tokens: z.number().optional(),
  top_p: z.number().optional(),
  frequency_penalty: z.number().optional(),
  presence_penalty: z.number().optional(),
  input_schema: NewIoSchemaSchema.optional(),
  test_inputs: z.record(z.string(), z.unknown()).default({}),
});
export type TestConfigRequest = z.input<typeof TestConfigRequestSchema>;

export const TestConfigResponseSchema = z.object({
  success: z.boolean(),
  message: z.string(),
  error: z.string().nullable(),
  rendered_template: z.string().nullable(),
  detected_variables: z.array(z.string()),
});
export type TestConfigResponse = z.infer<typeof TestConfigResponseSchema>;

export const ModelInfoSchema = z.object({
  id: z.string(),
  label: z.string(),
  provider: z.enum(["openai", "anthropic", "google", "mistral", "openai-compatible", "sandbox"]),
  /** True when the operator configured the provider's key; otherwise calls use the sandbox model (development). */
  configured: z.boolean(),
  env_var: z.string().nullable(),
});
export const ModelCatalogSchema = z.object({
  models: z.array(ModelInfoSchema),
  /** True when calls to unconfigured models are answered by the sandbox model (not production). */
  sandbox_fallback: z.boolean(),
});
export type ModelInfo = z.infer<typeof ModelInfoSchema>;
export type ModelCatalog = z.infer<typeof ModelCatalogSchema>;
