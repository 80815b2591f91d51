import type { AppError } from "../../lib/errors.ts";
import type { ToolCall } from "../models/tools.ts";
import { openAiCostFields } from "./charge.ts";
import type { ExecutionResult } from "./execution.ts";
import type { AnswerMeta, OpenAiDialect } from "./openai-call.ts";
import { openAiErrorOf } from "./openai-errors.ts";
import type { CallCharge } from "./paid-call.ts";

/** A blocking chat completion, as answered and stored for Idempotency-Key replays. */
export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  /** The `model` the caller sent, pin included (`slug@v12`). */
  model: string;
  /**
   * The prompt version that answered (`v12`): OpenAI's field for the backend configuration that
   * served a call (docs/decisions/057), a prompt's or a workflow's (decision 060).
   */
  system_fingerprint?: string;
  choices: {
    index: number;
    message: { role: "assistant"; content: string | null; refusal: null; tool_calls?: ChatToolCall[] };
    /** `tool_calls` when the model called tools (the caller runs them and calls again). */
    finish_reason: "stop" | "tool_calls";
    logprobs: null;
  }[];
  usage: ChatUsage;
}

interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Absent on answers stored before decision 029. */
  cost?: number;
  charged_cents?: number;
  paid_by?: CallCharge["paidBy"];
  /** The call's signed receipt, when it was paid (docs/decisions/073). */
  receipt?: string;
}

interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

const chatToolCall = (call: ToolCall): ChatToolCall => ({
  id: call.id,
  type: "function",
  function: { name: call.name, arguments: call.arguments },
});

const event = (data: object) => `data: ${JSON.stringify(data)}\n\n`;

/** The version that answered as the answer names it, in every chunk as OpenAI sends it. */
const fingerprint = (version: string | undefined) => (version ? { system_fingerprint: version } : {});

/** A stored answer's meta, for the chunks that replay or end it. */
const metaOf = (answer: ChatCompletion): AnswerMeta => ({
  id: answer.id,
  created: answer.created,
  model: answer.model,
  version: answer.system_fingerprint,
});

function chunk(meta: AnswerMeta, delta: object, finish: string | null) {
  return event({
    id: meta.id,
    object: "chat.completion.chunk",
    created: meta.created,
    model: meta.model,
    ...fingerprint(meta.version),
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
}

/**
 * The end of a stream: the last choice chunk, then, when the caller asked for it with
 * `stream_options.include_usage`, the usage (with what the call cost) in a chunk of its own with
 * no choices, as OpenAI sends it; then `[DONE]`.
 */
function ending(answer: ChatCompletion, includeUsage: boolean): string {
  const usage = includeUsage
    ? event({
        id: answer.id,
        object: "chat.completion.chunk",
        created: answer.created,
        model: answer.model,
        ...fingerprint(answer.system_fingerprint),
        choices: [],
        usage: answer.usage,
      })
    : "";
  const finish = answer.choices[0]?.finish_reason ?? "stop";
  return `${chunk(metaOf(answer), {}, finish)}${usage}data: [DONE]\n\n`;
}

/** Chat Completions (`POST /v1/chat/completions`) as OpenAI writes it. */
export function chatDialect(includeUsage: boolean): OpenAiDialect<ChatCompletion> {
  return {
    idPrefix: "chatcmpl-",
    answer: (meta: AnswerMeta, result: ExecutionResult, charge: CallCharge) => ({
      id: meta.id,
      object: "chat.completion",
      created: meta.created,
      model: meta.model,
      ...fingerprint(meta.version),
      choices: [
        {
          index: 0,
          // As OpenAI answers a call of tools: content null unless the model also wrote text.
          message: result.toolCalls?.length
            ? {
                role: "assistant",
                content: result.answer || null,
                refusal: null,
                tool_calls: result.toolCalls.map(chatToolCall),
              }
            : { role: "assistant", content: result.answer, refusal: null },
          finish_reason: result.toolCalls?.length ? "tool_calls" : "stop",
          logprobs: null,
        },
      ],
      // OpenAI's token counts, and what the call cost (`cost` in dollars, as OpenRouter; charge.ts).
      usage: {
        prompt_tokens: result.inputTokens,
        completion_tokens: result.outputTokens,
        total_tokens: result.inputTokens + result.outputTokens,
        ...openAiCostFields(charge),
      },
    }),
    streamStart: (meta) => chunk(meta, { role: "assistant", content: "" }, null),
    streamDelta: (meta, piece) => chunk(meta, { content: piece }, null),
    // As OpenAI streams a tool call: its first piece names it (index, id, type, name, arguments
    // ""), the next pieces carry only the index and a piece of the arguments.
    streamToolCall: (meta, piece) =>
      chunk(
        meta,
        {
          tool_calls: [
            piece.id !== undefined
              ? {
                  index: piece.index,
                  id: piece.id,
                  type: "function",
                  function: { name: piece.name ?? "", arguments: piece.arguments },
                }
              : { index: piece.index, function: { arguments: piece.arguments } },
          ],
        },
        null,
      ),
    streamEnd: (answer) => ending(answer, includeUsage),
    streamError: (_meta, error: AppError) => event({ error: openAiErrorOf(error) }),
    replayStream: (stored) => {
      const message = stored.choices[0]?.message;
      const calls = message?.tool_calls?.map((call, index) => ({ index, ...call }));
      const meta = metaOf(stored);
      return (
        chunk(meta, { role: "assistant", content: message?.content ?? "" }, null) +
        (calls ? chunk(meta, { tool_calls: calls }, null) : "") +
        ending(stored, includeUsage)
      );
    },
  };
}
