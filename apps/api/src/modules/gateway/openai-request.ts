import { MaxPriceCentsSchema } from "@promptmint/contracts";
import { z } from "zod";
import { invalidFields } from "../../lib/errors.ts";
import type { ChatMessage, ResponseFormat } from "../models/llm.ts";
import type { ToolCall } from "../models/tools.ts";
import { isVersionShaped, parseVersionPin, type VersionPin } from "../prompts/load-prompt.ts";
import {
  ChatToolCallsSchema,
  ChatToolChoiceSchema,
  ChatToolsSchema,
  definitionOf,
  FunctionCallItem,
  FunctionCallOutputItem,
  parseItem,
  ResponsesToolChoiceSchema,
  ResponsesToolsSchema,
  refuseTools,
  ToolCallIdSchema,
  toolSettingsOf,
} from "./openai-tools.ts";
import type { CallerOverrides } from "./prompt-call.ts";

/**
 * What the OpenAI-style routes take from a request, whichever API it came in (Chat Completions or
 * Responses): every field is honoured or refused by name (docs/decisions/032). Unknown fields are
 * refused by the strict schemas; the ones below that we cannot honour are refused with why.
 */
export interface OpenAiCall {
  /** `model` as the caller sent it (`slug`, `slug@v12`, `slug@staging`): answers carry it back. */
  model: string;
  /** The app's slug: `model` before any `@`. */
  slug: string;
  /** The version or label `model` pins after its `@` (docs/decisions/057). */
  modelPin?: VersionPin;
  query: string;
  /** The caller's earlier turns. */
  history: ChatMessage[];
  /** The turns after `query` in a tool loop: the model's tool calls and their results (decision 053). */
  followUp: ChatMessage[];
  /**
   * The first request field that uses tools (`tools`, `tool_choice`, `messages[2].tool_calls`…):
   * refused by name when the app does not allow tools.
   */
  toolsParam?: string;
  /** A tool result that answers no tool call: refused after `toolsParam` (an app without tools says so first). */
  toolsProblem?: Record<string, string>;
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

/**
 * An OpenAI `model` as Promptmint reads it (docs/decisions/057): the app's slug, optionally pinned
 * to a version or label after an `@` (`haiku-writer@v12`, `haiku-writer@staging`); a malformed pin
 * is a 400 naming `model`. The one place `@` is parsed.
 */
export function openAiModel(model: string): { slug: string; pin?: VersionPin } {
  const at = model.indexOf("@");
  if (at < 0) return { slug: model };
  const slug = model.slice(0, at);
  const pinText = model.slice(at + 1);
  const problem =
    "must be an app slug, optionally pinned after '@' to a version or label (slug@v12, slug@staging)";
  if (!slug || !pinText.trim()) throw invalidFields({ model: problem });
  try {
    return { slug, pin: parseVersionPin(pinText, "model") };
  } catch (error) {
    // `slug@v0`, `slug@v01`: the pin's own 400, which says how versions are written.
    if (isVersionShaped(pinText.trim())) throw error;
    throw invalidFields({ model: problem });
  }
}

const tokens = z.number().int().min(1).max(1_000_000).nullish();

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
  parallel_tool_calls: z.boolean().nullish(),
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
        role: z.enum(["system", "developer", "user", "assistant", "tool"], {
          error: "must be system, developer, user, assistant or tool",
        }),
        content: ChatContent.nullish(),
        // What an assistant message read back from an earlier answer carries.
        refusal: z.null().nullish(),
        annotations: z.array(z.unknown()).max(0).nullish(),
        tool_calls: ChatToolCallsSchema.nullish(),
        tool_call_id: ToolCallIdSchema.nullish(),
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
  tools: ChatToolsSchema.nullish(),
  tool_choice: ChatToolChoiceSchema.nullish(),
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
  tools: ResponsesToolsSchema.nullish(),
  tool_choice: ResponsesToolChoiceSchema.nullish(),
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

/** One turn of a caller's conversation, whichever API it came in; `at` is where (for 400s). */
interface Turn {
  role: "system" | "developer" | "user" | "assistant" | "tool";
  text: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  at: string;
}

interface Conversation {
  query: string;
  history: ChatMessage[];
  followUp: ChatMessage[];
  instructions: string[];
  toolsProblem?: Record<string, string>;
}

/**
 * System/developer turns become the caller's instructions; the last user turn is the query (which
 * the app's template renders); the turns before it the history, the turns after it (a tool loop:
 * the model's tool calls and their results) follow it (docs/decisions/053). A tool result must
 * answer a tool call of an earlier assistant turn.
 */
function conversationOf(turns: Turn[], param: string): Conversation {
  const instructions: string[] = [];
  const dialogue: ChatMessage[] = [];
  const calls = new Set<string>();
  let toolsProblem: Record<string, string> | undefined;
  for (const turn of turns) {
    if (turn.role === "system" || turn.role === "developer") instructions.push(turn.text);
    else if (turn.role === "tool") {
      if (!turn.toolCallId || !calls.has(turn.toolCallId))
        toolsProblem ??= { [turn.at]: "must answer a tool call of an earlier assistant message (by its id)" };
      dialogue.push({ role: "tool", toolCallId: turn.toolCallId ?? "", content: turn.text });
    } else if (turn.role === "assistant") {
      for (const call of turn.toolCalls ?? []) calls.add(call.id);
      dialogue.push({
        role: "assistant",
        content: turn.text,
        ...(turn.toolCalls?.length ? { toolCalls: turn.toolCalls } : {}),
      });
    } else dialogue.push({ role: "user", content: turn.text });
  }
  const queryAt = dialogue.findLastIndex((message) => message.role === "user");
  const followUp = dialogue.slice(queryAt + 1);
  const last = followUp.at(-1);
  if (queryAt < 0 || (last && last.role !== "tool"))
    throw invalidFields({
      [param]:
        calls.size > 0 || last?.role === "tool"
          ? "must end with a user message or a tool result"
          : "must end with a user message",
    });
  return {
    query: (dialogue[queryAt] as ChatMessage).content,
    history: dialogue.slice(0, queryAt),
    followUp,
    instructions,
    toolsProblem,
  };
}

/**
 * What both APIs share: the conversation (system turns and `instructions` as the caller's
 * instructions), the sampling overrides, streaming and the Promptmint extensions.
 */
function commonCall(
  body: ChatCompletionRequest | ResponsesRequest,
  turns: Turn[],
  turnsParam: "messages" | "input",
  instructions: string[] = [],
): OpenAiCall {
  const conversation = conversationOf(turns, turnsParam);
  const { slug, pin } = openAiModel(body.model);
  return {
    model: body.model,
    slug,
    modelPin: pin,
    query: conversation.query,
    history: conversation.history,
    followUp: conversation.followUp,
    toolsProblem: conversation.toolsProblem,
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
  const turns = body.messages.map((message, i): Turn => {
    const at = `messages[${i}]`;
    if (message.tool_calls?.length && message.role !== "assistant")
      throw invalidFields({ [`${at}.tool_calls`]: "may only be on an assistant message" });
    if (message.role === "tool" && !message.tool_call_id)
      throw invalidFields({ [`${at}.tool_call_id`]: "is required on a tool message" });
    if (message.tool_call_id && message.role !== "tool")
      throw invalidFields({ [`${at}.tool_call_id`]: "may only be on a tool message" });
    return {
      role: message.role,
      text: textOf(message.content, `${at}.content`, ["text"]),
      toolCalls: message.tool_calls?.map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      })),
      toolCallId: message.tool_call_id ?? undefined,
      at: `${at}.tool_call_id`,
    };
  });
  const call = commonCall(body, turns, "messages");
  const choice = body.tool_choice;
  const tools = toolSettingsOf(
    (body.tools ?? []).map((tool) => definitionOf(tool.function)),
    typeof choice === "object" && choice ? { name: choice.function.name } : (choice ?? undefined),
    body.parallel_tool_calls ?? undefined,
    (i) => `tools[${i}].function.name`,
  );
  call.overrides.tools = tools;
  const toolMessage = body.messages.findIndex((m) => m.role === "tool" || (m.tool_calls?.length ?? 0) > 0);
  call.toolsParam = tools
    ? "tools"
    : toolMessage >= 0
      ? `messages[${toolMessage}]${body.messages[toolMessage]?.role === "tool" ? ".role" : ".tool_calls"}`
      : undefined;
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

/**
 * The turns of a Responses `input`: message items, and the tool loop's items (decision 053):
 * `function_call` joins the assistant turn before it (as Chat Completions' `tool_calls`),
 * `function_call_output` is a tool turn. Other item kinds are refused by index.
 */
function responsesTurns(input: ResponsesRequest["input"]): Turn[] {
  if (typeof input === "string") return [{ role: "user", text: input, at: "input" }];
  const turns: Turn[] = [];
  input.forEach((item, i) => {
    const at = `input[${i}]`;
    const type = item.type ?? "message";
    if (type === "function_call") {
      const call = parseItem(FunctionCallItem, item, at);
      const toolCall = { id: call.call_id, name: call.name, arguments: call.arguments };
      const previous = turns.at(-1);
      if (previous?.role === "assistant") previous.toolCalls = [...(previous.toolCalls ?? []), toolCall];
      else turns.push({ role: "assistant", text: "", toolCalls: [toolCall], at });
      return;
    }
    if (type === "function_call_output") {
      const output = parseItem(FunctionCallOutputItem, item, at);
      const text = textOf(output.output, `${at}.output`, ["input_text", "output_text"]);
      turns.push({ role: "tool", text, toolCallId: output.call_id, at: `${at}.call_id` });
      return;
    }
    if (type !== "message")
      throw invalidFields({
        [at]: `'${item.type}' items are not supported: send message, function_call or function_call_output items`,
      });
    if (!["user", "assistant", "system", "developer"].includes(item.role ?? ""))
      throw invalidFields({ [`${at}.role`]: "must be user, assistant, system or developer" });
    const kinds = item.role === "assistant" ? ["output_text", "input_text"] : ["input_text"];
    turns.push({ role: item.role as Turn["role"], text: textOf(item.content, `${at}.content`, kinds), at });
  });
  return turns;
}

/**
 * A Responses request as an OpenAI-style call: `instructions` come before the input's system turns.
 * `earlier` is the conversation `previous_response_id` continues (response-store.ts), as input items.
 */
export function responsesCall(body: ResponsesRequest, earlier: ResponsesItems = []): OpenAiCall {
  const instructions = body.instructions ? [body.instructions] : [];
  const turns = [...(earlier.length > 0 ? responsesTurns(earlier) : []), ...responsesTurns(body.input)];
  const call = commonCall(body, turns, "input", instructions);
  const choice = body.tool_choice;
  const tools = toolSettingsOf(
    (body.tools ?? []).map(definitionOf),
    typeof choice === "object" && choice ? { name: choice.name } : (choice ?? undefined),
    body.parallel_tool_calls ?? undefined,
    (i) => `tools[${i}].name`,
  );
  call.overrides.tools = tools;
  const toolItem =
    typeof body.input === "string"
      ? -1
      : body.input.findIndex((item) => item.type === "function_call" || item.type === "function_call_output");
  call.toolsParam = tools ? "tools" : toolItem >= 0 ? `input[${toolItem}]` : undefined;
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
  refuseTools(call, false);
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
