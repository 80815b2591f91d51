import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../lib/errors.ts";
import { markStage } from "../../lib/stage-timings.ts";
import type { ToolCallDelta } from "../models/tools.ts";
import { describePin, pinFrom, type VersionPin } from "../releases/pins.ts";
import { findAppForCall } from "./access.ts";
import { answerPaidCall, type CallMeta, type CallPresenter } from "./call-lifecycle.ts";
import type { Execution, ExecutionResult, GatewayInput } from "./execution.ts";
import {
  type GatewayDeps,
  headerPinSource,
  naturalModeOf,
  prepareExecution,
  stickyKeyOf,
} from "./gateway-call.ts";
import { maxPriceOf } from "./max-price.ts";
import { OpenAiError } from "./openai-errors.ts";
import { type OpenAiCall, refuseWorkflowOverrides } from "./openai-request.ts";
import { refuseTools } from "./openai-tools.ts";
import type { CallCharge } from "./paid-call.ts";
import { preparePromptExecution } from "./prompt-call.ts";

/**
 * What identifies one answer in either API: its id, when it was made, the `model` the caller sent
 * (`slug` or `slug@pin`), and the prompt version that answered (`v12`; none for a workflow app).
 */
export interface AnswerMeta {
  id: string;
  created: number;
  model: string;
  version?: string;
}

/**
 * How one OpenAI API (Chat Completions, Responses) writes an answer: the blocking body (also
 * what an Idempotency-Key replay answers), and the stream's events as SSE text.
 */
export interface OpenAiDialect<Answer extends { usage?: unknown }> {
  /** The answer id's prefix, before the call id: `chatcmpl-`, `resp_`. */
  idPrefix: string;
  answer(meta: AnswerMeta, result: ExecutionResult, charge: CallCharge): Answer;
  streamStart(meta: AnswerMeta): string;
  streamDelta(meta: AnswerMeta, piece: string): string;
  /** A piece of a tool call the model is making (decision 053). */
  streamToolCall(meta: AnswerMeta, piece: ToolCallDelta): string;
  /** The end of a stream that was answered in full, `answer` being what was sent. */
  streamEnd(answer: Answer): string;
  streamError(meta: AnswerMeta, error: AppError): string;
  /** A stored answer as a stream, for a streamed request replayed under its Idempotency-Key. */
  replayStream(stored: Answer): string;
  /** Keeps an answered call's answer before the caller gets it (the Responses API's `store`). */
  keep?(answer: Answer, call: CallMeta): Promise<void>;
}

/**
 * An OpenAI dialect as the paid call's presenter (call-lifecycle.ts): no pings, no stop. Answers
 * carry back the `model` the caller sent, pin included, as OpenAI answers the model asked for.
 */
function presenterOf<Answer extends { usage?: unknown }>(
  dialect: OpenAiDialect<Answer>,
  model: string,
): CallPresenter<Answer> {
  const meta = (call: CallMeta): AnswerMeta => ({
    id: `${dialect.idPrefix}${call.messageId.replace(/-/g, "")}`,
    created: call.createdAt,
    model,
    ...(call.served ? { version: `v${call.served.version}` } : {}),
  });
  return {
    body: (result, call) => dialect.answer(meta(call), result, call.charge),
    storedUsage: (answer) => answer.usage,
    streamStart: (call) => dialect.streamStart(meta(call)),
    streamChunk: (piece, call) => dialect.streamDelta(meta(call), piece),
    streamToolCall: (piece, call) => dialect.streamToolCall(meta(call), piece),
    streamEnd: (result, call) => dialect.streamEnd(dialect.answer(meta(call), result, call.charge)),
    streamError: (error, call) => dialect.streamError(meta(call), error),
    replayStream: (stored) => dialect.replayStream(stored),
    keep: dialect.keep && ((answer, call) => dialect.keep?.(answer, call) ?? Promise.resolve()),
  };
}

/**
 * The version or label an OpenAI-style call pins (docs/decisions/057): `model: "slug@v12"`, or the
 * `Promptmint-Version` header; both, naming different ones, is a 400 naming `model`.
 */
export function openAiPin(
  request: FastifyRequest,
  call: Pick<OpenAiCall, "modelPin">,
): { pin: VersionPin; field: string } | undefined {
  return pinFrom([call.modelPin && { pin: call.modelPin, field: "model" }, headerPinSource(request)]);
}

/**
 * A pinned version or label the app does not have, in OpenAI's words: 404 `model_not_found`
 * (with `param: "model"` when the pin came in `model`), its message naming the version.
 */
function asModelNotFound(error: unknown, field: string | undefined): unknown {
  if (!(error instanceof AppError) || error.code !== "version_not_found") return error;
  return new OpenAiError(
    "version_not_found",
    "model_not_found",
    error.message,
    field === "model" ? "model" : null,
  );
}

/**
 * An app the caller may not call or that does not exist, as OpenAI answers an unknown model: 404
 * `model_not_found` with `param: "model"`, the same on Chat Completions, Responses and
 * `/v1/models/{id}` (openai.routes.ts).
 */
export function unknownModel(error: unknown, model: string): unknown {
  if (!(error instanceof AppError) || error.code !== "not_found") return error;
  return new OpenAiError(
    "not_found",
    "model_not_found",
    `The model '${model}' does not exist. If it is your app, check it is Public and Live; a private or draft app answers only its owner.`,
    "model",
  );
}

/**
 * One OpenAI-style call, the same for both APIs (docs/decisions/032): the app named by `model`,
 * its execution with the caller's overrides, then the paid call's life (call-lifecycle.ts:
 * Idempotency-Key, payment, the blocking answer or the stream) in the dialect's shape.
 */
export async function runOpenAiCall<Answer extends { usage?: unknown }>(
  deps: GatewayDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  call: OpenAiCall,
  dialect: OpenAiDialect<Answer>,
  fingerprint: unknown,
): Promise<Answer | undefined> {
  const { db } = deps;
  markStage(request, "auth");
  const maxPriceCents = maxPriceOf(request, call.maxPriceCents);
  // Counted before anything is prepared or paid, so a refused stream costs nothing.
  if (call.stream) deps.openStreams.open(request, reply);
  const pin = openAiPin(request, call);
  // The caller, or an agent paying into its balance for this call (access.ts).
  const { application, caller } = await findAppForCall(deps, request, call.slug, undefined, reply).catch(
    (error) => Promise.reject(unknownModel(error, call.model)),
  );
  markStage(request, "app");
  const mode = naturalModeOf(application);
  refuseTools(call, application.type === "prompt" && application.allowTools);
  const input: GatewayInput = {
    inputs: call.inputs,
    query: call.query,
    response_mode: "blocking",
    user: call.user,
  };
  const stickyKey = stickyKeyOf(request, caller.id, call.user);
  function prepare(): Promise<Execution> {
    if (application.type === "prompt")
      return preparePromptExecution(db, deps.llm, {
        app: application,
        caller,
        input,
        mode,
        history: call.history,
        followUp: call.followUp,
        secrets: deps.secrets,
        overrides: call.overrides,
        pin: pin?.pin,
        stickyKey,
        pinPriceGuard: { feePercent: deps.feePercent },
      });
    refuseWorkflowOverrides(call);
    return prepareExecution(deps, { app: application, caller, input, mode, pin, stickyKey });
  }
  return answerPaidCall(deps, request, reply, {
    caller,
    application,
    mode,
    input,
    streaming: call.stream,
    // A pin sent in the header is part of the request too (one in `model` is in the body already).
    fingerprint:
      pin && pin.field !== "model" ? { request: fingerprint, pin: describePin(pin.pin) } : fingerprint,
    prepare: () => prepare().catch((error) => Promise.reject(asModelNotFound(error, pin?.field))),
    maxPriceCents,
    presenter: presenterOf(dialect, call.model),
  });
}
