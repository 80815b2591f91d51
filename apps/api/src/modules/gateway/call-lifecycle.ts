import type { FastifyReply, FastifyRequest } from "fastify";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { markStage } from "../../lib/stage-timings.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { RECEIPT_HEADER } from "../billing/call-receipts-signing.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import type { ToolCallDelta } from "../models/tools.ts";
import type { ServedVersion } from "../releases/serving.ts";
import {
  CHARGED_HEADER,
  chargedHeaderOfStored,
  chargedHeaderValue,
  receiptOfStored,
  VERSION_HEADER,
} from "./charge.ts";
import type { Execution, ExecutionResult, GatewayInput } from "./execution.ts";
import type { GatewayDeps, Mode } from "./gateway-call.ts";
import { claimIdempotencyKey, type IdempotencyClaim } from "./idempotency.ts";
// The one import of the payment in the gateway's drivers (decision 048).
import { type CallCharge, type CallOutcome, openPaidCall, type PaidCall } from "./paid-call.ts";
import { untilAborted } from "./running-tasks.ts";
import { createSseWriter } from "./sse-writer.ts";

/**
 * The life of a paid call, the same for every protocol (Dify, OpenAI, MCP, the widget, the
 * builder's Test Prompt) and for streams as for blocking answers (docs/decisions/048):
 *
 *   Idempotency-Key claimed (or the first answer replayed) → prepared → paid (`payForCall`,
 *   402 before anything runs) → generated in one piece, or streamed as SSE → `paid.end(outcome)`
 *   exactly once → answered in the protocol's shape (its `CallPresenter`).
 *
 * The failure policy, stated once: a call that was paid for and then fails, whatever failed (the
 * upstream with any status, our own code, the caller leaving before any content), ends as
 * `failed`: recorded as a failed invocation with its cause, charged nothing, and all that was
 * taken is given back. A caller who leaves or stops a stream after content was sent is charged in
 * full (`abandoned`, decision 025). Nothing is recorded before payment.
 */

const PING_INTERVAL_MS = 10_000;

/** What the payment needs from the server: the call payments, the platform's fee, where to top up. */
export type PaymentDeps = Pick<
  GatewayDeps,
  "db" | "payments" | "feePercent" | "publicUrl" | "agentPayments" | "receipts"
>;

/** One call of one app by one caller: what paying for it needs. */
export interface CallOrder {
  request: FastifyRequest;
  caller: LocalUser;
  application: ApplicationRow;
  execution: Execution;
  mode: Mode;
  input: Pick<GatewayInput, "user" | "query">;
  /** The caller's cap on the price (max-price.ts); above it the call is refused unpaid. */
  maxPriceCents?: number;
  /** The owner pays for a call made on a visitor's behalf (docs/decisions/009-embed.md). */
  ownerPays?: boolean;
  /** An eval run's or online evaluation's call, recorded apart from customer calls (decision 078). */
  purpose?: "eval" | "online_eval";
}

/**
 * Takes payment for a prepared call: the one place any call is paid for. Its price is counted first
 * against the caller's spend per minute (rate-limit.ts, docs/decisions/072: a 429 past it), and
 * given back when the call is then refused unpaid; the owner's own calls cost nothing and count nothing.
 */
export async function payForCall(deps: PaymentDeps, order: CallOrder): Promise<PaidCall> {
  const { request, caller, application, ownerPays } = order;
  const free = application.ownerId === caller.id && !ownerPays;
  const spent = free ? undefined : await request.spendBudget?.(effectivePriceCents(application));
  try {
    return await openPaidCall(deps, order);
  } catch (error) {
    await spent?.giveBack();
    throw error;
  }
}

/**
 * Runs a paid call in one piece and ends it: answered (recorded and charged once), or failed
 * (`endFailed`: recorded, nothing charged, all given back) and thrown as an AppError for the
 * endpoint to answer in its own shape. `notCharged` runs when the call was not charged.
 */
export async function generatePaidAnswer(
  request: FastifyRequest,
  paid: PaidCall,
  execution: Execution,
  notCharged?: () => Promise<void>,
): Promise<{ result: ExecutionResult; charge: CallCharge }> {
  let result: ExecutionResult;
  try {
    result = await execution.generate();
  } catch (error) {
    throw await endFailed(request, paid, error, notCharged);
  }
  markStage(request, "model");
  const charge = await paid.end({ kind: "answered", result });
  markStage(request, "record");
  return { result, charge };
}

/** A blocking call that was answered and paid: the answer, what it cost, and its invocation's ids. */
export interface BlockingCallAnswer {
  result: ExecutionResult;
  charge: CallCharge;
  paid: Pick<PaidCall, "messageId" | "createdAt" | "started">;
}

/**
 * Pays for a prepared call and runs it in one piece (MCP's tools, the widget). `notCharged` runs
 * when the call ends without a charge: refused payment, or failed after it.
 */
export async function runBlockingCall(
  deps: PaymentDeps,
  { notCharged, ...order }: CallOrder & { notCharged?: () => Promise<void> },
): Promise<BlockingCallAnswer> {
  const paid = await payForCall(deps, order).catch(async (error) => {
    await notCharged?.();
    throw error;
  });
  const { result, charge } = await generatePaidAnswer(order.request, paid, order.execution, notCharged);
  return { result, charge, paid };
}

/** Ends a paid call that failed (the policy above) and says why as an AppError. */
async function endFailed(
  request: FastifyRequest,
  paid: PaidCall,
  error: unknown,
  notCharged?: () => Promise<void>,
): Promise<AppError> {
  const appError = asAppError(error);
  await paid
    .end({ kind: "failed", error: appError })
    .catch((err) => request.log.error({ err }, "could not record a failed invocation"));
  await notCharged?.();
  return appError;
}

/** What a presenter knows of a call while it runs (ids and time; `model` is the app's slug). */
export interface CallMeta {
  messageId: string;
  createdAt: number;
  conversationId?: string;
  mode: Mode;
  model: string;
  applicationId: string;
  /** The prompt version that answers (prompt apps), for presenters that name it in the body. */
  served?: ServedVersion;
}

/** A call that ended: what it cost, how long it took and whether its caller stopped or left it. */
export interface EndedCall extends CallMeta {
  charge: CallCharge;
  latencyMs: number;
  stopped: boolean;
}

/**
 * How one protocol writes a paid call's answer: Dify's messages (gateway-call.ts) and workflow
 * runs (workflow-run.ts), OpenAI's Chat Completions and Responses (openai-call.ts). The stream's
 * parts are SSE text, written as they are.
 */
export interface CallPresenter<Body extends object = object> {
  /** The blocking answer, also what an Idempotency-Key stores and replays. */
  body(result: ExecutionResult, call: EndedCall): Body;
  /** The usage a stored body holds (its charge goes in a replay's Promptmint-Charged header). */
  storedUsage(body: Body): unknown;
  /** Written before the first chunk ("" for nothing). */
  streamStart(call: CallMeta): string;
  streamChunk(text: string, call: CallMeta): string;
  /**
   * A piece of a tool call the model is making (OpenAI's presenters; decision 053). Only a call
   * whose app passes tools through yields these; a presenter without it writes nothing for them.
   */
  streamToolCall?(piece: ToolCallDelta, call: CallMeta): string;
  /** The end of a stream answered in full, or stopped by its caller (`call.stopped`). */
  streamEnd(result: ExecutionResult, call: EndedCall): string;
  streamError(error: AppError, call: CallMeta): string;
  /** A stored blocking answer replayed as a stream. */
  replayStream(body: Body): string;
  /** Written every 10 s while a stream is open (Dify's `event: ping`); no pings without it. */
  ping?: string;
  /**
   * Keeps an answered call's body (the Responses API's `store`) before the caller gets it: an
   * answer fully sent (blocking, or a stream to its end), never a failed or abandoned one, nor a
   * replay (its first answer was kept).
   */
  keep?(body: Body, call: EndedCall): Promise<void>;
}

/** A call its caller may stop while it streams (Dify's stop, running-tasks.ts). */
export type StoppableTask = { signal: AbortSignal; done(): void };

/**
 * One paid call over HTTP, blocking or streamed: Idempotency-Key, preparation, payment, the
 * answer in the presenter's shape, and the end. Returns the blocking answer (undefined once a
 * stream or a replayed stream was written).
 */
export async function answerPaidCall<Body extends object>(
  deps: GatewayDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  call: Omit<CallOrder, "request" | "execution" | "ownerPays"> & {
    streaming: boolean;
    /** What makes two requests the same for their Idempotency-Key. */
    fingerprint: unknown;
    prepare(): Promise<Execution>;
    presenter: CallPresenter<Body>;
    /** Registers a stream so that its caller can stop it. */
    startTask?(messageId: string): StoppableTask;
  },
): Promise<Body | undefined> {
  const { streaming, fingerprint, prepare, presenter, startTask, ...order } = call;
  // Idempotency-Key: a retried request is answered from the first answer and paid once; the same
  // key with another body is refused.
  let fresh: Fresh | undefined;
  const idempotencyKey = request.headers["idempotency-key"];
  if (typeof idempotencyKey === "string") {
    const claim = await claimIdempotencyKey(deps.db, {
      callerKey: order.caller.id,
      key: idempotencyKey,
      fingerprint,
    });
    if (claim.kind === "replay") return replay(reply, claim, streaming, presenter);
    fresh = claim;
  }
  try {
    const execution = await prepare();
    markStage(request, "prepare");
    // Every answer says which version served it (docs/decisions/057), a refused payment's too.
    if (execution.served) reply.header(VERSION_HEADER, `v${execution.served.version}`);
    const paid = await payForCall(deps, { ...order, request, execution });
    markStage(request, "pay");
    const meta: CallMeta = {
      messageId: paid.messageId,
      createdAt: paid.createdAt,
      conversationId: execution.conversation?.id,
      mode: order.mode,
      model: order.application.slug,
      applicationId: order.application.id,
      served: execution.served,
    };
    if (!streaming) {
      const { result, charge } = await generatePaidAnswer(request, paid, execution);
      const ended = endedCall(meta, paid, charge);
      const body = presenter.body(result, ended);
      await keepAnswer(request, presenter, body, ended);
      await fresh?.complete(200, body);
      reply.header(CHARGED_HEADER, chargedHeaderValue(charge));
      if (charge.receipt) reply.header(RECEIPT_HEADER, charge.receipt);
      return body;
    }
    await streamPaidCall(request, reply, {
      paid,
      execution,
      meta,
      presenter,
      fresh,
      task: startTask?.(meta.messageId),
    });
    return undefined;
  } catch (error) {
    await fresh?.abandon();
    throw error;
  }
}

type Fresh = Extract<IdempotencyClaim, { kind: "new" }>;

function endedCall(meta: CallMeta, paid: PaidCall, charge: CallCharge, stopped = false): EndedCall {
  return { ...meta, charge, latencyMs: performance.now() - paid.started, stopped };
}

/**
 * A paid call streamed as server-sent events, pings while waiting, until it is answered, fails,
 * its caller leaves (or stops reading: sse-writer.ts) or stops it. Ends the call exactly once.
 */
async function streamPaidCall<Body extends object>(
  request: FastifyRequest,
  reply: FastifyReply,
  {
    paid,
    execution,
    meta,
    presenter,
    fresh,
    task,
  }: {
    paid: PaidCall;
    execution: Execution;
    meta: CallMeta;
    presenter: CallPresenter<Body>;
    fresh: Fresh | undefined;
    task: StoppableTask | undefined;
  },
) {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  // The caller learns at once that the call was accepted (and can hang up before any content).
  raw.flushHeaders();
  const writer = createSseWriter(raw);
  let clientGone = false;
  raw.on("close", () => {
    clientGone = !raw.writableFinished;
  });
  const ping = presenter.ping;
  const pings = ping ? setInterval(() => writer.writeIfReady(ping), PING_INTERVAL_MS) : undefined;
  let ended = false;
  const end = (outcome: CallOutcome) => {
    ended = true;
    return paid.end(outcome);
  };
  try {
    const start = presenter.streamStart(meta);
    let delivered = start === "" || (await writer.write(start));
    const stream = execution.stream();
    // Left unread when the chunks fail or the caller leaves: its rejection must not end the process.
    stream.result.catch(() => {});
    // What was written to the caller: once anything was, the call is paid for (decision 025).
    let sent: string | null = null;
    const chunks = task ? untilAborted(stream.chunks, task.signal) : stream.chunks;
    for await (const chunk of chunks) {
      const text =
        typeof chunk === "string"
          ? presenter.streamChunk(chunk, meta)
          : (presenter.streamToolCall?.(chunk.toolCall, meta) ?? "");
      // A client that stopped reading is dropped by the writer: the same as one that left.
      delivered = delivered && !clientGone && (await writer.write(text));
      if (!delivered) break;
      // A piece of a tool call sent is content sent: the call is paid for (decision 025).
      sent = (sent ?? "") + (typeof chunk === "string" ? chunk : "");
    }
    // Stopped by its caller (Dify's stop): paid exactly like a caller who hung up.
    const stopped = task?.signal.aborted ?? false;
    if (!delivered || clientGone || stopped) {
      const charge = await end({ kind: "abandoned", sent });
      const partial: ExecutionResult = {
        answer: sent ?? "",
        inputTokens: 0,
        outputTokens: 0,
        answeredBy: execution.model,
      };
      const left = endedCall(meta, paid, charge, true);
      // A charged stream keeps its key: a replay answers what was sent, and is not paid again.
      if (sent === null) await fresh?.abandon();
      else await fresh?.complete(200, presenter.body(partial, left));
      // Stopped, its caller still there: told how it ended.
      if (delivered && !clientGone) await writer.write(presenter.streamEnd(partial, left));
      return;
    }
    const result = await stream.result;
    const charge = await end({ kind: "answered", result });
    const answered = endedCall(meta, paid, charge);
    const body = presenter.body(result, answered);
    await keepAnswer(request, presenter, body, answered);
    // The headers left with the first byte: the stream's last event says what it cost.
    await writer.write(presenter.streamEnd(result, answered));
    await fresh?.complete(200, body);
  } catch (error) {
    // Ended already when the answer's own end failed: its payment settled what it could.
    const appError = ended ? asAppError(error) : await endFailed(request, paid, error);
    await fresh?.abandon();
    await writer.write(presenter.streamError(appError, meta));
  } finally {
    task?.done();
    clearInterval(pings);
    raw.end();
  }
}

/**
 * Keeps an answer its caller paid for (CallPresenter.keep). A failure to keep it does not fail the
 * call: it was answered and charged, so the answer still goes out; it cannot be retrieved later.
 */
async function keepAnswer<Body extends object>(
  request: FastifyRequest,
  presenter: CallPresenter<Body>,
  body: Body,
  call: EndedCall,
): Promise<void> {
  // Only what failed is logged: a database error's text can quote the customer content it held.
  await presenter
    .keep?.(body, call)
    .catch((err: { name?: string; code?: string; cause?: { code?: string } }) =>
      request.log.error({ error: err.name, code: err.cause?.code ?? err.code }, "could not keep an answer"),
    );
}

function asAppError(error: unknown): AppError {
  return error instanceof AppError ? error : new AppError("upstream_failed", "The upstream failed to answer");
}

/** The first answer again, with what that one charge was (decision 029): never paid twice. */
function replay<Body extends object>(
  reply: FastifyReply,
  claim: Extract<IdempotencyClaim, { kind: "replay" }>,
  streaming: boolean,
  presenter: CallPresenter<Body>,
): Body | undefined {
  reply.header("idempotent-replayed", "true");
  const stored = claim.body as Body;
  if (streaming && claim.status === 200) {
    reply.hijack();
    reply.raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
    });
    reply.raw.end(presenter.replayStream(stored));
    return undefined;
  }
  const charged = claim.status === 200 ? chargedHeaderOfStored(presenter.storedUsage(stored)) : undefined;
  if (charged) reply.header(CHARGED_HEADER, charged);
  const receipt = claim.status === 200 ? receiptOfStored(presenter.storedUsage(stored)) : undefined;
  if (receipt) reply.header(RECEIPT_HEADER, receipt);
  reply.status(claim.status);
  return stored;
}
