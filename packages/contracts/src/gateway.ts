import { z } from "zod";

/**
 * A caller's cap on what one call may cost, in cents (body `max_price_cents`, or the header
 * `Promptmint-Max-Price-Cents`): a call priced above it is refused with 412 and costs nothing.
 */
export const MaxPriceCentsSchema = z
  .number({ error: "must be a whole number of cents" })
  .int("must be a whole number of cents")
  .min(0, "must be at least 0")
  .max(Number.MAX_SAFE_INTEGER, "is too large");

/** A file sent with a call: one uploaded through `/files/upload`, or a URL (Dify's shape). */
export const DifyFileSchema = z.strictObject({
  type: z.enum(["image", "document", "audio", "video", "custom"]),
  transfer_method: z.enum(["local_file", "remote_url"]),
  upload_file_id: z.string().max(100).optional(),
  url: z.string().max(4096).optional(),
});

/**
 * Dify service API request (completion-messages and chat-messages). Dify's optional metadata
 * (`retriever_from`, `trace_id`) is accepted; `workflow_id` and `parent_message_id` would change
 * the answer and are refused by name when set (gateway.routes.ts).
 */
export const GatewayRequestSchema = z.strictObject({
  inputs: z.record(z.string(), z.unknown()).default({}),
  query: z.string().max(100_000).optional(),
  response_mode: z.enum(["blocking", "streaming"]).default("blocking"),
  user: z.string().max(256).optional(),
  conversation_id: z.string().max(100).nullish(),
  files: z.array(DifyFileSchema).max(20).nullish(),
  auto_generate_name: z.boolean().optional(),
  retriever_from: z.string().max(100).optional(),
  trace_id: z.string().max(200).optional(),
  workflow_id: z.string().max(100).nullish(),
  parent_message_id: z.string().max(100).nullish(),
  max_price_cents: MaxPriceCentsSchema.optional(),
});
export type GatewayRequest = z.input<typeof GatewayRequestSchema>;

/** Dify's price fields are strings in dollars ("0.0500000"). */
const DollarString = z.string().regex(/^-?\d+\.?\d*$/);

/**
 * How a call was paid: from the wallet, a plan's included call, the owner's own call, a free app, an x402
 * payment without an account (docs/decisions/052),
 * or nothing (a failed call).
 */
export const PaidBySchema = z.enum(["wallet", "plan", "owner", "free", "x402", "trial", "promotion", "none"]);
export type PaidBy = z.infer<typeof PaidBySchema>;

/**
 * Dify's usage, with what the call cost (docs/decisions/029). Promptmint prices a call, not its
 * tokens: the per-token prices are "0" and `total_price` is what the call took from the caller's
 * wallet (0 when a plan covered it, for the owner's own call or a free app). The price fields are
 * absent only on an answer stored before they existed and replayed under its Idempotency-Key.
 */
export const UsageSchema = z.object({
  prompt_tokens: z.number().int(),
  prompt_unit_price: DollarString.optional(),
  prompt_price_unit: DollarString.optional(),
  prompt_price: DollarString.optional(),
  completion_tokens: z.number().int(),
  completion_unit_price: DollarString.optional(),
  completion_price_unit: DollarString.optional(),
  completion_price: DollarString.optional(),
  total_tokens: z.number().int(),
  total_price: DollarString.optional().describe("What the call was charged, in dollars (7 decimals)"),
  currency: z.literal("USD").optional(),
  latency: z.number().describe("Seconds"),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  /** Promptmint's own: the charge in whole cents, and how the call was paid. */
  charged_cents: z.number().int().optional(),
  paid_by: PaidBySchema.optional(),
  receipt: z
    .string()
    .optional()
    .describe(
      "A paid call's signed receipt: a compact JWS (EdDSA) verifiable with /.well-known/promptmint-receipt-keys.json",
    ),
});
export type Usage = z.infer<typeof UsageSchema>;

/** Blocking answer: Dify's fields plus SPEC's (`id`, `metadata.usage.input_tokens/output_tokens`). */
export const GatewayResponseSchema = z.object({
  event: z.literal("message"),
  id: z.string(),
  message_id: z.string(),
  task_id: z.string(),
  mode: z.enum(["completion", "chat"]),
  answer: z.string(),
  conversation_id: z.string().optional(),
  metadata: z.object({
    usage: UsageSchema,
    promptmint_version: z
      .string()
      .optional()
      .describe("The prompt version that answered (`v12`), as the Promptmint-Version response header says"),
  }),
  created_at: z.number().int().describe("Unix seconds"),
});
export type GatewayResponse = z.infer<typeof GatewayResponseSchema>;

const FeatureSchema = z.object({ enabled: z.boolean() }).catchall(z.unknown());

/** Dify's `/parameters`: every key its SDKs read, with Dify's value shapes. */
export const AppParametersSchema = z.object({
  opening_statement: z.string(),
  suggested_questions: z.array(z.string()),
  suggested_questions_after_answer: FeatureSchema,
  speech_to_text: FeatureSchema,
  text_to_speech: FeatureSchema,
  retriever_resource: FeatureSchema,
  annotation_reply: FeatureSchema,
  more_like_this: FeatureSchema,
  user_input_form: z.array(z.record(z.string(), z.record(z.string(), z.unknown()))),
  sensitive_word_avoidance: FeatureSchema,
  file_upload: z.record(z.string(), z.unknown()),
  system_parameters: z.record(z.string(), z.unknown()),
});

/** Dify's `/info` plus the price (extra fields, which Dify's SDKs pass through untouched). */
export const AppInfoSchema = z.object({
  name: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  mode: z.enum(["completion", "chat", "workflow"]),
  /** What a call costs now. */
  price_cents: z.number().int(),
  /** An announced increase: the price from `pending_price_at` on (null when none). */
  pending_price_cents: z.number().int().nullable(),
  pending_price_at: z.string().nullable(),
});
export type AppParameters = z.infer<typeof AppParametersSchema>;
