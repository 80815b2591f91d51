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
import type { ChatMessage, LlmClient } from "../models/llm.ts";
import { CHARGED_HEADER, chargedHeaderOfStored, chargedHeaderValue, difyPriceFields } from "./charge.ts";
import type { Execution, ExecutionResult, GatewayInput } from "./execution.ts";
import { claimIdempotencyKey, type IdempotencyClaim } from "./idempotency.ts";
import type { OpenStreams } from "./open-streams.ts";
import { type CallCharge, generatePaid, openPaidCall } from "./paid-call.ts";
import { preparePromptExecution } from "./prompt-call.ts";
import type { RateLimiter } from "./rate-limit.ts";
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

/**
 * One Dify-style call of an app the caller may call: idempotency, execution, payment, blocking
 * or SSE answer and the invocation record (docs/decisions/004). Returns the blocking answer.
 */
export function createGatewayCall(deps: GatewayDeps) {
  const { db, feePercent, publicUrl } = deps;
  async function runCall(
    request: FastifyRequest,
    reply: FastifyReply,
    {
      application,
      mode,
      input,
      maxPriceCents,
    }: {
      application: ApplicationRow;
      mode: Mode;
      input: GatewayInput;
      /** The caller's cap on the price (max-price.ts); above it the call is refused unpaid. */
      maxPriceCents?: number;
    },
  ) {
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
        const charged =
          claim.status === 200
            ? chargedHeaderOfStored((claim.body as GatewayResponse).metadata?.usage)
            : undefined;
        if (charged && input.response_mode !== "streaming") reply.header(CHARGED_HEADER, charged);
        if (input.response_mode === "streaming" && claim.status === 200)
          return replayAsStream(reply, claim.body as GatewayResponse);
        return reply.status(claim.status).send(claim.body);
      }
    }
    const fresh = claim?.kind === "new" ? claim : undefined;

    try {
      const execution = await prepareExecution(deps, { app: application, caller, input, mode });
      const conversationId = execution.conversation?.id;
      const paid = await openPaidCall(db, {
        request,
        caller,
        application,
        execution,
        mode,
        input,
        feePercent,
        topUpUrl: `${publicUrl}/wallet`,
        maxPriceCents,
      });
      const { messageId, createdAt, started, release, record, abandon } = paid;
      const responseBody = (result: ExecutionResult, charge: CallCharge): GatewayResponse => ({
        event: "message",
        id: messageId,
        message_id: messageId,
        task_id: messageId,
        mode,
        answer: result.answer,
        ...(conversationId ? { conversation_id: conversationId } : {}),
        metadata: { usage: usageOf(result, performance.now() - started, charge) },
        created_at: createdAt,
      });

      if (input.response_mode === "blocking") {
        const { result, charge } = await generatePaid(paid, execution);
        const body = responseBody(result, charge);
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
      const base = {
        task_id: messageId,
        id: messageId,
        message_id: messageId,
        ...(conversationId ? { conversation_id: conversationId } : {}),
        created_at: createdAt,
      };
      try {
        const stream = execution.stream();
        // Left unread when the chunks fail or the caller leaves: its rejection must not end the process.
        stream.result.catch(() => {});
        // What was written to the caller: once anything was, the call is paid for (decision 025).
        let sent: string | null = null;
        for await (const chunk of stream.chunks) {
          // A client that stopped reading is dropped by the writer: the same as one that left.
          if (clientGone || !(await send({ event: "message", ...base, answer: chunk }))) {
            clientGone = true;
            break;
          }
          sent = (sent ?? "") + chunk;
        }
        if (clientGone) {
          const charge = await abandon(sent);
          // A charged stream keeps its key: a replay answers what was sent, and is not paid again.
          if (sent === null) await fresh?.abandon();
          else
            await fresh?.complete(
              200,
              responseBody(
                { answer: sent, inputTokens: 0, outputTokens: 0, answeredBy: execution.model },
                charge,
              ),
            );
          return;
        }
        const result = await stream.result;
        const charge = await record("success", result);
        // The headers left with the first byte: the stream's last event says what it cost.
        await send({
          event: "message_end",
          ...base,
          metadata: { usage: usageOf(result, performance.now() - started, charge) },
        });
        await fresh?.complete(200, responseBody(result, charge));
      } catch (error) {
        const appError =
          error instanceof AppError
            ? error
            : new AppError("upstream_failed", "The upstream failed to answer");
        await release();
        await record("error", undefined, appError).catch((err) =>
          request.log.error({ err }, "could not record a failed invocation"),
        );
        await fresh?.abandon();
        await send({
          event: "error",
          ...base,
          status: appError.status,
          code: appError.code,
          message: appError.message,
        });
      } finally {
        clearInterval(ping);
        raw.end();
      }
    } catch (error) {
      await fresh?.abandon();
      throw error;
    }
  }

  function replayAsStream(reply: FastifyReply, body: GatewayResponse) {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
    });
    const { metadata, ...rest } = body;
    raw.write(`data: ${JSON.stringify(rest)}\n\n`);
    raw.write(`data: ${JSON.stringify({ ...rest, event: "message_end", metadata })}\n\n`);
    raw.end();
  }

  return runCall;
}

/** Dify's `metadata.usage`: tokens, the call's price fields (charge.ts) and latency in seconds. */
function usageOf(result: ExecutionResult, latencyMs: number, charge: CallCharge) {
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
