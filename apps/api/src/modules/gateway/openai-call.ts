import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../lib/errors.ts";
import { currentUser } from "../auth/authenticate.ts";
import { findCallableApp } from "./access.ts";
import { CHARGED_HEADER, chargedHeaderOfStored, chargedHeaderValue } from "./charge.ts";
import type { Execution, ExecutionResult, GatewayInput } from "./execution.ts";
import { type GatewayDeps, naturalModeOf, prepareExecution } from "./gateway-call.ts";
import { claimIdempotencyKey, type IdempotencyClaim } from "./idempotency.ts";
import { maxPriceOf } from "./max-price.ts";
import { openGatewayPaidCall, type LegacyPaidCall as PaidCall } from "./open-gateway-call.ts";
import { type OpenAiCall, refuseWorkflowOverrides } from "./openai-request.ts";
import type { CallCharge } from "./paid-call.ts";
import { preparePromptExecution } from "./prompt-call.ts";
import { createSseWriter } from "./sse-writer.ts";

/** What identifies one answer in either API: its id, when it was made, the app's slug. */
export interface AnswerMeta {
  id: string;
  created: number;
  model: string;
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
  /** The end of a stream that was answered in full, `answer` being what was sent. */
  streamEnd(answer: Answer): string;
  streamError(meta: AnswerMeta, error: AppError): string;
  /** A stored answer as a stream, for a streamed request replayed under its Idempotency-Key. */
  replayStream(stored: Answer): string;
}

type Fresh = Extract<IdempotencyClaim, { kind: "new" }>;

/**
 * One OpenAI-style call, the same for both APIs (docs/decisions/032): Idempotency-Key, the app's
 * execution with the caller's overrides, payment through openGatewayPaidCall (the path every paid call
 * takes), then the blocking answer or the stream; a failure before anything was sent costs nothing.
 */
export async function runOpenAiCall<Answer extends { usage?: unknown }>(
  deps: GatewayDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  call: OpenAiCall,
  dialect: OpenAiDialect<Answer>,
  fingerprint: unknown,
): Promise<Answer | undefined> {
  const { db, openStreams } = deps;
  const caller = currentUser(request);
  const maxPriceCents = maxPriceOf(request, call.maxPriceCents);
  // Counted before anything is prepared or paid, so a refused stream costs nothing.
  if (call.stream) openStreams.open(request, reply);
  const application = await findCallableApp(db, call.model, caller);
  const mode = naturalModeOf(application);
  const input: GatewayInput = {
    inputs: call.inputs,
    query: call.query,
    response_mode: "blocking",
    user: call.user,
  };

  // Idempotency-Key, as on the Dify-style routes: a retried request is answered from the first
  // answer and paid once; the same key with another body is refused.
  let fresh: Fresh | undefined;
  const idempotencyKey = request.headers["idempotency-key"];
  if (typeof idempotencyKey === "string") {
    const claim = await claimIdempotencyKey(db, { callerKey: caller.id, key: idempotencyKey, fingerprint });
    if (claim.kind === "replay") return replay(reply, claim, call.stream, dialect);
    fresh = claim;
  }
  try {
    const execution = await prepare();
    const paid = await openGatewayPaidCall(deps, {
      request,
      caller,
      application,
      execution,
      mode,
      input,
      maxPriceCents,
    });
    const meta: AnswerMeta = {
      id: `${dialect.idPrefix}${paid.messageId.replace(/-/g, "")}`,
      created: paid.createdAt,
      model: application.slug,
    };
    const fail = async (error: unknown) => {
      const appError =
        error instanceof AppError ? error : new AppError("upstream_failed", "The upstream failed to answer");
      await paid.release();
      await paid
        .record("error", undefined, appError)
        .catch((err) => request.log.error({ err }, "could not record a failed invocation"));
      return appError;
    };
    if (!call.stream) {
      let result: ExecutionResult;
      try {
        result = await execution.generate();
      } catch (error) {
        throw await fail(error);
      }
      const charge = await paid.record("success", result);
      const answered = dialect.answer(meta, result, charge);
      await fresh?.complete(200, answered);
      reply.header(CHARGED_HEADER, chargedHeaderValue(charge));
      return answered;
    }
    await stream(execution, meta, paid, fail);
    return undefined;
  } catch (error) {
    await fresh?.abandon();
    throw error;
  }

  function prepare(): Promise<Execution> {
    if (application.type === "prompt")
      return preparePromptExecution(db, deps.llm, {
        app: application,
        caller,
        input,
        mode,
        history: call.history,
        secrets: deps.secrets,
        overrides: call.overrides,
      });
    refuseWorkflowOverrides(call);
    return prepareExecution(deps, { app: application, caller, input, mode });
  }

  async function stream(
    execution: Execution,
    meta: AnswerMeta,
    paid: PaidCall,
    fail: (error: unknown) => Promise<AppError>,
  ) {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
    });
    const writer = createSseWriter(raw);
    let clientGone = false;
    raw.on("close", () => {
      clientGone = !raw.writableFinished;
    });
    // Once the stream is paid, the key keeps it: a replay answers what was sent, and is not paid again.
    const keep = async (answer: Answer) => fresh?.complete(200, answer);
    try {
      let delivered = await writer.write(dialect.streamStart(meta));
      const streamed = execution.stream();
      // Left unread when the chunks fail or the caller leaves: its rejection must not end the process.
      streamed.result.catch(() => {});
      // What was written to the caller: once anything was, the call is paid for (decision 025).
      let sent: string | null = null;
      for await (const piece of streamed.chunks) {
        // Gone, or dropped for not reading (sse-writer.ts): the same as a caller who left.
        delivered = delivered && !clientGone && (await writer.write(dialect.streamDelta(meta, piece)));
        if (!delivered) break;
        sent = (sent ?? "") + piece;
      }
      if (!delivered || clientGone) {
        const charge = await paid.abandon(sent);
        if (sent === null) await fresh?.abandon();
        else
          await keep(
            dialect.answer(
              meta,
              { answer: sent, inputTokens: 0, outputTokens: 0, answeredBy: execution.model },
              charge,
            ),
          );
        return;
      }
      const result = await streamed.result;
      const charge = await paid.record("success", result);
      const answer = dialect.answer(meta, result, charge);
      await keep(answer);
      await writer.write(dialect.streamEnd(answer));
    } catch (error) {
      await fresh?.abandon();
      await writer.write(dialect.streamError(meta, await fail(error)));
    } finally {
      raw.end();
    }
  }
}

/** The first answer again, with what that one charge was (decision 029): never paid twice. */
function replay<Answer extends { usage?: unknown }>(
  reply: FastifyReply,
  claim: Extract<IdempotencyClaim, { kind: "replay" }>,
  streamed: boolean,
  dialect: OpenAiDialect<Answer>,
): Answer | undefined {
  reply.header("idempotent-replayed", "true");
  const stored = claim.body as Answer;
  if (streamed && claim.status === 200) {
    reply.hijack();
    reply.raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
    });
    reply.raw.end(dialect.replayStream(stored));
    return undefined;
  }
  const charged = claim.status === 200 ? chargedHeaderOfStored(stored.usage) : undefined;
  if (charged) reply.header(CHARGED_HEADER, charged);
  reply.status(claim.status);
  return stored;
}
