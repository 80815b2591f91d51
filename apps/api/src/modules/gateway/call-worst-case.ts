import { AppError } from "../../lib/errors.ts";
import type { LlmRequest } from "../models/llm.ts";
import {
  MICROS_PER_CENT,
  modelCostMicros,
  priceAt,
  type WorstCaseSettings,
  worstCaseInputTokens,
} from "../models/model-prices.ts";

/**
 * A prepared call's worst-case model cost, from what will actually be sent to the vendor
 * (docs/decisions/063): the app's own prompt as the price guard counts it (decision 026: tokens of
 * the system prompt, template and output-schema instruction, counted once per version) plus
 * everything else in the request counted as ONE TOKEN PER UTF-8 BYTE — the values the caller put
 * into the template and system prompt, the chat query, caller instructions, every earlier turn
 * (a Dify conversation's replayed history, an OpenAI client's messages, a stored Responses chain),
 * every tool call and tool result, and the tools' JSON — plus the request's `max_tokens` at the
 * output price. A byte-level tokenizer (OpenAI's, Anthropic's, Llama's, and SentencePiece with
 * byte fallback: Gemini's, Mistral's) never makes more tokens than bytes, so the count bounds what
 * any vendor bills whatever the caller sends, and costs one pass over the bytes (a tokenizer run
 * over a megabyte of hostile text would cost seconds). Content parts reach the model as text (the
 * gateway takes no images or files): their text is counted as sent.
 *
 * A tool loop is one paid call per model call (decision 053), so each request is bounded alone.
 */
export interface CallWorstCase {
  model: string;
  /** The input tokens this call may be billed at most. */
  inputTokens: number;
  outputTokens: number;
  micros: number;
}

/** What the creator's prompt contributes: counted by the guard's tokenizer, and its bytes as sent. */
export interface CreatorPromptCount {
  tokens: number;
  /** UTF-8 bytes of the same text as the request carries it without the caller's values. */
  bytes: number;
}

const PLACEHOLDER = /\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}/g;

/**
 * The creator's prompt of a version as the guard counts it (`worstCaseInputTokens` without the
 * inputs' `maxLength`, which are the caller's and counted as sent), and its bytes as the gateway
 * renders it with every value empty: system prompt (with the output-schema instruction) and template.
 */
export function creatorPromptCount(
  settings: Pick<WorstCaseSettings, "model" | "systemPrompt" | "promptTemplate" | "outputSchema">,
): CreatorPromptCount {
  let system = settings.systemPrompt.replace(PLACEHOLDER, "");
  if (settings.outputSchema)
    system += `\n\nAnswer only with one JSON object that matches this JSON schema, and nothing else:\n${JSON.stringify(settings.outputSchema)}`;
  return {
    tokens: worstCaseInputTokens({ ...settings, maxTokens: 0, inputSchema: null }),
    bytes: bytesOf(system) + bytesOf(settings.promptTemplate.replace(PLACEHOLDER, "")),
  };
}

/** A turn's own framing at the vendor (role, separators): OpenAI documents 3-4 tokens a message. */
const TOKENS_PER_EXTRA_MESSAGE = 4;

const bytesOf = (text: string | undefined): number => (text ? Buffer.byteLength(text, "utf8") : 0);

/**
 * The input tokens `request` may be billed at most: `creator` as the guard counted it, and every
 * other byte of the request as a token. The rendered system prompt and the last user message
 * (the rendered template) hold the creator's text and the caller's values: what they carry beyond
 * `creator.bytes` is the caller's.
 */
export function countCallInputTokens(request: LlmRequest, creator: CreatorPromptCount): number {
  const [rendered, ...others] = renderedFirst(request);
  let callerBytes = Math.max(0, bytesOf(request.system) + bytesOf(rendered?.content) - creator.bytes);
  for (const message of others) {
    callerBytes += bytesOf(message.content) + TOKENS_PER_EXTRA_MESSAGE;
    if (message.role === "assistant")
      for (const call of message.toolCalls ?? [])
        callerBytes += bytesOf(call.id) + bytesOf(call.name) + bytesOf(call.arguments);
    if (message.role === "tool") callerBytes += bytesOf(message.toolCallId);
  }
  if (request.tools) callerBytes += bytesOf(JSON.stringify(request.tools));
  if (request.responseFormat) callerBytes += bytesOf(JSON.stringify(request.responseFormat));
  for (const stop of request.stop ?? []) callerBytes += bytesOf(stop);
  return creator.tokens + callerBytes;
}

/**
 * The rendered user message first, then every other turn: the gateway puts the rendered template
 * after the history and before the tool loop's turns (prompt-call.ts); it is the last user
 * message that is followed only by assistant and tool turns.
 */
function renderedFirst(request: LlmRequest): LlmRequest["messages"] {
  const messages = request.messages;
  let index = messages.length - 1;
  while (index >= 0 && messages[index]?.role !== "user") index -= 1;
  if (index < 0) return [{ role: "user", content: "" }, ...messages];
  return [messages[index] as LlmRequest["messages"][number], ...messages.filter((_, i) => i !== index)];
}

/** The worst-case model cost of `request` at `at`: its counted input and its `maxTokens` of output. */
export function callWorstCase(
  request: LlmRequest,
  creator: CreatorPromptCount,
  at: Date = new Date(),
): CallWorstCase {
  const inputTokens = countCallInputTokens(request, creator);
  const outputTokens = Math.max(0, Math.floor(request.maxTokens));
  return {
    model: request.model,
    inputTokens,
    outputTokens,
    micros: modelCostMicros(request.model, { inputTokens, outputTokens }, at),
  };
}

/**
 * The most input tokens a call of `model` with `outputTokens` of output may carry while its
 * worst case stays within `shareMicros` (what the creator is paid for it); null when input is
 * free at this model (no bound), 0 when even no input does not fit.
 */
export function maxInputTokens(
  model: string,
  outputTokens: number,
  shareMicros: number,
  at: Date = new Date(),
): number | null {
  const price = priceAt(model, at);
  if (!price || price.inputPerMillion === 0) return null;
  const outputScaled = BigInt(Math.max(0, Math.floor(outputTokens))) * BigInt(price.outputPerMillion);
  const budgetScaled = BigInt(Math.floor(shareMicros)) * 1_000_000n;
  if (budgetScaled < outputScaled) return 0;
  // cost = ceil((in·rate + out·rate) / 1e6) ≤ share  ⇔  in·rate + out·rate ≤ share·1e6.
  return Number((budgetScaled - outputScaled) / BigInt(price.inputPerMillion));
}

/**
 * Refuses (413 `input_too_large`) a call whose worst case is more than `shareMicros`, the creator's
 * share of what the call is paid: called before payment and before the vendor, so nothing is
 * charged or held. The message names the limit and the count, and what raises the limit.
 */
export function refuseOversizedCall(worst: CallWorstCase, shareMicros: number, at: Date = new Date()): void {
  if (worst.micros <= shareMicros) return;
  const limit = maxInputTokens(worst.model, worst.outputTokens, shareMicros, at) ?? 0;
  throw new AppError(
    "input_too_large",
    `This call's input counts ${worst.inputTokens.toLocaleString("en-US")} tokens (the app's prompt included; ` +
      `one token per byte of what you send), above the ${limit.toLocaleString("en-US")} input tokens a call of this app ` +
      `may carry at what it is paid (${describeShare(shareMicros)} after the platform fee, with ` +
      `${worst.outputTokens} tokens of output at ${worst.model}'s prices). Send less: fewer or shorter messages, ` +
      "tools or tool results. Nothing was charged.",
  );
}

function describeShare(micros: number): string {
  const cents = micros / MICROS_PER_CENT;
  return `${Number.isInteger(cents) ? cents : cents.toFixed(2)}¢`;
}

/** What an app's published input limit is computed from: its production version's model settings. */
export interface InputLimitSettings {
  model: string;
  maxTokens: number;
  modelKeys: "platform" | "creator";
}

/**
 * The input limit an app publishes (Explore, MCP tool metadata, the OpenAI model entry): the most
 * input tokens a call of its production version may carry at its current price, its own prompt
 * included, counted as `countCallInputTokens` counts. Null when nothing bounds it: apps on their
 * creator's keys, workflow apps (pass no settings), a model whose input is free.
 */
export function publishedInputLimit(
  settings: InputLimitSettings | null,
  priceCents: number,
  feePercent: number,
): number | null {
  if (!settings || settings.modelKeys === "creator") return null;
  const share = (priceCents * MICROS_PER_CENT * (100 - feePercent)) / 100;
  return maxInputTokens(settings.model, settings.maxTokens, share);
}
