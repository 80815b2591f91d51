import { z } from "zod";

/** Dify service API request (completion-messages and chat-messages). */
export const GatewayRequestSchema = z.strictObject({
  inputs: z.record(z.string(), z.unknown()).default({}),
  query: z.string().max(100_000).optional(),
  response_mode: z.enum(["blocking", "streaming"]).default("blocking"),
  user: z.string().max(256).optional(),
  conversation_id: z.string().max(100).nullish(),
  files: z.array(z.unknown()).max(20).nullish(),
  auto_generate_name: z.boolean().optional(),
});
export type GatewayRequest = z.input<typeof GatewayRequestSchema>;

export const UsageSchema = z.object({
  prompt_tokens: z.number().int(),
  completion_tokens: z.number().int(),
  total_tokens: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  latency: z.number().describe("Seconds"),
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
  metadata: z.object({ usage: UsageSchema }),
  created_at: z.number().int().describe("Unix seconds"),
});
export type GatewayResponse = z.infer<typeof GatewayResponseSchema>;

export const AppParametersSchema = z.object({
  opening_statement: z.string(),
  suggested_questions: z.array(z.string()),
  user_input_form: z.array(z.record(z.string(), z.record(z.string(), z.unknown()))),
  file_upload: z.record(z.string(), z.unknown()),
  system_parameters: z.record(z.string(), z.unknown()),
});

export const AppInfoSchema = z.object({
  name: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  mode: z.enum(["completion", "chat", "workflow"]),
});
export type AppParameters = z.infer<typeof AppParametersSchema>;
