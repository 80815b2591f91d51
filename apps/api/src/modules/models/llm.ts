import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createMistral } from "@ai-sdk/mistral";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError } from "@ai-sdk/provider";
import type { IoSchema } from "@promptmint/contracts";
import { generateText, jsonSchema, type LanguageModel, Output, streamText } from "ai";
import { Agent, request } from "undici";
import type { Config } from "../../config.ts";
import { AppError } from "../../lib/errors.ts";
import { createUpstreamFetch } from "../../lib/upstream-fetch.ts";
import { upstreamRateLimited } from "../../lib/upstream-rate-limit.ts";
import { createChatCompletions } from "./chat-completions.ts";
import { type CatalogModel, ENV_VAR_FOR_PROVIDER, findModel, type ProviderName } from "./model-catalog.ts";
import { countTokens } from "./token-count.ts";
import {
  aiSdkToolSettings,
  type ChatMessage,
  modelMessagesOf,
  type StreamPiece,
  type ToolCall,
  type ToolSettings,
  toolCallOf,
} from "./tools.ts";

export type { ChatMessage };

export interface LlmRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  temperature: number;
  maxTokens: number;
  topP: number;
  frequencyPenalty: number;
  presencePenalty: number;
  /** When set, the sandbox answers with a JSON object that fits it. */
  outputSchema?: IoSchema;
  /** Sequences that end the answer (OpenAI `stop`), from an OpenAI-style caller. */
  stop?: string[];
  /** Asks the vendor for a reproducible answer (OpenAI `seed`). */
  seed?: number;
  /** Structured output an OpenAI-style caller asked for: sent to the vendor, and the sandbox honours it. */
  responseFormat?: ResponseFormat;
  /** The caller's tools, when the app allows them (docs/decisions/053). */
  tools?: ToolSettings;
  /**
   * The app creator's own key for the model's provider (docs/decisions/026): the call goes to the
   * vendor with it instead of the operator's key, and never falls back to the sandbox.
   */
  apiKey?: string;
}

/** A JSON Schema, as OpenAI's `response_format.json_schema.schema` carries it. */
export type JsonSchema = Record<string, unknown>;

/** OpenAI's `response_format` (chat) or `text.format` (Responses), the JSON kinds of it. */
export type ResponseFormat =
  | { type: "json_object" }
  | { type: "json_schema"; name: string; description?: string; schema: JsonSchema; strict?: boolean };

export interface LlmResult {
  text: string;
  inputTokens: number;
  outputTokens: number;
  /** The part of `inputTokens` read from the vendor's prompt cache (priced lower, model-prices.ts). */
  cachedInputTokens?: number;
  /** The model that really answered: the requested one, or "sandbox". */
  answeredBy: string;
  /** The tools the model called (the caller runs them and sends their results in its next call). */
  toolCalls?: ToolCall[];
}

export interface LlmStream {
  chunks: AsyncIterable<StreamPiece>;
  /** Resolves after the stream ends; rejects with an AppError if the model failed. */
  result: Promise<LlmResult>;
}

export interface LlmClient {
  generate(request: LlmRequest): Promise<LlmResult>;
  stream(request: LlmRequest): LlmStream;
  isConfigured(provider: ProviderName): boolean;
  sandboxFallback: boolean;
  openaiCompatible: boolean;
  timeoutSeconds: number;
  /**
   * Runs the code of a first blocking answer once, at start-up (warm-up.ts), without calling any
   * vendor: the OpenAI client's request and answer handling against a loopback server of its own,
   * and the sandbox's tokenizer when the sandbox answers every call. Answers what it warmed.
   */
  warmUp?(): Promise<{ upstream: boolean; tokenizer: boolean }>;
  /**
   * Runs `run` with every vendor call this client would make meanwhile answered by a loopback
   * server of its own (OpenAI models through the same client code as a real call; other vendors'
   * models by the sandbox): the start-up rehearsal's paid calls (warm-up.ts) call no vendor.
   */
  rehearse?<T>(run: () => Promise<T>): Promise<T>;
  /**
   * Opens the keep-alive connections (TCP and TLS) to each configured vendor that the first calls
   * would otherwise open: a GET of the vendor's root (undici closes the connection after a HEAD), its
   * answer read and ignored (start-up, warm-up.ts; not
   * awaited there). Answers the origins that answered.
   */
  preconnect?(): Promise<string[]>;
}

/** Where each vendor's API is, when no base URL is configured (the AI SDK providers' defaults). */
const VENDOR_ORIGINS: Record<ProviderName, string> = {
  openai: "https://api.openai.com",
  anthropic: "https://api.anthropic.com",
  google: "https://generativelanguage.googleapis.com",
  mistral: "https://api.mistral.ai",
};
const PRECONNECT_TIMEOUT_MS = 3_000;

/** Where a rehearsal's OpenAI calls go instead of the vendor (`LlmClient.rehearse`). */
interface UpstreamRehearsal {
  chat?: ReturnType<typeof createChatCompletions>;
  openai?: (model: string) => LanguageModel;
}

/**
 * Calls models through the Vercel AI SDK with the operator's keys. A model whose provider has no
 * key is answered by the sandbox model outside production, and is a 503 naming the variable in it.
 */
export function createLlmClient(config: Config): LlmClient {
  const keys = config.providerKeys;
  const timeoutMs = config.llmTimeoutSeconds * 1000;
  // One keep-alive pool for every vendor, without the global fetch's per-call WHATWG machinery.
  const dispatcher = new Agent();
  const fetch = createUpstreamFetch(dispatcher);
  const providers: Partial<Record<ProviderName, (model: string) => LanguageModel>> = {};
  // Blocking answers from an OpenAI-compatible server skip the SDK's per-call work (chat-completions.ts).
  let compatibleChat: ReturnType<typeof createChatCompletions> | undefined;
  if (keys.openai && keys.openaiBaseUrl) {
    compatibleChat = createChatCompletions({ baseURL: keys.openaiBaseUrl, apiKey: keys.openai, dispatcher });
    const compatible = createOpenAICompatible({
      name: "openai-compatible",
      baseURL: keys.openaiBaseUrl,
      apiKey: keys.openai,
      includeUsage: true,
      fetch,
    });
    providers.openai = (model) => compatible.chatModel(model);
  } else if (keys.openai) {
    const openai = createOpenAI({ apiKey: keys.openai, fetch });
    providers.openai = (model) => openai.chat(model);
  }
  if (keys.anthropic) providers.anthropic = createAnthropic({ apiKey: keys.anthropic, fetch });
  if (keys.google) providers.google = createGoogleGenerativeAI({ apiKey: keys.google, fetch });
  if (keys.mistral) providers.mistral = createMistral({ apiKey: keys.mistral, fetch });
  const models = createModelCache(providers);
  const creatorModels = createCreatorModelCache((provider, apiKey) => {
    if (provider === "openai") {
      if (keys.openaiBaseUrl) {
        const compatible = createOpenAICompatible({
          name: "openai-compatible",
          baseURL: keys.openaiBaseUrl,
          apiKey,
          includeUsage: true,
          fetch,
        });
        return (model) => compatible.chatModel(model);
      }
      const openai = createOpenAI({ apiKey, fetch });
      return (model) => openai.chat(model);
    }
    if (provider === "anthropic") return createAnthropic({ apiKey, fetch });
    if (provider === "google") return createGoogleGenerativeAI({ apiKey, fetch });
    return createMistral({ apiKey, fetch });
  });

  const rehearsals = new AsyncLocalStorage<UpstreamRehearsal>();

  function resolve(modelId: string, apiKey?: string): { model: CatalogModel; language?: LanguageModel } {
    const model = findModel(modelId);
    if (!model) throw new AppError("bad_request", `Unknown model '${modelId}'`);
    if (model.provider === "sandbox") return { model };
    const rehearsal = rehearsals.getStore();
    if (rehearsal && (apiKey || providers[model.provider]))
      return {
        model,
        language: model.provider === "openai" ? rehearsal.openai?.(model.vendorModel) : undefined,
      };
    if (apiKey) return { model, language: creatorModels.get(model.provider, apiKey, model.vendorModel) };
    const language = models.get(model.provider, model.vendorModel);
    if (language) return { model, language };
    if (config.isProduction) {
      throw new AppError(
        "unavailable",
        `Model '${modelId}' needs ${ENV_VAR_FOR_PROVIDER[model.provider]}, which is not configured on this server`,
      );
    }
    return { model };
  }

  function settings(request: LlmRequest) {
    return {
      system: request.system || undefined,
      messages: modelMessagesOf(request.messages),
      temperature: request.temperature,
      maxOutputTokens: request.maxTokens,
      topP: request.topP,
      frequencyPenalty: request.frequencyPenalty,
      presencePenalty: request.presencePenalty,
      stopSequences: request.stop,
      seed: request.seed,
      output: outputOf(request.responseFormat),
      ...aiSdkToolSettings(request.tools),
      maxRetries: 0,
    };
  }

  return {
    sandboxFallback: !config.isProduction,
    timeoutSeconds: config.llmTimeoutSeconds,
    openaiCompatible: Boolean(keys.openai && keys.openaiBaseUrl),
    isConfigured: (provider) => Boolean(providers[provider]),

    async warmUp() {
      // The sandbox counts tokens with cl100k, whose table takes ~0.2 s of CPU to build on first
      // use: built now when the sandbox answers every call (no vendor key, outside production).
      const tokenizer = !config.isProduction && Object.keys(providers).length === 0;
      if (tokenizer) countTokens("warm-up");
      if (!keys.openai) return { upstream: false, tokenizer };
      await withLoopbackUpstream(async (baseURL, agent) => {
        const request: LlmRequest = {
          model: "gpt-4o-mini",
          messages: [{ role: "user", content: "warm-up" }],
          temperature: 1,
          maxTokens: 1,
          topP: 1,
          frequencyPenalty: 0,
          presencePenalty: 0,
        };
        const signal = AbortSignal.timeout(5_000);
        if (compatibleChat) {
          await createChatCompletions({ baseURL, apiKey: "warm-up", dispatcher: agent })(request, signal);
        } else {
          const openai = createOpenAI({ baseURL, apiKey: "warm-up", fetch: createUpstreamFetch(agent) });
          await generateText({
            model: openai.chat(request.model),
            ...settings(request),
            abortSignal: signal,
          });
        }
      });
      return { upstream: true, tokenizer };
    },

    async preconnect() {
      const origins = new Set<string>();
      for (const provider of Object.keys(providers) as ProviderName[])
        origins.add(
          provider === "openai" && keys.openaiBaseUrl
            ? new URL(keys.openaiBaseUrl).origin
            : VENDOR_ORIGINS[provider],
        );
      const answered = await Promise.all(
        [...origins].map(async (origin) => {
          try {
            // Through the same agent and in the same form as the calls' requests (chat-completions.ts).
            const answer = await request(`${origin}/`, {
              method: "GET",
              dispatcher,
              signal: AbortSignal.timeout(PRECONNECT_TIMEOUT_MS),
            });
            await answer.body.dump();
            return origin;
          } catch {
            return undefined;
          }
        }),
      );
      return answered.filter((origin): origin is string => origin !== undefined);
    },

    async rehearse(run) {
      if (!keys.openai) return rehearsals.run({}, run);
      return withLoopbackUpstream((baseURL, agent) => {
        const fetch = createUpstreamFetch(agent);
        const rehearsal: UpstreamRehearsal = compatibleChat
          ? {
              chat: createChatCompletions({ baseURL, apiKey: "warm-up", dispatcher: agent }),
              openai: (model) =>
                createOpenAICompatible({
                  name: "openai-compatible",
                  baseURL,
                  apiKey: "warm-up",
                  includeUsage: true,
                  fetch,
                }).chatModel(model),
            }
          : { openai: (model) => createOpenAI({ baseURL, apiKey: "warm-up", fetch }).chat(model) };
        return rehearsals.run(rehearsal, run);
      });
    },

    async generate(request) {
      const { model, language } = resolve(request.model, request.apiKey);
      if (!language) return sandboxAnswer(request);
      const chat = rehearsals.getStore()?.chat ?? compatibleChat;
      if (chat && model.provider === "openai" && !request.apiKey) {
        try {
          const answer = await chat({ ...request, model: model.vendorModel }, AbortSignal.timeout(timeoutMs));
          return { ...answer, answeredBy: model.id };
        } catch (error) {
          throw toUpstreamError(error, config.llmTimeoutSeconds, Boolean(request.apiKey));
        }
      }
      try {
        const result = await generateText({
          model: language,
          ...settings(request),
          abortSignal: AbortSignal.timeout(timeoutMs),
        });
        return {
          text: result.text,
          inputTokens: result.usage.inputTokens ?? 0,
          outputTokens: result.usage.outputTokens ?? 0,
          cachedInputTokens: result.usage.inputTokenDetails?.cacheReadTokens ?? 0,
          answeredBy: model.id,
          ...(result.toolCalls.length > 0 ? { toolCalls: result.toolCalls.map(toolCallOf) } : {}),
        };
      } catch (error) {
        throw toUpstreamError(error, config.llmTimeoutSeconds, Boolean(request.apiKey));
      }
    },

    stream(request) {
      const { model, language } = resolve(request.model, request.apiKey);
      if (!language) return sandboxStream(request);
      const controller = new AbortController();
      const timer = setTimeout(
        () => controller.abort(new DOMException("timed out", "TimeoutError")),
        timeoutMs,
      );
      const streamed = streamText({ model: language, ...settings(request), abortSignal: controller.signal });
      let text = "";
      // Tool calls in the order the model began them; a call's pieces carry its index (OpenAI's).
      const calls = new Map<string, ToolCall & { index: number; streamed: boolean }>();
      let failure: unknown;
      let usage: {
        inputTokens?: number;
        outputTokens?: number;
        inputTokenDetails?: { cacheReadTokens?: number };
      } = {};
      async function* chunks() {
        try {
          for await (const part of streamed.fullStream) {
            if (part.type === "text-delta") {
              text += part.text;
              yield part.text;
            } else if (part.type === "tool-input-start") {
              const call = {
                id: part.id,
                name: part.toolName,
                arguments: "",
                index: calls.size,
                streamed: true,
              };
              calls.set(part.id, call);
              yield { toolCall: { index: call.index, id: call.id, name: call.name, arguments: "" } };
            } else if (part.type === "tool-input-delta") {
              const call = calls.get(part.id);
              if (call && part.delta) {
                call.arguments += part.delta;
                yield { toolCall: { index: call.index, arguments: part.delta } };
              }
            } else if (part.type === "tool-call") {
              // A vendor that sends a call whole (no input pieces) is streamed as one piece.
              if (!calls.has(part.toolCallId)) {
                const call = { ...toolCallOf(part), index: calls.size, streamed: false };
                calls.set(call.id, call);
                yield {
                  toolCall: { index: call.index, id: call.id, name: call.name, arguments: call.arguments },
                };
              }
            } else if (part.type === "error") {
              failure = part.error;
              break;
            } else if (part.type === "abort") {
              failure = controller.signal.reason ?? new DOMException("aborted", "AbortError");
              break;
            } else if (part.type === "finish") {
              usage = part.totalUsage ?? {};
            }
          }
        } catch (error) {
          failure = error;
        } finally {
          clearTimeout(timer);
        }
      }
      const iterator = chunks();
      let settle!: (value: LlmResult) => void;
      let fail!: (reason: unknown) => void;
      const result = new Promise<LlmResult>((res, rej) => {
        settle = res;
        fail = rej;
      });
      result.catch(() => {});
      async function* answered() {
        yield* iterator;
        if (failure) fail(toUpstreamError(failure, config.llmTimeoutSeconds, Boolean(request.apiKey)));
        else
          settle({
            text,
            inputTokens: usage.inputTokens ?? 0,
            outputTokens: usage.outputTokens ?? 0,
            cachedInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? 0,
            answeredBy: model.id,
            ...(calls.size > 0
              ? {
                  toolCalls: [...calls.values()].map(({ id, name, arguments: args }) => ({
                    id,
                    name,
                    arguments: args,
                  })),
                }
              : {}),
          });
      }
      return {
        chunks: {
          [Symbol.asyncIterator]() {
            const inner = answered();
            return {
              next: () => inner.next(),
              // Closed before its end (the caller stopped or left): the vendor's request is cancelled
              // at once, even while it has not answered yet (a generator's own return would wait).
              return: (value?: unknown) => {
                controller.abort(new DOMException("stopped", "AbortError"));
                return inner.return(value as undefined);
              },
              [Symbol.asyncIterator]() {
                return this;
              },
            };
          },
        },
        result,
      };
    },
  };
}

/**
 * Runs `run` against a loopback server answering every request with a minimal chat completion,
 * on an Agent of its own; both are closed afterwards. No vendor is called.
 */
async function withLoopbackUpstream<T>(run: (baseURL: string, agent: Agent) => Promise<T>): Promise<T> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end(WARM_UP_ANSWER));
  });
  await new Promise<void>((ready, fail) => server.listen(0, "127.0.0.1", ready).once("error", fail));
  const agent = new Agent();
  try {
    return await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, agent);
  } finally {
    await agent.close();
    server.closeAllConnections();
    server.close();
  }
}

/** What the warm-up's loopback server answers: a minimal OpenAI chat completion. */
const WARM_UP_ANSWER = JSON.stringify({
  id: "chatcmpl-warm-up",
  object: "chat.completion",
  created: 0,
  model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

/**
 * The AI SDK's model objects, made once per (provider, vendor model) and reused. Making one
 * builds its request and chunk schemas (zod) and their compiled parsers: ~0.5 ms CPU and tens of
 * KB per call when done per call (docs/decisions/017). A model object keeps no per-call state.
 * The cache belongs to one LlmClient, whose providers are built from one configuration (keys,
 * base URL): a server with another configuration builds another client, so a model object never
 * outlives the key or base URL it was made with. Bounded by the model catalog.
 */
export function createModelCache(
  providers: Partial<Record<ProviderName, (model: string) => LanguageModel>>,
): { get(provider: ProviderName, vendorModel: string): LanguageModel | undefined } {
  const made = new Map<string, LanguageModel>();
  return {
    get(provider, vendorModel) {
      const factory = providers[provider];
      if (!factory) return undefined;
      const key = `${provider}\u0000${vendorModel}`;
      let language = made.get(key);
      if (!language) {
        language = factory(vendorModel);
        made.set(key, language);
      }
      return language;
    },
  };
}

/**
 * Model objects made with creators' own keys (docs/decisions/026), one per (provider, key, vendor
 * model), so a busy creator-keyed app does not rebuild its model per call. Keyed by a SHA-256 of
 * the key (the key itself is only inside the provider object); bounded, oldest dropped first. A
 * replaced key makes a new entry; the old one ages out.
 */
export function createCreatorModelCache(
  make: (provider: ProviderName, apiKey: string) => (model: string) => LanguageModel,
  limit = 500,
): { get(provider: ProviderName, apiKey: string, vendorModel: string): LanguageModel } {
  const made = new Map<string, LanguageModel>();
  return {
    get(provider, apiKey, vendorModel) {
      const key = `${provider}\u0000${createHash("sha256").update(apiKey).digest("base64url")}\u0000${vendorModel}`;
      let language = made.get(key);
      if (!language) {
        language = make(provider, apiKey)(vendorModel);
        if (made.size >= limit) made.delete(made.keys().next().value as string);
        made.set(key, language);
      }
      return language;
    },
  };
}

/**
 * The offline model: echoes the rendered prompt (or the last tool result) and counts tokens with a
 * real tokenizer. Given tools it calls one, deterministically (sandboxToolCall).
 */
function sandboxAnswer(request: LlmRequest): LlmResult {
  const last = request.messages.at(-1)?.content ?? "";
  const input = [
    request.system ?? "",
    ...request.messages.map((m) => m.content),
    ...(request.tools?.tools.map((t) => JSON.stringify(t)) ?? []),
  ].join("\n");
  const call = sandboxToolCall(request);
  if (call) {
    const outputTokens = countTokens(`${call.name} ${call.arguments}`);
    return {
      text: "",
      inputTokens: countTokens(input),
      outputTokens,
      answeredBy: "sandbox",
      toolCalls: [call],
    };
  }
  const schema = request.outputSchema ?? schemaOf(request.responseFormat);
  const text = schema
    ? JSON.stringify(sampleJson(schema as JsonSchema, `[sandbox] ${last}`, schema as JsonSchema))
    : `[sandbox ${request.model}] ${last}`;
  return { text, inputTokens: countTokens(input), outputTokens: countTokens(text), answeredBy: "sandbox" };
}

/**
 * The sandbox's tool call (docs/decisions/053): the named tool when `tool_choice` names one, else
 * the first; its arguments a sample of its parameters' schema (sampleJson, strings echoing the
 * last user message). It calls one when the choice requires it, or with `auto` until a tool
 * result arrives, so a caller's tool loop runs offline: call, result, then a text answer.
 */
function sandboxToolCall(request: LlmRequest): ToolCall | undefined {
  const settings = request.tools;
  if (!settings || settings.tools.length === 0 || settings.choice === "none") return undefined;
  const choice = settings.choice ?? "auto";
  if (choice === "auto" && request.messages.at(-1)?.role === "tool") return undefined;
  const chosen =
    typeof choice === "object" ? settings.tools.find((t) => t.name === choice.name) : settings.tools[0];
  if (!chosen) return undefined;
  const asked = [...request.messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const schema = chosen.parameters as JsonSchema;
  return {
    id: `call_sandbox_${request.messages.length}`,
    name: chosen.name,
    arguments: JSON.stringify(sampleJson(schema, asked, schema) ?? {}),
  };
}

/** The schema a JSON answer must fit: the caller's, or for `json_object` any object with an answer. */
function schemaOf(format: ResponseFormat | undefined): JsonSchema | undefined {
  if (!format) return undefined;
  if (format.type === "json_schema") return format.schema;
  return { type: "object", properties: { answer: { type: "string" } } };
}

/** The AI SDK's output setting for a caller's structured output: a JSON answer, to a schema when given. */
function outputOf(format: ResponseFormat | undefined) {
  if (!format) return undefined;
  if (format.type === "json_object") return Output.json();
  return Output.object({
    schema: jsonSchema(format.schema),
    name: format.name,
    description: format.description,
  });
}

/**
 * A value that fits a JSON Schema (the subset structured output uses: types, properties,
 * required, enum, const, default, anyOf/oneOf, $ref into $defs, minItems, minimum, maxLength):
 * its default or first allowed value, numbers at their minimum, strings echo the prompt. `root`
 * resolves local `$ref`s; `depth` stops a recursive schema.
 */
export function sampleJson(schema: JsonSchema, text: string, root: JsonSchema, depth = 0): unknown {
  if (depth > 8) return null;
  const ref = schema.$ref;
  if (typeof ref === "string" && ref.startsWith("#/")) {
    const target = ref
      .slice(2)
      .split("/")
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], root);
    return sampleJson((target ?? {}) as JsonSchema, text, root, depth + 1);
  }
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const choices = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(choices) && choices[0]) return sampleJson(choices[0], text, root, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "number":
    case "integer":
      return typeof schema.minimum === "number" ? schema.minimum : 0;
    case "boolean":
      return false;
    case "null":
      return null;
    case "array": {
      const count = typeof schema.minItems === "number" ? schema.minItems : 0;
      const items = (schema.items ?? {}) as JsonSchema;
      return Array.from({ length: count }, () => sampleJson(items, text, root, depth + 1));
    }
    case "string":
      return typeof schema.maxLength === "number" ? text.slice(0, schema.maxLength) : text;
    default: {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      return Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [
          name,
          sampleJson(property, text, root, depth + 1),
        ]),
      );
    }
  }
}

function sandboxStream(request: LlmRequest): LlmStream {
  const answer = sandboxAnswer(request);
  const pieces: StreamPiece[] = answer.toolCalls
    ? answer.toolCalls.map((call, index) => ({ toolCall: { index, ...call } }))
    : (answer.text.match(/\S+\s*/g) ?? [answer.text]);
  return {
    chunks: (async function* () {
      for (const piece of pieces) yield piece;
    })(),
    result: Promise.resolve(answer),
  };
}

export function toUpstreamError(error: unknown, timeoutSeconds: number, creatorKey = false): AppError {
  if (error instanceof AppError) return error;
  const name = error instanceof Error ? error.name : "";
  const causeName = error instanceof Error && error.cause instanceof Error ? error.cause.name : "";
  if (name === "TimeoutError" || name === "AbortError" || causeName === "TimeoutError") {
    return new AppError(
      "upstream_timeout",
      `The model provider did not answer within ${timeoutSeconds} seconds`,
    );
  }
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === 429) return upstreamRateLimited(error.responseHeaders);
    if (status === 401 || status === 403) {
      return new AppError(
        "upstream_failed",
        creatorKey
          ? `The model provider rejected the app creator's own API key (HTTP ${status})`
          : `The model provider rejected this server's API key (HTTP ${status})`,
      );
    }
    if (status && status >= 500)
      return new AppError("upstream_failed", `The model provider failed (HTTP ${status})`);
    if (status)
      return new AppError(
        "upstream_failed",
        `The model provider refused the request (HTTP ${status}): ${error.message.slice(0, 300)}`,
      );
    return new AppError("upstream_failed", "Could not reach the model provider");
  }
  return new AppError("upstream_failed", "The model provider failed to answer");
}
