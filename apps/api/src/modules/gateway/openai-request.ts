import { MaxPriceCentsSchema } from "@promptmint/contracts";
import { z } from "zod";
import { invalidFields } from "../../lib/errors.ts";
import type { ChatMessage, ResponseFormat } from "../models/llm.ts";
import type { CallerOverrides } from "./prompt-call.ts";

/**
 * What the OpenAI-style routes take from a request, whichever API it came in (Chat Completions or
 * Responses): every field is honoured or refused by name (docs/decisions/032). Unknown fields are
 * refused by the strict schemas; the ones below that we cannot honour are refused with why.
 */
export interface OpenAiCall {
  /** The app's slug. */
  model: string;
  query: string;
  /** The caller's earlier turns. */
  history: ChatMessage[];
  overrides: CallerOverrides;
  stream: boolean;
  user?: string;
  inputs: Record<string, unknown>;
  maxPriceCents?: number;
  /** The request field each override came in, for the 400 of an app that cannot take it. */
  overrideParams: Partial<Record<keyof CallerOverrides, string>>;
  /** The request field the conversation came in: `messages` or `input`. */
  turnsParam: string;
}

const tokens = z.number().int().min(1).max(1_000_000).nullish();
const TOOLS_REFUSED =
  "are not supported: an app answers with text (or JSON with a response format), it does not call tools";

/** Sampling fields both APIs share, as OpenAI bounds them. */
const sampling = {
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  user: z.string().max(256).nullish(),
  /** Promptmint extension (`extra_body`): the app's declared inputs. */
  inputs: z.record(z.string(), z.unknown()).nullish(),
  /** Promptmint extension (`extra_body`): the most this call may cost, in cents. */
  max_price_cents: MaxPriceCentsSchema.nullish(),
  stream: z.boolean().nullish(),
  metadata: z.null("is not supported: no metadata is kept with an answer").nullish(),
  tools: z.array(z.unknown()).max(0, TOOLS_REFUSED).nullish(),
  tool_choice: z.enum(["none", "auto"], "must be none or auto: no tools can be called").nullish(),
  parallel_tool_calls: z.null(`is not supported: tools ${TOOLS_REFUSED}`).nullish(),
  top_logprobs: z.literal(0, "is not supported: log probabilities are not returned").nullish(),
};

const JsonSchemaSchema = z.record(z.string(), z.unknown());
const JsonSchemaFormat = {
  name: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, _ or -")
    .default("response"),
  description: z.string().max(10_000).nullish(),
  schema: JsonSchemaSchema.default({ type: "object" }),
  strict: z.boolean().nullish(),
};

const TextPart = z.object({ type: z.string(), text: z.string().optional() }).loose();
const ChatContent = z.union([z.string(), z.array(TextPart).max(100)]);

/** OpenAI's chat completion request (`POST /v1/chat/completions`). */
export const ChatCompletionRequestSchema = z.strictObject({
  model: z.string().min(1).max(100),
  messages: z
    .array(
      z.strictObject({
        role: z.enum(["system", "developer", "user", "assistant"], {
          error:
            "must be system, developer, user or assistant: tool messages need tools, which are not supported",
        }),
        content: ChatContent.nullish(),
        // What an assistant message read back from an earlier answer carries.
        refusal: z.null().nullish(),
        annotations: z.array(z.unknown()).max(0).nullish(),
      }),
    )
    .min(1, "must contain at least one message")
    .max(200),
  stream_options: z
    .strictObject({
      include_usage: z.boolean().nullish(),
      include_obfuscation: z.literal(false, "must be false: streams carry no obfuscation padding").nullish(),
    })
    .nullish(),
  max_tokens: tokens,
  max_completion_tokens: tokens,
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  seed: z.number().int().nullish(),
  stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullish(),
  n: z.literal(1, "must be 1: one answer per call (each call is paid)").nullish(),
  logprobs: z.literal(false, "is not supported: log probabilities are not returned").nullish(),
  store: z
    .literal(false, "must be false: chat completions are not stored; the Responses API stores answers")
    .nullish(),
  response_format: z
    .discriminatedUnion("type", [
      z.strictObject({ type: z.literal("text") }),
      z.strictObject({ type: z.literal("json_object") }),
      z.strictObject({ type: z.literal("json_schema"), json_schema: z.strictObject(JsonSchemaFormat) }),
    ])
    .nullish(),
  ...sampling,
});
export type ChatCompletionRequest = z.output<typeof ChatCompletionRequestSchema>;

const ResponsesContent = z.union([z.string(), z.array(TextPart).max(100)]);

/** OpenAI's Responses request (`POST /v1/responses`), the parts an app can answer. */
export const ResponsesRequestSchema = z.strictObject({
  model: z.string().min(1).max(100),
  input: z.union([
    z.string().min(1),
    z
      .array(
        z
          .object({
            type: z.string().optional(),
            role: z.string().optional(),
            content: ResponsesContent.optional(),
          })
          .loose(),
      )
      .min(1, "must contain at least one item")
      .max(200),
  ]),
  instructions: z.string().max(100_000).nullish(),
  max_output_tokens: tokens,
  text: z
    .strictObject({
      format: z
        .discriminatedUnion("type", [
          z.strictObject({ type: z.literal("text") }),
          z.strictObject({ type: z.literal("json_object") }),
          z.strictObject({ type: z.literal("json_schema"), ...JsonSchemaFormat }),
        ])
        .nullish(),
      verbosity: z.literal("medium", "must be medium: the app's prompt sets the length").nullish(),
    })
    .nullish(),
  /** Keep the answer for retrieve, delete and the next call's previous_response_id (default true). */
  store: z.boolean().nullish(),
  /** The caller's stored response this call continues: its input and output come before `input`. */
  previous_response_id: z
    .string()
    .regex(/^resp_[A-Za-z0-9]{1,100}$/, "must be the id of one of your earlier responses ('resp_…')")
    .nullish(),
  reasoning: z.null("is not supported: the app's model settings are the creator's").nullish(),
  include: z.array(z.unknown()).max(0, "is not supported: no extra output is returned").nullish(),
  truncation: z.literal("disabled", "must be disabled: input is never truncated").nullish(),
  ...sampling,
});
export type ResponsesRequest = z.output<typeof ResponsesRequestSchema>;

/** The text of a message's content; a part that is not text is a 400 naming where it is. */
function textOf(
  content: z.infer<typeof ChatContent> | null | undefined,
  at: string,
  kinds: string[],
): string {
  if (typeof content === "string") return content;
  return (content ?? [])
    .map((part) => {
      if (!kinds.includes(part.type) || typeof part.text !== "string")
        throw invalidFields({
          [at]: `may hold only text parts (${kinds.join(", ")}): '${part.type}' parts are not supported, this app's model takes text`,
        });
      return part.text;
    })
    .join("");
}

/** System/developer turns become the caller's instructions; user/assistant turns the conversation. */
function conversationOf(
  turns: { role: string; text: string }[],
  param: string,
): { query: string; history: ChatMessage[]; instructions: string[] } {
  const instructions: string[] = [];
  const dialogue: ChatMessage[] = [];
  for (const turn of turns) {
    if (turn.role === "system" || turn.role === "developer") instructions.push(turn.text);
    else dialogue.push({ role: turn.role as ChatMessage["role"], content: turn.text });
  }
  const last = dialogue.pop();
  if (last?.role !== "user") throw invalidFields({ [param]: "must end with a user message" });
  return { query: last.content, history: dialogue, instructions };
}

/**
 * What both APIs share: the conversation (system turns and `instructions` as the caller's
 * instructions), the sampling overrides, streaming and the Promptmint extensions.
 */
function commonCall(
  body: ChatCompletionRequest | ResponsesRequest,
  turns: { role: string; text: string }[],
  turnsParam: "messages" | "input",
  instructions: string[] = [],
): OpenAiCall {
  const conversation = conversationOf(turns, turnsParam);
  return {
    model: body.model,
    query: conversation.query,
    history: conversation.history,
    overrides: {
      temperature: body.temperature ?? undefined,
      topP: body.top_p ?? undefined,
      instructions: [...instructions, ...conversation.instructions].join("\n\n") || undefined,
    },
    overrideParams: {
      temperature: "temperature",
      topP: "top_p",
      instructions: instructions.length > 0 ? "instructions" : turnsParam,
    },
    turnsParam,
    stream: body.stream ?? false,
    user: body.user ?? undefined,
    inputs: body.inputs ?? {},
    maxPriceCents: body.max_price_cents ?? undefined,
  };
}

function jsonFormat(
  format: { type: "text" } | { type: "json_object" } | ({ type: "json_schema" } & JsonSchemaFields),
): ResponseFormat | undefined {
  if (format.type === "text") return undefined;
  if (format.type === "json_object") return { type: "json_object" };
  return {
    type: "json_schema",
    name: format.name,
    description: format.description ?? undefined,
    schema: format.schema,
    strict: format.strict ?? undefined,
  };
}
type JsonSchemaFields = z.output<z.ZodObject<typeof JsonSchemaFormat>>;

/** A chat completion request as an OpenAI-style call. */
export function chatCall(body: ChatCompletionRequest): OpenAiCall {
  const turns = body.messages.map((message, i) => ({
    role: message.role,
    text: textOf(message.content, `messages[${i}].content`, ["text"]),
  }));
  const call = commonCall(body, turns, "messages");
  const format =
    body.response_format?.type === "json_schema"
      ? jsonFormat({ type: "json_schema", ...body.response_format.json_schema })
      : body.response_format
        ? jsonFormat(body.response_format)
        : undefined;
  Object.assign(call.overrides, {
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    frequencyPenalty: body.frequency_penalty ?? undefined,
    presencePenalty: body.presence_penalty ?? undefined,
    seed: body.seed ?? undefined,
    stop: typeof body.stop === "string" ? [body.stop] : (body.stop ?? undefined),
    responseFormat: format && { format, param: "response_format" },
  } satisfies CallerOverrides);
  Object.assign(call.overrideParams, {
    maxTokens: body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens",
    frequencyPenalty: "frequency_penalty",
    presencePenalty: "presence_penalty",
    seed: "seed",
    stop: "stop",
    responseFormat: "response_format",
  });
  return call;
}

type ResponsesItems = Exclude<ResponsesRequest["input"], string>;

/** The message items of a Responses `input`: other item kinds (tool calls, references) are refused by index. */
function responsesTurns(input: ResponsesRequest["input"]): { role: string; text: string }[] {
  if (typeof input === "string") return [{ role: "user", text: input }];
  return input.map((item, i) => {
    const at = `input[${i}]`;
    if ((item.type ?? "message") !== "message")
      throw invalidFields({ [at]: `'${item.type}' items are not supported: send message items` });
    if (!["user", "assistant", "system", "developer"].includes(item.role ?? ""))
      throw invalidFields({ [`${at}.role`]: "must be user, assistant, system or developer" });
    const kinds = item.role === "assistant" ? ["output_text", "input_text"] : ["input_text"];
    return { role: item.role as string, text: textOf(item.content, `${at}.content`, kinds) };
  });
}

/**
 * A Responses request as an OpenAI-style call: `instructions` come before the input's system turns.
 * `earlier` is the conversation `previous_response_id` continues (response-store.ts), as input items.
 */
export function responsesCall(body: ResponsesRequest, earlier: ResponsesItems = []): OpenAiCall {
  const instructions = body.instructions ? [body.instructions] : [];
  const turns = [...(earlier.length > 0 ? responsesTurns(earlier) : []), ...responsesTurns(body.input)];
  const call = commonCall(body, turns, "input", instructions);
  const format = body.text?.format ? jsonFormat(body.text.format) : undefined;
  Object.assign(call.overrides, {
    maxTokens: body.max_output_tokens ?? undefined,
    responseFormat: format && { format, param: "text.format" },
  } satisfies CallerOverrides);
  Object.assign(call.overrideParams, { maxTokens: "max_output_tokens", responseFormat: "text.format" });
  return call;
}

/**
 * A workflow app runs its provider's own model settings: a caller's override is refused naming the
 * field, and so are earlier turns (the provider keeps its own conversation).
 */
export function refuseWorkflowOverrides(call: OpenAiCall): void {
  for (const [name, value] of Object.entries(call.overrides)) {
    if (value === undefined) continue;
    const param = call.overrideParams[name as keyof CallerOverrides] ?? name;
    throw invalidFields({ [param]: "is not supported by this app: a workflow runs with its own settings" });
  }
  if (call.history.length > 0)
    throw invalidFields({
      [call.turnsParam]: "must hold one user message: a workflow app keeps no caller history",
    });
}
