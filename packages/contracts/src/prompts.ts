import { z } from "zod";
import { ApplicationSchema, UpdateApplicationSchema } from "./applications.ts";
import { UuidSchema } from "./ids.ts";

export const SchemaFieldTypeSchema = z.enum(["string", "number", "integer", "boolean", "array", "object"]);
export type SchemaFieldType = z.infer<typeof SchemaFieldTypeSchema>;

/**
 * A value an input may be limited to (SPEC §2 'Allowed Values'): text, a number, true/false, or
 * JSON for object fields (and arrays of arrays). An array field's allowed values are those of its items
 * (docs/decisions/036).
 */
export const AllowedValueSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.unknown()),
  z.record(z.string(), z.unknown()),
]);
export type AllowedValue = z.infer<typeof AllowedValueSchema>;
const AllowedValuesSchema = z.array(AllowedValueSchema).max(200);

/** How an allowed value reads in a form or a message: objects and arrays as JSON. */
export function allowedValueText(value: AllowedValue): string {
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** One property of an input/output schema (SPEC §3 "Schema"). */
export const SchemaPropertySchema = z.strictObject({
  type: SchemaFieldTypeSchema,
  description: z.string().max(1000).optional(),
  default: z.unknown().optional(),
  enum: AllowedValuesSchema.optional(),
  minLength: z.number().int().min(0).optional(),
  maxLength: z.number().int().min(0).optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  pattern: z.string().max(500).optional(),
  items: z
    .strictObject({
      type: SchemaFieldTypeSchema,
      description: z.string().max(1000).optional(),
      enum: AllowedValuesSchema.optional(),
    })
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
  /** Whether callers get it by default: the `production` label points at it. */
  is_active: z.boolean(),
  /** The version's own model settings (docs/decisions/057): promoting it changes them too. */
  model: z.string(),
  temperature: z.number(),
  max_tokens: z.number().int(),
  top_p: z.number(),
  frequency_penalty: z.number(),
  presence_penalty: z.number(),
  /** Who saved it (null once their account is gone). */
  author_name: z.string().nullable(),
  /** The labels pointing at it: `production`, `latest`, `staging`, the creator's own. */
  labels: z.array(z.string()),
});
export type PromptVersion = z.infer<typeof PromptVersionSchema>;
export const PromptVersionListSchema = z.array(PromptVersionSchema);

/** Label names: `production` (what callers get), `latest` (set by every save), and any other. */
export const LabelNameSchema = z
  .string()
  .regex(
    /^[a-z][a-z0-9-]{0,31}$/,
    "must be lowercase letters, digits and dashes, starting with a letter (at most 32)",
  );

/**
 * A label name a label may be given: not shaped like a version (`v0`, `v12`, `v-1`), which a pin
 * reads as a version, never as a label (docs/decisions/072).
 */
export const NewLabelNameSchema = LabelNameSchema.refine(
  (name) => !/^v-?\d+$/.test(name),
  "must not look like a version (v12): a pin would read it as a version",
);

export const PromptLabelSchema = z.object({
  name: z.string(),
  version: z.number().int(),
  moved_at: z.string(),
  moved_by_name: z.string().nullable(),
});
export type PromptLabel = z.infer<typeof PromptLabelSchema>;

/** One move of a label: a release, a rollback, a creator's own label set or removed. */
export const LabelMoveSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** Null when the label was created by this move. */
  from_version: z.number().int().nullable(),
  /** Null when the label was removed by this move. */
  to_version: z.number().int().nullable(),
  actor_name: z.string().nullable(),
  reason: z.string(),
  created_at: z.string(),
});
export type LabelMove = z.infer<typeof LabelMoveSchema>;

export const PromptLabelsSchema = z.object({
  labels: z.array(PromptLabelSchema),
  /** Newest first, at most 100. */
  moves: z.array(LabelMoveSchema),
});
export type PromptLabels = z.infer<typeof PromptLabelsSchema>;

/**
 * A version number a caller or creator names: a whole number from 1, at most a 32-bit integer
 * (what the database keeps), so a huge one is a 400 naming it rather than a failed query.
 */
export const VersionNumberSchema = z
  .number()
  .int("must be a whole number")
  .min(1, "must be 1 or more")
  .max(2_147_483_647, "is not a version number");

export const MoveLabelSchema = z.strictObject({
  version: VersionNumberSchema,
  reason: z.string().max(500).optional(),
  /**
   * Moving `production` while an experiment runs is refused (409 `experiment_running`) unless
   * this is true: then the experiment is ended ("stopped") and production moved in one step.
   */
  end_experiment: z.boolean().optional(),
});
export type MoveLabel = z.infer<typeof MoveLabelSchema>;

/** Whose model keys a prompt app's calls use (docs/decisions/026). */
export const ModelKeysModeSchema = z.enum(["platform", "creator"]);
export type ModelKeysMode = z.infer<typeof ModelKeysModeSchema>;

export const ModelSettingsSchema = z.object({
  model: z.string(),
  /** `platform`: the model cost is taken from the creator's share; `creator`: the creator's own key, no model cost. */
  model_keys: ModelKeysModeSchema.default("platform"),
  temperature: z.number(),
  max_tokens: z.number().int(),
  top_p: z.number(),
  frequency_penalty: z.number(),
  presence_penalty: z.number(),
});

/**
 * `GET /app/{slug}/prompt/`: id is the prompt's id used by `/prompts/{id}/versions/`. The model
 * settings are the latest version's (what the editor edits); `active_version` is what callers
 * get (`production`), `latest_version` what was saved last (docs/decisions/057).
 */
export const PromptConfigSchema = ModelSettingsSchema.extend({
  id: z.string(),
  application_slug: z.string(),
  current_version: z.number().int(),
  active_version: PromptVersionSchema,
  latest_version: PromptVersionSchema,
  production_version: z.number().int(),
  labels: z.array(PromptLabelSchema),
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
  model_keys: ModelKeysModeSchema.optional(),
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
  /**
   * Also move `production` to the saved version. A live app's save changes nothing for its callers
   * without it; a draft app's save always moves `production` (nobody calls it yet).
   */
  promote: z.boolean().optional(),
});
export type UpdatePromptConfig = z.infer<typeof UpdatePromptConfigSchema>;

export const RestoreVersionSchema = z.strictObject({
  version_id: UuidSchema,
  changelog: z.string().max(500).optional(),
  /** As for a save: also move `production` to the restored copy (a draft app's always moves). */
  promote: z.boolean().optional(),
});

/**
 * `PATCH /app/{slug}/prompt-application/`: the app's settings (status included) and its prompt,
 * saved together or not at all, so Save & Publish never sets an app live with the prompt it had
 * (docs/decisions/036).
 */
export const SavePromptApplicationSchema = z.strictObject({
  application: UpdateApplicationSchema,
  prompt: UpdatePromptConfigSchema,
});
export type SavePromptApplication = z.infer<typeof SavePromptApplicationSchema>;

export const SavedPromptApplicationSchema = z.object({
  application: ApplicationSchema,
  prompt: PromptConfigSchema,
});
export type SavedPromptApplication = z.infer<typeof SavedPromptApplicationSchema>;

export const TestConfigRequestSchema = z.strictObject({
  prompt_template: z.string().max(50_000),
  system_prompt: z.string().max(50_000).optional(),
  model: z.string().max(100).optional(),
  temperature: modelSettingLimits.temperature.optional(),
  max_tokens: modelSettingLimits.max_tokens.optional(),
  top_p: modelSettingLimits.top_p.optional(),
  frequency_penalty: modelSettingLimits.frequency_penalty.optional(),
  presence_penalty: modelSettingLimits.presence_penalty.optional(),
  input_schema: NewIoSchemaSchema.optional(),
  test_inputs: z.record(z.string(), z.unknown()).default({}),
});
export type TestConfigRequest = z.input<typeof TestConfigRequestSchema>;

/**
 * Test Prompt's model run (an app's own test-config only): the owner's own call of the draft
 * settings, free to them and recorded like their other calls; its model cost comes out of their
 * earnings (docs/decisions/026). `error` instead of an answer when the model could not answer.
 */
export const TestRunSchema = z.object({
  invocation_id: z.string().nullable(),
  model: z.string().nullable(),
  /** The model that really answered; "sandbox" when the sandbox model stood in for it. */
  answered_by: z.string().nullable(),
  sandbox: z.boolean(),
  answer: z.string().nullable(),
  error: z.string().nullable(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  latency_ms: z.number().int(),
  model_cost_micros: z.number().int(),
});
export type TestRun = z.infer<typeof TestRunSchema>;

export const TestConfigResponseSchema = z.object({
  success: z.boolean(),
  message: z.string(),
  error: z.string().nullable(),
  rendered_template: z.string().nullable(),
  detected_variables: z.array(z.string()),
  /** Null before the app exists (`/prompts/test-config/`) or when the template did not render. */
  run: TestRunSchema.nullable().default(null),
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

/**
 * `GET /prompt-apps/starter/`: what a new prompt app starts with and the lowest price it may be
 * created with on the platform's model keys (the price guard, docs/decisions/026).
 */
export const StarterPriceSchema = z.object({
  model: z.string(),
  max_tokens: z.number().int(),
  fee_percent: z.number(),
  /** The worst-case model cost of one call with the starter settings, in micro-dollars. */
  worst_case_micros: z.number().int(),
  /** Null when no price can cover it (a 100% fee). */
  min_price_cents: z.number().int().nullable(),
  /** The guard's sentence for a lower price, with the figure that passes. */
  message: z.string().nullable(),
});
export type StarterPrice = z.infer<typeof StarterPriceSchema>;

/** Model providers a creator may keep their own API key for. */
export const ModelKeyProviderSchema = z.enum(["openai", "anthropic", "google", "mistral"]);
export type ModelKeyProvider = z.infer<typeof ModelKeyProviderSchema>;

/** `GET /model-keys/`: one row per provider; the key itself is never sent back, only `••••` + last 4. */
export const ModelKeySchema = z.object({
  provider: ModelKeyProviderSchema,
  configured: z.boolean(),
  masked_key: z.string().nullable(),
  updated_at: z.string().nullable(),
});
export type ModelKey = z.infer<typeof ModelKeySchema>;
export const ModelKeyListSchema = z.object({ keys: z.array(ModelKeySchema) });
export type ModelKeyList = z.infer<typeof ModelKeyListSchema>;
export const PutModelKeySchema = z.strictObject({
  api_key: z
    .string()
    .trim()
    .min(8, "must be at least 8 characters")
    .max(500, "must be at most 500 characters")
    .refine((v) => !/\s/.test(v), "must not contain spaces")
    .refine((v) => !v.startsWith("••••"), "is masked; enter the real key"),
});

/** `GET /model-prices/`: the price in force now for each model, in micro-dollars per million tokens. */
export const ModelPriceSchema = z.object({
  model: z.string(),
  from: z.string(),
  input_micros_per_million: z.number().int(),
  output_micros_per_million: z.number().int(),
  cached_input_micros_per_million: z.number().int().nullable(),
});
export const ModelPriceListSchema = z.object({
  prices: z.array(ModelPriceSchema),
  platform_fee_percent: z.number(),
});
export type ModelPriceList = z.infer<typeof ModelPriceListSchema>;

/** `POST /model-prices/estimate/`: the worst case of one call under these settings, and the margin at a price. */
export const CostEstimateRequestSchema = z.strictObject({
  model: z.string().min(1).max(100),
  model_keys: ModelKeysModeSchema.default("platform"),
  max_tokens: z.number().int().min(1).max(8192),
  price_cents: z.number().int().min(1).max(1_000_000),
  system_prompt: z.string().max(50_000).default(""),
  prompt_template: z.string().max(50_000).default(""),
  input_schema: IoSchemaSchema.nullable().optional(),
  output_schema: IoSchemaSchema.nullable().optional(),
});
export type CostEstimateRequest = z.input<typeof CostEstimateRequestSchema>;
export const CostEstimateSchema = z.object({
  model: z.string(),
  model_keys: ModelKeysModeSchema,
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  /** The price of one call, in micro-dollars (1 cent = 10,000). */
  gross_micros: z.number(),
  fee_micros: z.number(),
  /** The worst-case model cost of one call: 0 on the creator's own keys. */
  model_cost_micros: z.number().int(),
  /** gross − fee − worst-case model cost. */
  net_micros: z.number(),
  /** The lowest price that covers the worst case; null when no price can (fee 100%). */
  minimum_price_cents: z.number().int().nullable(),
  covered: z.boolean(),
});
export type CostEstimate = z.infer<typeof CostEstimateSchema>;
