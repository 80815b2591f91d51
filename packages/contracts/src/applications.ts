import { z } from "zod";
import { MoneyFiguresSchema } from "./analytics.ts";

export const AppTypeSchema = z.enum(["prompt", "workflow"]);
export const InteractionModeSchema = z.enum(["completion", "chat"]);
export const VisibilitySchema = z.enum(["private", "public", "embed"]);
export const AppStatusSchema = z.enum(["draft", "live", "archived"]);
export type AppType = z.infer<typeof AppTypeSchema>;
export type InteractionMode = z.infer<typeof InteractionModeSchema>;
export type Visibility = z.infer<typeof VisibilitySchema>;
export type AppStatus = z.infer<typeof AppStatusSchema>;

export const MIN_PRICE_CENTS = 1;
export const MAX_PRICE_CENTS = 100_000;

const name = z.string().trim().min(1, "is required").max(100, "must be at most 100 characters");
const description = z.string().max(2000, "must be at most 2000 characters");
const priceCents = z
  .number({ error: "must be a whole number of cents" })
  .int("must be a whole number of cents")
  .min(MIN_PRICE_CENTS, "must be at least 1 cent")
  .max(MAX_PRICE_CENTS, "must be at most 100000 cents");

/** What a workflow app stores about its provider. The API key is only ever returned masked. */
export const ProviderConfigSchema = z.object({
  app_id: z.string(),
  api_key: z.string().describe("Masked: '••••' plus the last 4 characters"),
});

export const ApplicationSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  description: z.string(),
  type: AppTypeSchema,
  interaction_mode: InteractionModeSchema,
  visibility: VisibilitySchema,
  status: AppStatusSchema,
  /** What a call costs now. */
  price_cents: z.number().int(),
  /**
   * A raised price announced but not yet charged: the price from `pending_price_at` on (null when
   * none). Saving `price_cents` above the current price announces it (PRICE_INCREASE_NOTICE_DAYS).
   */
  pending_price_cents: z.number().int().nullable(),
  pending_price_at: z.string().nullable(),
  provider_config: ProviderConfigSchema.nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  creator_name: z.string(),
  /**
   * A prompt app passes OpenAI-style callers' tools (`tools`, `tool_choice`, tool calls and
   * results) through to its model; off by default (docs/decisions/053).
   */
  allow_tools: z.boolean(),
  /** Set in the owner's list when the operator suspended the app (or its owner): callers get 404. */
  suspension: z.object({ reason: z.string(), since: z.string() }).nullable().optional(),
});
export type Application = z.infer<typeof ApplicationSchema>;
export const ApplicationListSchema = z.array(ApplicationSchema);

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const CreateApplicationSchema = z.strictObject({
  name,
  slug: z
    .string()
    .max(60, "must be at most 60 characters")
    .regex(SLUG_PATTERN, "may contain only lowercase letters, digits and single hyphens")
    .optional(),
  description: description.default(""),
  type: AppTypeSchema.default("prompt"),
  interaction_mode: InteractionModeSchema.default("completion"),
  visibility: VisibilitySchema.default("private"),
  price_cents: priceCents.default(100),
  /** Prompt apps only: pass callers' tools through to the model (docs/decisions/053). */
  allow_tools: z.boolean({ error: "must be true or false" }).default(false),
  provider_config: z
    .strictObject({
      app_id: z.string().trim().min(1, "is required").max(200),
      api_key: z.string().trim().min(1, "is required").max(500),
    })
    .nullish(),
});
export type CreateApplication = z.input<typeof CreateApplicationSchema>;

export const UpdateApplicationSchema = z.strictObject({
  name: name.optional(),
  description: description.optional(),
  visibility: VisibilitySchema.optional(),
  status: AppStatusSchema.optional(),
  price_cents: priceCents.optional(),
  interaction_mode: InteractionModeSchema.optional(),
  /** Prompt apps only: pass callers' tools through to the model (docs/decisions/053). */
  allow_tools: z.boolean({ error: "must be true or false" }).optional(),
});
export type UpdateApplication = z.infer<typeof UpdateApplicationSchema>;

export const UpdateStatusSchema = z.strictObject({ status: AppStatusSchema });

export const UploadedFileSchema = z.object({
  id: z.string(),
  name: z.string(),
  size: z.number().int(),
  mime_type: z.string(),
  extension: z.string(),
  created_at: z.string(),
});
export type UploadedFile = z.infer<typeof UploadedFileSchema>;

/** SPEC §3 "Usage analytics per application". */
export const AppUsageSchema = z.object({
  total_invocations: z.number().int(),
  total_revenue: z.number().describe("Dollars"),
  /** Gross, platform fee, model cost and net over the same window (docs/decisions/029). */
  figures: MoneyFiguresSchema,
});
export type AppUsage = z.infer<typeof AppUsageSchema>;
