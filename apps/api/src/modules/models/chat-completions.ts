import { APICallError } from "@ai-sdk/provider";
import { type Agent, request } from "undici";
import type { ResponseFormat } from "./llm.ts";
import type { ChatMessage, ToolCall, ToolSettings } from "./tools.ts";

/** A vendor answer larger than this is refused (a chat completion is a few KB). */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export interface ChatCompletionRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  temperature: number;
  maxTokens: number;
  topP: number;
  frequencyPenalty: number;
  presencePenalty: number;
  stop?: string[];
  seed?: number;
  responseFormat?: ResponseFormat;
  tools?: ToolSettings;
}

export interface ChatCompletion {
  text: string;
  inputTokens: number;
  outputTokens: number;
  /** The part of `inputTokens` the vendor read from its prompt cache (`prompt_tokens_details.cached_tokens`). */
  cachedInputTokens: number;
  toolCalls?: ToolCall[];
}

/**
 * A blocking chat completion from an OpenAI-compatible server (OPENAI_BASE_URL): the same request
 * body, headers and error classes as `@ai-sdk/openai-compatible`'s generateText, without the
 * SDK's per-call work (request and response schema validation, step and telemetry objects). On
 * the paid path that work cost 0.55 ms of CPU and 0.6 ms of latency per call, about 40 % of the
 * process's CPU per call under load (docs/decisions/019-lean-chat-completions.md). Errors are
 * the SDK's own `APICallError` (HTTP status, vendor message) or the abort signal's reason, so
 * `toUpstreamError` maps them exactly as before. Streaming stays on the SDK.
 */
export function createChatCompletions(options: { baseURL: string; apiKey: string; dispatcher: Agent }) {
  const url = `${options.baseURL.replace(/\/+$/, "")}/chat/completions`;
  const headers = {
    authorization: `Bearer ${options.apiKey}`,
    "content-type": "application/json",
    accept: "application/json",
  };

  return async function complete(call: ChatCompletionRequest, signal: AbortSignal): Promise<ChatCompletion> {
    const bodyValues = {
      model: call.model,
      max_tokens: call.maxTokens,
      temperature: call.temperature,
      top_p: call.topP,
      frequency_penalty: call.frequencyPenalty,
      presence_penalty: call.presencePenalty,
      stop: call.stop,
      seed: call.seed,
      response_format: vendorResponseFormat(call.responseFormat),
      ...vendorTools(call.tools),
      messages: [
        ...(call.system ? [{ role: "system", content: call.system }] : []),
        ...call.messages.map(vendorTurn),
      ],
    };
    let text: string;
    let statusCode: number;
    let responseHeaders: Record<string, string>;
    try {
      const answer = await request(url, {
        method: "POST",
        headers,
        body: JSON.stringify(bodyValues),
        signal,
        dispatcher: options.dispatcher,
      });
      statusCode = answer.statusCode;
      responseHeaders = flatHeaders(answer.headers);
      text = await readLimited(answer.body);
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      if (error instanceof AnswerTooLarge) throw error;
      throw new APICallError({
        message: "Cannot connect to API",
        url,
        requestBodyValues: bodyValues,
        cause: error,
        isRetryable: true,
      });
    }
    if (statusCode < 200 || statusCode > 299) {
      throw new APICallError({
        message: vendorMessage(text) ?? `HTTP ${statusCode}`,
        url,
        requestBodyValues: bodyValues,
        statusCode,
        responseHeaders,
        responseBody: text,
        isRetryable: statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500,
      });
    }
    return parseCompletion(text);
  };
}

/** OpenAI's `response_format` for the caller's structured output (undefined: left out of the body). */
function vendorResponseFormat(format: ResponseFormat | undefined) {
  if (!format || format.type === "json_object") return format;
  const { name, description, schema, strict } = format;
  return { type: "json_schema", json_schema: { name, description, schema, strict } };
}

/** A turn as OpenAI's chat messages carry it: tool calls on the assistant's, results as `tool` messages. */
function vendorTurn(message: ChatMessage) {
  if (message.role === "tool")
    return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
  if (message.role === "assistant" && message.toolCalls?.length)
    return {
      role: "assistant",
      content: message.content || null,
      tool_calls: message.toolCalls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments },
      })),
    };
  return { role: message.role, content: message.content };
}

/** OpenAI's `tools`, `tool_choice` and `parallel_tool_calls` (none of them when no tools are given). */
function vendorTools(settings: ToolSettings | undefined) {
  if (!settings || settings.tools.length === 0) return {};
  const choice = settings.choice;
  return {
    tools: settings.tools.map(({ name, description, parameters, strict }) => ({
      type: "function",
      function: { name, description, parameters, strict },
    })),
    tool_choice: typeof choice === "object" ? { type: "function", function: { name: choice.name } } : choice,
    parallel_tool_calls: settings.parallel,
  };
}

class AnswerTooLarge extends Error {}

/** The answer's text, or AnswerTooLarge past MAX_ANSWER_BYTES. */
async function readLimited(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw new AnswerTooLarge(`The model provider's answer exceeded ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The text and token counts of a chat completion; a body that is not one is an error. */
function parseCompletion(text: string): ChatCompletion {
  const parsed = JSON.parse(text) as {
    choices?: { message?: { content?: unknown; tool_calls?: unknown } }[];
    usage?: {
      prompt_tokens?: unknown;
      completion_tokens?: unknown;
      prompt_tokens_details?: { cached_tokens?: unknown } | null;
    } | null;
  };
  const choice = Array.isArray(parsed?.choices) ? parsed.choices[0] : undefined;
  if (!choice || typeof choice !== "object") throw new Error("The answer is not a chat completion");
  const content = choice.message?.content;
  if (content != null && typeof content !== "string") throw new Error("The answer's content is not text");
  const count = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0);
  const toolCalls = toolCallsOf(choice.message?.tool_calls);
  return {
    text: content ?? "",
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    inputTokens: count(parsed.usage?.prompt_tokens),
    outputTokens: count(parsed.usage?.completion_tokens),
    cachedInputTokens: count(parsed.usage?.prompt_tokens_details?.cached_tokens),
  };
}

/** The function calls of an answer's `tool_calls`; one that is not a function call is an error. */
function toolCallsOf(raw: unknown): ToolCall[] {
  if (raw == null) return [];
  if (!Array.isArray(raw)) throw new Error("The answer's tool_calls is not a list");
  return raw.map((call: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }) => {
    const name = call?.function?.name;
    const args = call?.function?.arguments;
    if (typeof call?.id !== "string" || typeof name !== "string")
      throw new Error("The answer holds a tool call without an id or a function name");
    return { id: call.id, name, arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}) };
  });
}

/** OpenAI's error shape, `{"error": {"message": …}}`, as the SDK reads it. */
function vendorMessage(text: string): string | undefined {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message;
    return typeof message === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}

function flatHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}
