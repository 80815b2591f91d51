import type { GatewayResponse } from "@promptmint/contracts";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import type { AdmissionGate } from "../../lib/admission.ts";
import { AppError } from "../../lib/errors.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { CallPayments } from "../billing/call-payment/index.ts";
import type { ChatMessage, LlmClient } from "../models/llm.ts";
import { CHARGED_HEADER, chargedHeaderOfStored, chargedHeaderValue, difyPriceFields } from "./charge.ts";
import { errorEvent } from "./dify-errors.ts";
import type { Execution, ExecutionResult, GatewayInput } from "./execution.ts";
import { claimIdempotencyKey, type IdempotencyClaim } from "./idempotency.ts";
import { generatePaid, openGatewayPaidCall } from "./open-gateway-call.ts";
import type { OpenStreams } from "./open-streams.ts";
import type { CallCharge } from "./paid-call.ts";
import { preparePromptExecution } from "./prompt-call.ts";
import type { RateLimiter } from "./rate-limit.ts";
import { type RunningTasks, untilAborted } from "./running-tasks.ts";
import { createSseWriter } from "./sse-writer.ts";
import { prepareWorkflowExecution } from "./workflow-call.ts";

const PING_INTERVAL_MS = 10_000;

export type Mode = "completion" | "chat";

/** What every paid endpoint needs (Dify-style, OpenAI-style and the Explore page's 'Try it'). */
export interface GatewayDeps {
  db: Database;
  guards: AuthGuards;
  llm: LlmClient;
  rateLimiter: RateLimiter;
  admission: AdmissionGate;
  openStreams: OpenStreams;
  secrets: SecretBox;
  safeFetch: SafeFetch;
  feePercent: number;
  publicUrl: string;
  /** The call payments (billing/call-payment), built once at start-up (app.ts). */
  payments: CallPayments;
}

/** The mode an app is called in when the caller does not choose: chat only for chat prompt apps. */
export function naturalModeOf(application: ApplicationRow): Mode {
  return application.type === "prompt" && application.interactionMode === "chat" ? "chat" : "completion";
}

/**
 * A call made ready to run, whatever backs the app: a prompt (inputs checked, template rendered) or
 * a workflow (provider and its settings). `history` is the earlier turns an OpenAI-style client sent.
 */
export function prepareExecution(
  { db, llm, secrets, safeFetch }: Pick<GatewayDeps, "db" | "llm" | "secrets" | "safeFetch">,
  options: {
    app: ApplicationRow;
    caller: LocalUser;
    input: GatewayInput;
    mode: Mode;
    history?: ChatMessage[];
  },
): Promise<Execution> {
  return options.app.type === "prompt"
    ? preparePromptExecution(db, llm, { ...options, secrets })
    : prepareWorkflowExecution(db, { ...options, secrets, fetch: safeFetch });
}

/** What a presenter knows of a call while it runs (ids and time). */
export interface CallMeta {
  messageId: string;
  createdAt: number;
  conversationId?: string;
  mode: Mode;
}

/** A call that ended: what it cost, how long it took and whether its caller stopped it. */
export interface EndedCall extends CallMeta {
  charge: CallCharge;
  latencyMs: number;
  stopped: boolean;
}

/**
 * How a paid call's answer is written: Dify's message events (`difyMessages`) or its workflow
 * run events (workflow-run.ts). The paid flow (payment, idempotency, streaming, stop) is the same.
 */
export interface CallPresenter<Body extends object = object> {
  /** The blocking answer, also what an Idempotency-Key stores and replays. */
  body(result: ExecutionResult, call: EndedCall): Body;
  /** Events sent before the first chunk. */
  started(call: CallMeta): object[];
  chunk(text: string, call: CallMeta): object;
  /** The events that end a stream: answered, or stopped by its caller. */
  finished(result: ExecutionResult, call: EndedCall): object[];
  failed(error: AppError, call: CallMeta): object;
  /** The usage stored in a replayed body (its charge goes in the Promptmint-Charged header). */
  storedUsage(body: Body): unknown;
  /** A stored blocking answer replayed as a stream's events. */
  replay(body: Body): object[];
}

/** Dify's completion and chat answers: `message` events ending in `message_end` with usage. */
export const difyMessages: CallPresenter<GatewayResponse> = {
  body: (result, call) => ({
    event: "message",
    id: call.messageId,
    message_id: call.messageId,
    task_id: call.messageId,
    mode: call.mode,
    answer: result.answer,
    ...(call.conversationId ? { conversation_id: call.conversationId } : {}),
    metadata: { usage: usageOf(result, call.latencyMs, call.charge) },
    created_at: call.createdAt,
  }),
  started: () => [],
  chunk: (answer, call) => ({ event: "message", ...messageBase(call), answer }),
  finished: (result, call) => [
    {
      event: "message_end",
      ...messageBase(call),
      metadata: { usage: usageOf(result, call.latencyMs, call.charge) },
    },
  ],
  failed: (error, call) => errorEvent(error, messageBase(call)),
  storedUsage: (body) => body.metadata?.usage,
  replay: (body) => {
    const { metadata, ...rest } = body;
    return [rest, { ...rest, event: "message_end", metadata }];
  },
};

function messageBase(call: CallMeta) {
  return {
    task_id: call.messageId,
    id: call.messageId,
    message_id: call.messageId,
    ...(call.conversationId ? { conversation_id: call.conversationId } : {}),
    created_at: call.createdAt,
  };
}

/** Who may stop a running task: the same account, app and Dify `user`. */
export function taskOwner(callerId: string, applicationId: string, user: string | undefined): string {
  return `${callerId}:${applicationId}:${user ?? ""}`;
}

/**
 * One Dify-style call of an app the caller may call: idempotency, execution, payment, blocking
 * or SSE answer and the invocation record (docs/decisions/004). Returns the blocking answer.
 * A streamed call is registered in `tasks` (when given) so that its caller can stop it.
 */
export function createGatewayCall(deps: GatewayDeps, tasks?: RunningTasks) {
  const { db } = deps;
  async function runCall<Body extends object = GatewayResponse>(
    request: FastifyRequest,
    reply: FastifyReply,
    {
      application,
      mode,
      input,
      maxPriceCents,
      presenter = difyMessages as unknown as CallPresenter<Body>,
    }: {
      application: ApplicationRow;
      mode: Mode;
      input: GatewayInput;
      /** The caller's cap on the price (max-price.ts); above it the call is refused unpaid. */
      maxPriceCents?: number;
      presenter?: CallPresenter<Body>;
    },
  ): Promise<Body | undefined> {
    const caller = currentUser(request);
    const slug = application.slug;
    // Counted before anything is prepared or paid, so a refused stream costs nothing.
    if (input.response_mode === "streaming") deps.openStreams.open(request, reply);

    let claim: IdempotencyClaim | undefined;
    const idempotencyKey = request.headers["idempotency-key"];
    if (typeof idempotencyKey === "string") {
      claim = await claimIdempotencyKey(db, {
        callerKey: caller.id,
        key: idempotencyKey,
        fingerprint: { slug, mode, input },
      });
      if (claim.kind === "replay") {
        reply.header("idempotent-replayed", "true");
        // The same answer as the first time, with what that one charge was (decision 029).
        const stored = claim.body as Body;
        const charged =
          claim.status === 200 ? chargedHeaderOfStored(presenter.storedUsage(stored)) : undefined;
        if (charged && input.response_mode !== "streaming") reply.header(CHARGED_HEADER, charged);
        if (input.response_mode === "streaming" && claim.status === 200) {
          replayAsStream(reply, presenter.replay(stored));
          return;
        }
        return reply.status(claim.status).send(claim.body);
      }
    }
    const fresh = claim?.kind === "new" ? claim : undefined;

    try {
      const execution = await prepareExecution(deps, { app: application, caller, input, mode });
      const paid = await openGatewayPaidCall(deps, {
        request,
        caller,
        application,
        execution,
        mode,
        input,
        maxPriceCents,
      });
      const { started, release, record, abandon } = paid;
      const meta: CallMeta = {
        messageId: paid.messageId,
        createdAt: paid.createdAt,
        conversationId: execution.conversation?.id,
        mode,
      };
      const ended = (charge: CallCharge, stopped = false): EndedCall => ({
        ...meta,
        charge,
        latencyMs: performance.now() - started,
        stopped,
      });

      if (input.response_mode === "blocking") {
        const { result, charge } = await generatePaid(paid, execution);
        const body = presenter.body(result, ended(charge));
        await fresh?.complete(200, body);
        reply.header(CHARGED_HEADER, chargedHeaderValue(charge));
        return body;
      }

      // Streaming: Dify's SSE, `data: {json}` lines with the event inside, pings while waiting.
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
      const send = (event: object) => writer.write(`data: ${JSON.stringify(event)}\n\n`);
      let clientGone = false;
      raw.on("close", () => {
        clientGone = !raw.writableFinished;
      });
      const ping = setInterval(() => writer.writeIfReady("event: ping\n\n"), PING_INTERVAL_MS);
      const task = tasks?.start(meta.messageId, taskOwner(caller.id, application.id, input.user));
      try {
        for (const event of presenter.started(meta)) await send(event);
        const stream = execution.stream();
        // Left unread when the chunks fail or the caller leaves: its rejection must not end the process.
        stream.result.catch(() => {});
        // What was written to the caller: once anything was, the call is paid for (decision 025).
        let sent: string | null = null;
        const chunks = task ? untilAborted(stream.chunks, task.signal) : stream.chunks;
        for await (const chunk of chunks) {
          // A client that stopped reading is dropped by the writer: the same as one that left.
          if (clientGone || !(await send(presenter.chunk(chunk, meta)))) {
            clientGone = true;
            break;
          }
          sent = (sent ?? "") + chunk;
        }
        // Stopped by its caller (Dify's stop): paid exactly like a caller who hung up.
        const stopped = task?.signal.aborted ?? false;
        if (clientGone || stopped) {
          const charge = await abandon(sent);
          const partial: ExecutionResult = {
            answer: sent ?? "",
            inputTokens: 0,
            outputTokens: 0,
            answeredBy: execution.model,
          };
          // A charged stream keeps its key: a replay answers what was sent, and is not paid again.
          if (sent === null) await fresh?.abandon();
          else await fresh?.complete(200, presenter.body(partial, ended(charge, true)));
          if (stopped && !clientGone)
            for (const event of presenter.finished(partial, ended(charge, true))) await send(event);
          return;
        }
        const result = await stream.result;
        const charge = await record("success", result);
        // The headers left with the first byte: the stream's last event says what it cost.
        for (const event of presenter.finished(result, ended(charge))) await send(event);
        await fresh?.complete(200, presenter.body(result, ended(charge)));
      } catch (error) {
        const appError = asAppError(error);
        await release();
        await record("error", undefined, appError).catch((err) =>
          request.log.error({ err }, "could not record a failed invocation"),
        );
        await fresh?.abandon();
        await send(presenter.failed(appError, meta));
      } finally {
        task?.done();
        clearInterval(ping);
        raw.end();
      }
    } catch (error) {
      await fresh?.abandon();
      throw error;
    }
  }

  function replayAsStream(reply: FastifyReply, events: object[]) {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
    });
    for (const event of events) raw.write(`data: ${JSON.stringify(event)}\n\n`);
    raw.end();
  }

  return runCall;
}

function asAppError(error: unknown): AppError {
  return error instanceof AppError ? error : new AppError("upstream_failed", "The upstream failed to answer");
}

/** Dify's `metadata.usage`: tokens, the call's price fields (charge.ts) and latency in seconds. */
export function usageOf(result: ExecutionResult, latencyMs: number, charge: CallCharge) {
  const prices = difyPriceFields(charge);
  return {
    prompt_tokens: result.inputTokens,
    prompt_unit_price: prices.prompt_unit_price,
    prompt_price_unit: prices.prompt_price_unit,
    prompt_price: prices.prompt_price,
    completion_tokens: result.outputTokens,
    completion_unit_price: prices.completion_unit_price,
    completion_price_unit: prices.completion_price_unit,
    completion_price: prices.completion_price,
    total_tokens: result.inputTokens + result.outputTokens,
    total_price: prices.total_price,
    currency: prices.currency,
    latency: Math.round(latencyMs) / 1000,
    input_tokens: result.inputTokens,
    output_tokens: result.outputTokens,
    charged_cents: prices.charged_cents,
    paid_by: prices.paid_by,
  };
}
