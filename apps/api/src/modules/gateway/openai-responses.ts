import type { AppError } from "../../lib/errors.ts";
import type { ToolCallDelta } from "../models/tools.ts";
import { openAiCostFields } from "./charge.ts";
import type { ExecutionResult } from "./execution.ts";
import type { AnswerMeta, OpenAiDialect } from "./openai-call.ts";
import { openAiCodeOfAppError } from "./openai-errors.ts";
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

/** A tool call the model made (decision 053): the caller runs it and sends a `function_call_output`. */
interface OutputFunctionCall {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: "in_progress" | "completed";
}

type OutputItem = OutputMessage | OutputFunctionCall;

interface FunctionTool {
  type: "function";
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
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
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: null;
  store: boolean;
  temperature: number | null;
  text: { format: { type: string } };
  tool_choice: NonNullable<ResponsesRequest["tool_choice"]>;
  tools: FunctionTool[];
  top_p: number | null;
  truncation: "disabled";
  usage: ResponsesUsage | null;
  user: string | null;
  /**
   * OpenAI's key-value pairs of a response (strings, ≤ 16): Promptmint's `promptmint_version`
   * names the prompt version that answered (`v12`; docs/decisions/057). Callers cannot set any.
   */
  metadata: { promptmint_version?: string };
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
  /** The call's signed receipt, when it was paid (docs/decisions/073). */
  receipt?: string;
}

/** A stored or finished response's meta, for the events that end or replay it. */
const metaOf = (answer: ResponseObject): AnswerMeta => ({
  id: answer.id,
  created: answer.created_at,
  model: answer.model,
  version: answer.metadata?.promptmint_version,
});

/** The message item's id, from the response's: `resp_<id>` → `msg_<id>`. */
const messageId = (responseId: string) => `msg_${responseId.slice("resp_".length)}`;
/** A function call item's id: `resp_<id>`, the call's index → `fc_<id>_<index>`. */
const functionCallId = (responseId: string, index: number) =>
  `fc_${responseId.slice("resp_".length)}_${index}`;

/** An item being streamed: its place in `output`, and what it has said so far. */
type OpenItem =
  | { type: "message"; outputIndex: number; text: string }
  | { type: "function_call"; outputIndex: number; item: OutputFunctionCall };

/**
 * The Responses API (`POST /v1/responses`) as OpenAI writes it: a Response object, and when
 * streamed the event sequence response.created, response.in_progress, then for each output item
 * in turn its events (a message: response.output_item.added, response.content_part.added,
 * response.output_text.delta…, response.output_text.done, response.content_part.done,
 * response.output_item.done; a function call: response.output_item.added,
 * response.function_call_arguments.delta…, response.function_call_arguments.done,
 * response.output_item.done), and response.completed (with usage and what the call cost). Each
 * event carries its `sequence_number`. `keep` stores an answered response (`store`,
 * response-store.ts) before the caller gets it.
 */
export function responsesDialect(
  body: ResponsesRequest,
  keep?: OpenAiDialect<ResponseObject>["keep"],
): OpenAiDialect<ResponseObject> {
  const formatType = body.text?.format?.type ?? "text";
  const tools: FunctionTool[] = (body.tools ?? []).map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description ?? null,
    parameters: tool.parameters ?? null,
    strict: tool.strict ?? null,
  }));
  // Events of one stream are numbered from 0, its items too; a dialect serves one request.
  let sequence = 0;
  let opened = 0;
  let open: OpenItem | undefined;
  const event = (type: string, data: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;

  function response(
    meta: AnswerMeta,
    status: Status,
    result: { text: string; toolCalls?: { id: string; name: string; arguments: string }[] } | null,
    usage: ResponsesUsage | null,
  ) {
    const output: OutputItem[] = [];
    if (result && (result.text || !result.toolCalls?.length))
      output.push({
        type: "message",
        id: messageId(meta.id),
        status,
        role: "assistant",
        content: [part(result.text)],
      });
    for (const [index, call] of (result?.toolCalls ?? []).entries())
      output.push({
        type: "function_call",
        id: functionCallId(meta.id, index),
        call_id: call.id,
        name: call.name,
        arguments: call.arguments,
        status: "completed",
      });
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
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      previous_response_id: body.previous_response_id ?? null,
      reasoning: null,
      store: body.store ?? true,
      temperature: body.temperature ?? null,
      text: { format: { type: formatType } },
      tool_choice: body.tool_choice ?? (tools.length > 0 ? "auto" : "none"),
      tools,
      top_p: body.top_p ?? null,
      truncation: "disabled" as const,
      usage,
      user: body.user ?? null,
      metadata: meta.version ? { promptmint_version: meta.version } : {},
    };
  }
  const part = (text: string) => ({
    type: "output_text" as const,
    text,
    annotations: [] as [],
    logprobs: [] as [],
  });
  const textAt = (meta: { id: string }, outputIndex: number) => ({
    item_id: messageId(meta.id),
    output_index: outputIndex,
    content_index: 0,
  });

  /** The events that open a message item (before its first piece of text). */
  function openMessage(meta: AnswerMeta): string {
    const closing = closeOpen(meta, undefined);
    open = { type: "message", outputIndex: opened++, text: "" };
    return (
      closing +
      event("response.output_item.added", {
        output_index: open.outputIndex,
        item: {
          type: "message",
          id: messageId(meta.id),
          status: "in_progress",
          role: "assistant",
          content: [],
        },
      }) +
      event("response.content_part.added", { ...textAt(meta, open.outputIndex), part: part("") })
    );
  }

  /** The events that close the item being streamed, with the item as the answer holds it. */
  function closeOpen(meta: AnswerMeta, answer: ResponseObject | undefined): string {
    const item = open;
    open = undefined;
    if (!item) return "";
    if (item.type === "message") {
      const done: OutputMessage = (answer?.output.find((o) => o.type === "message") as OutputMessage) ?? {
        type: "message",
        id: messageId(meta.id),
        status: "completed",
        role: "assistant",
        content: [part(item.text)],
      };
      const text = done.content[0]?.text ?? item.text;
      return (
        event("response.output_text.done", { ...textAt(meta, item.outputIndex), text, logprobs: [] }) +
        event("response.content_part.done", { ...textAt(meta, item.outputIndex), part: part(text) }) +
        event("response.output_item.done", { output_index: item.outputIndex, item: done })
      );
    }
    const done: OutputFunctionCall = (answer?.output.find(
      (o) => o.type === "function_call" && o.call_id === item.item.call_id,
    ) as OutputFunctionCall) ?? { ...item.item, status: "completed" };
    return (
      event("response.function_call_arguments.done", {
        item_id: item.item.id,
        output_index: item.outputIndex,
        name: done.name,
        arguments: done.arguments,
      }) + event("response.output_item.done", { output_index: item.outputIndex, item: done })
    );
  }

  function textDelta(meta: AnswerMeta, delta: string): string {
    const opening = open?.type === "message" ? "" : openMessage(meta);
    const item = open as Extract<OpenItem, { type: "message" }>;
    item.text += delta;
    return (
      opening +
      event("response.output_text.delta", { ...textAt(meta, item.outputIndex), delta, logprobs: [] })
    );
  }

  function toolCallDelta(meta: AnswerMeta, piece: ToolCallDelta): string {
    let opening = "";
    if (piece.id !== undefined) {
      opening = closeOpen(meta, undefined);
      const item: OutputFunctionCall = {
        type: "function_call",
        id: functionCallId(meta.id, piece.index),
        call_id: piece.id,
        name: piece.name ?? "",
        arguments: "",
        status: "in_progress",
      };
      open = { type: "function_call", outputIndex: opened++, item };
      opening += event("response.output_item.added", { output_index: open.outputIndex, item });
    }
    if (open?.type !== "function_call" || !piece.arguments) return opening;
    open.item.arguments += piece.arguments;
    return (
      opening +
      event("response.function_call_arguments.delta", {
        item_id: open.item.id,
        output_index: open.outputIndex,
        delta: piece.arguments,
      })
    );
  }

  /** Everything after the last piece: the open item closed (an empty message when none was), completed. */
  function ending(answer: ResponseObject): string {
    const meta = metaOf(answer);
    const empty = opened === 0 ? openMessage(meta) : "";
    return empty + closeOpen(meta, answer) + event("response.completed", { response: answer });
  }

  return {
    idPrefix: "resp_",
    keep,
    answer: (meta: AnswerMeta, result: ExecutionResult, charge: CallCharge) =>
      response(
        meta,
        "completed",
        { text: result.answer, toolCalls: result.toolCalls },
        {
          input_tokens: result.inputTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: result.outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: result.inputTokens + result.outputTokens,
          ...openAiCostFields(charge),
        },
      ),
    streamStart: (meta) => {
      const started = response(meta, "in_progress", null, null);
      return (
        event("response.created", { response: started }) +
        event("response.in_progress", { response: started })
      );
    },
    streamDelta: textDelta,
    streamToolCall: toolCallDelta,
    streamEnd: ending,
    streamError: (meta, error: AppError) =>
      event("response.failed", {
        response: {
          ...response(meta, "failed", null, null),
          error: { code: openAiCodeOfAppError(error), message: error.message },
        },
      }),
    replayStream: (stored) => {
      const meta = metaOf(stored);
      const started = { ...stored, status: "in_progress", output: [], usage: null };
      let written =
        event("response.created", { response: started }) +
        event("response.in_progress", { response: started });
      let index = 0;
      for (const item of stored.output) {
        if (item.type === "message") written += textDelta(meta, item.content[0]?.text ?? "");
        else
          written += toolCallDelta(meta, {
            index: index++,
            id: item.call_id,
            name: item.name,
            arguments: item.arguments,
          });
      }
      return written + ending(stored);
    },
  };
}
