import type { AppError } from "../../lib/errors.ts";
import { openAiCostFields } from "./charge.ts";
import type { ExecutionResult } from "./execution.ts";
import type { AnswerMeta, OpenAiDialect } from "./openai-call.ts";
import type { ResponsesRequest } from "./openai-request.ts";
import type { CallCharge } from "./paid-call.ts";

type Status = "in_progress" | "completed" | "failed";

interface OutputMessage {
  type: "message";
  id: string;
  status: Status;
  role: "assistant";
  content: { type: "output_text"; text: string; annotations: []; logprobs: [] }[];
}

/** A Response object (`object: "response"`), as answered and stored for Idempotency-Key replays. */
export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  status: Status;
  error: { code: string; message: string } | null;
  incomplete_details: null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: OutputMessage[];
  parallel_tool_calls: false;
  previous_response_id: string | null;
  reasoning: null;
  store: boolean;
  temperature: number | null;
  text: { format: { type: string } };
  tool_choice: "none" | "auto";
  tools: [];
  top_p: number | null;
  truncation: "disabled";
  usage: ResponsesUsage | null;
  user: string | null;
  metadata: Record<string, never>;
}

interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  cost?: number;
  charged_cents?: number;
  paid_by?: CallCharge["paidBy"];
}

/** The message item's id, from the response's: `resp_<id>` → `msg_<id>`. */
const messageId = (responseId: string) => `msg_${responseId.slice("resp_".length)}`;

/**
 * The Responses API (`POST /v1/responses`) as OpenAI writes it: a Response object, and when
 * streamed the event sequence response.created, response.in_progress, response.output_item.added,
 * response.content_part.added, response.output_text.delta…, response.output_text.done,
 * response.content_part.done, response.output_item.done and response.completed (with usage and
 * what the call cost). Each event carries its `sequence_number`. `keep` stores an answered
 * response (`store`, response-store.ts) before the caller gets it.
 */
export function responsesDialect(
  body: ResponsesRequest,
  keep?: OpenAiDialect<ResponseObject>["keep"],
): OpenAiDialect<ResponseObject> {
  const formatType = body.text?.format?.type ?? "text";
  // Events of one stream are numbered from 0; a dialect serves one request.
  let sequence = 0;
  const event = (type: string, data: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;

  function response(meta: AnswerMeta, status: Status, text: string | null, usage: ResponsesUsage | null) {
    const output: OutputMessage[] =
      text === null
        ? []
        : [{ type: "message", id: messageId(meta.id), status, role: "assistant", content: [part(text)] }];
    return {
      id: meta.id,
      object: "response" as const,
      created_at: meta.created,
      status,
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      model: meta.model,
      output,
      parallel_tool_calls: false as const,
      previous_response_id: body.previous_response_id ?? null,
      reasoning: null,
      store: body.store ?? true,
      temperature: body.temperature ?? null,
      text: { format: { type: formatType } },
      tool_choice: body.tool_choice ?? "none",
      tools: [] as [],
      top_p: body.top_p ?? null,
      truncation: "disabled" as const,
      usage,
      user: body.user ?? null,
      metadata: {},
    };
  }
  const part = (text: string) => ({
    type: "output_text" as const,
    text,
    annotations: [] as [],
    logprobs: [] as [],
  });
  const at = (answer: { id: string }) => ({
    item_id: messageId(answer.id),
    output_index: 0,
    content_index: 0,
  });

  /** Everything after the deltas, for an answer whose text is complete. */
  function ending(answer: ResponseObject): string {
    const item = answer.output[0] as OutputMessage;
    const text = item.content[0]?.text ?? "";
    return (
      event("response.output_text.done", { ...at(answer), text, logprobs: [] }) +
      event("response.content_part.done", { ...at(answer), part: part(text) }) +
      event("response.output_item.done", { output_index: 0, item }) +
      event("response.completed", { response: answer })
    );
  }
  function beginning(meta: AnswerMeta): string {
    const started = response(meta, "in_progress", null, null);
    return (
      event("response.created", { response: started }) +
      event("response.in_progress", { response: started }) +
      event("response.output_item.added", {
        output_index: 0,
        item: {
          type: "message",
          id: messageId(meta.id),
          status: "in_progress",
          role: "assistant",
          content: [],
        },
      }) +
      event("response.content_part.added", { ...at(meta), part: part("") })
    );
  }

  return {
    idPrefix: "resp_",
    keep,
    answer: (meta: AnswerMeta, result: ExecutionResult, charge: CallCharge) =>
      response(meta, "completed", result.answer, {
        input_tokens: result.inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: result.outputTokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: result.inputTokens + result.outputTokens,
        ...openAiCostFields(charge),
      }),
    streamStart: beginning,
    streamDelta: (meta, delta) => event("response.output_text.delta", { ...at(meta), delta, logprobs: [] }),
    streamEnd: ending,
    streamError: (meta, error: AppError) =>
      event("response.failed", {
        response: {
          ...response(meta, "failed", null, null),
          error: { code: error.code, message: error.message },
        },
      }),
    replayStream: (stored) =>
      beginning({ id: stored.id, created: stored.created_at, model: stored.model }) +
      event("response.output_text.delta", {
        ...at(stored),
        delta: stored.output[0]?.content[0]?.text ?? "",
        logprobs: [],
      }) +
      ending(stored),
  };
}
