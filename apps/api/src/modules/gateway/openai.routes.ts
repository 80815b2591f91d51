import { MaxPriceCentsSchema } from "@promptmint/contracts";
import { and, eq, isNull, or } from "drizzle-orm";
import type { FastifyError, FastifyReply } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { applications } from "../../db/schema/index.ts";
import { databaseUnavailable } from "../../lib/database-errors.ts";
import { describeClientError } from "../../lib/error-handler.ts";
import { AppError } from "../../lib/errors.ts";
import { appNotSuspended } from "../admin/suspensions.ts";
import { currentUser } from "../auth/authenticate.ts";
import type { ChatMessage } from "../models/llm.ts";
import { findCallableApp } from "./access.ts";
import { CHARGED_HEADER, chargedHeaderOfStored, chargedHeaderValue, openAiCostFields } from "./charge.ts";
import {
  chatCompletionRequestExample,
  chatCompletionResponseExample,
  insufficientBalanceExample,
  modelsExample,
} from "./examples.ts";
import type { ExecutionResult, GatewayInput } from "./execution.ts";
import { type GatewayDeps, naturalModeOf, prepareExecution } from "./gateway-call.ts";
import { claimIdempotencyKey, type IdempotencyClaim } from "./idempotency.ts";
import { maxPriceOf } from "./max-price.ts";
import { type CallCharge, openPaidCall } from "./paid-call.ts";
import { rateLimitHook } from "./rate-limit.ts";
import { createSseWriter } from "./sse-writer.ts";

const ContentSchema = z.union([
  z.string(),
  z.array(z.object({ type: z.string(), text: z.string().optional() }).loose()),
]);
/** OpenAI's chat completion request; fields we do not use are accepted and ignored, as OpenAI clients send many. */
const ChatCompletionRequestSchema = z
  .object({
    model: z.string().min(1).max(100),
    messages: z
      .array(
        z
          .object({
            role: z.enum(["system", "developer", "user", "assistant", "tool"]),
            content: ContentSchema.nullable().optional(),
          })
          .loose(),
      )
      .min(1, "must contain at least one message")
      .max(200),
    stream: z.boolean().optional(),
    user: z.string().max(256).optional(),
    /** Promptmint extension (`extra_body`): the app's declared inputs. */
    inputs: z.record(z.string(), z.unknown()).optional(),
    /** Promptmint extension (`extra_body`): the most this call may cost, in cents. */
    max_price_cents: MaxPriceCentsSchema.optional(),
  })
  .loose();

const OpenAiErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
  }),
});

const text = (content: z.infer<typeof ContentSchema> | null | undefined) =>
  typeof content === "string" ? content : (content ?? []).map((part) => part.text ?? "").join("");

/**
 * OpenAI-compatible gateway: `POST /api/v1/chat/completions` with `model` = app slug, so the
 * official `openai` SDK works with baseURL `/api/v1`. Charged and recorded like the Dify endpoints;
 * errors in OpenAI's shape.
 */
export const openAiRoutes: FastifyPluginAsyncZod<GatewayDeps> = async (
  app,
  { db, guards, llm, rateLimiter, admission, openStreams, secrets, safeFetch, feePercent, publicUrl },
) => {
  // OpenAI's error shape on these routes, with our status codes.
  app.setErrorHandler(
    (error: Error & { statusCode?: number; validation?: unknown; code?: string }, request, reply) => {
      const unavailable = databaseUnavailable(error);
      if (unavailable) error = unavailable;
      const status =
        error instanceof AppError
          ? error.status
          : error.statusCode && error.statusCode < 500
            ? error.statusCode
            : 500;
      const type =
        status === 401
          ? "authentication_error"
          : status === 429
            ? "rate_limit_exceeded"
            : status === 402
              ? "insufficient_quota"
              : status >= 500
                ? "api_error"
                : "invalid_request_error";
      const fields = error instanceof AppError ? error.fields : undefined;
      if (error instanceof AppError && error.headers) reply.headers(error.headers);
      const message =
        status >= 500 && !(error instanceof AppError)
          ? "Internal server error"
          : error.validation
            ? `Invalid request: ${error.message}`
            : error instanceof AppError
              ? error.message
              : describeClientError(error as FastifyError, request);
      return reply.status(status).send({
        error: {
          message,
          type,
          param: fields ? (Object.keys(fields)[0] ?? null) : null,
          code: error instanceof AppError ? error.code : (error.code ?? null),
        },
      });
    },
  );

  const limit = rateLimitHook(rateLimiter);

  app.get(
    "/models",
    {
      schema: {
        tags: ["openai"],
        summary: "Apps you may call, as OpenAI models (id = app slug)",
        security: [{ bearerAuth: [] }],
        response: {
          200: z
            .object({
              object: z.literal("list"),
              data: z.array(
                z.object({
                  id: z.string(),
                  object: z.literal("model"),
                  created: z.number(),
                  owned_by: z.string(),
                }),
              ),
            })
            .meta({ examples: [modelsExample] }),
          401: OpenAiErrorSchema,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const rows = await db
        .select()
        .from(applications)
        .where(
          and(
            isNull(applications.archivedAt),
            appNotSuspended,
            or(
              eq(applications.ownerId, caller.id),
              and(
                eq(applications.status, "live"),
                or(eq(applications.visibility, "public"), eq(applications.visibility, "embed")),
              ),
            ),
          ),
        )
        .limit(500);
      return {
        object: "list" as const,
        data: rows.map((row) => ({
          id: row.slug,
          object: "model" as const,
          created: Math.floor(row.createdAt.getTime() / 1000),
          owned_by: row.ownerId === caller.id ? "you" : "promptmint",
        })),
      };
    },
  );

  app.post(
    "/chat/completions",
    {
      schema: {
        tags: ["openai"],
        summary: "OpenAI-compatible chat completion: model = app slug; stream supported",
        security: [{ bearerAuth: [] }],
        body: ChatCompletionRequestSchema.meta({ examples: [chatCompletionRequestExample] }),
        response: {
          200: z.unknown().meta({ examples: [chatCompletionResponseExample] }),
          402: OpenAiErrorSchema.meta({
            examples: [
              {
                error: {
                  message: insufficientBalanceExample.message,
                  type: "insufficient_quota",
                  param: null,
                  code: "payment_required",
                },
              },
            ],
          }),
        },
      },
      onRequest: [guards.requireCaller, limit, admission.hook],
    },
    async (request, reply) => {
      const caller = currentUser(request);
      const body = request.body;
      const maxPriceCents = maxPriceOf(request, body.max_price_cents);
      // Counted before anything is prepared or paid, so a refused stream costs nothing.
      if (body.stream) openStreams.open(request, reply);
      const application = await findCallableApp(db, body.model, caller);
      const turns = body.messages.filter((m) => m.role === "user" || m.role === "assistant");
      const last = turns.at(-1);
      if (last?.role !== "user")
        throw new AppError("bad_request", "The last message must come from the user", {
          fields: { messages: "must end with a user message" },
        });
      const query = text(last.content);
      const mode = naturalModeOf(application);
      const history: ChatMessage[] = turns
        .slice(0, -1)
        .map((m) => ({ role: m.role as "user" | "assistant", content: text(m.content) }));
      const input: GatewayInput = {
        inputs: body.inputs ?? {},
        query,
        response_mode: "blocking",
        user: body.user,
      };

      // Idempotency-Key, as on the Dify-style routes: a retried request is answered from the first
      // answer and paid once; the same key with another body is refused.
      let claim: IdempotencyClaim | undefined;
      const idempotencyKey = request.headers["idempotency-key"];
      if (typeof idempotencyKey === "string") {
        claim = await claimIdempotencyKey(db, {
          callerKey: caller.id,
          key: idempotencyKey,
          fingerprint: { openai: body },
        });
        if (claim.kind === "replay") {
          reply.header("idempotent-replayed", "true");
          // The same answer as the first time, with what that one charge was (decision 029).
          const charged =
            claim.status === 200 ? chargedHeaderOfStored((claim.body as ChatCompletion).usage) : undefined;
          if (charged && !body.stream) reply.header(CHARGED_HEADER, charged);
          if (body.stream && claim.status === 200) return replayAsStream(reply, claim.body as ChatCompletion);
          return reply.status(claim.status as 200).send(claim.body as ChatCompletion);
        }
      }
      const fresh = claim?.kind === "new" ? claim : undefined;
      try {
        return await answer(fresh);
      } catch (error) {
        await fresh?.abandon();
        throw error;
      }

      async function answer(fresh: Extract<IdempotencyClaim, { kind: "new" }> | undefined) {
        const execution = await prepareExecution(
          { db, llm, secrets, safeFetch },
          { app: application, caller, input, mode, history: mode === "chat" ? history : undefined },
        );
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
        const id = `chatcmpl-${paid.messageId.replace(/-/g, "")}`;
        // OpenAI's token counts, and what the call cost (`cost` in dollars, as OpenRouter; charge.ts).
        const usage = (r: ExecutionResult, charge: CallCharge) => ({
          prompt_tokens: r.inputTokens,
          completion_tokens: r.outputTokens,
          total_tokens: r.inputTokens + r.outputTokens,
          ...openAiCostFields(charge),
        });
        const fail = async (error: unknown) => {
          const appError =
            error instanceof AppError
              ? error
              : new AppError("upstream_failed", "The upstream failed to answer");
          await paid.release();
          await paid
            .record("error", undefined, appError)
            .catch((err) => request.log.error({ err }, "could not record a failed invocation"));
          return appError;
        };

        const completion = (result: ExecutionResult, charge: CallCharge): ChatCompletion => ({
          id,
          object: "chat.completion",
          created: paid.createdAt,
          model: application.slug,
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: result.answer, refusal: null },
              finish_reason: "stop",
              logprobs: null,
            },
          ],
          usage: usage(result, charge),
        });

        if (!body.stream) {
          let result: ExecutionResult;
          try {
            result = await execution.generate();
          } catch (error) {
            throw await fail(error);
          }
          const charge = await paid.record("success", result);
          const answered = completion(result, charge);
          await fresh?.complete(200, answered);
          reply.header(CHARGED_HEADER, chargedHeaderValue(charge));
          return answered;
        }

        reply.hijack();
        const raw = reply.raw;
        raw.writeHead(200, {
          ...(reply.getHeaders() as Record<string, string>),
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache, no-transform",
          connection: "keep-alive",
        });
        const writer = createSseWriter(raw);
        const chunk = (delta: object, finish: string | null, extra: object = {}) =>
          writer.write(
            `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: paid.createdAt, model: application.slug, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...extra })}\n\n`,
          );
        let clientGone = false;
        raw.on("close", () => {
          clientGone = !raw.writableFinished;
        });
        try {
          let delivered = await chunk({ role: "assistant", content: "" }, null);
          const stream = execution.stream();
          // Left unread when the chunks fail or the caller leaves: its rejection must not end the process.
          stream.result.catch(() => {});
          // What was written to the caller: once anything was, the call is paid for (decision 025).
          let sent: string | null = null;
          for await (const piece of stream.chunks) {
            // Gone, or dropped for not reading (sse-writer.ts): the same as a caller who left.
            delivered = delivered && !clientGone && (await chunk({ content: piece }, null));
            if (!delivered) break;
            sent = (sent ?? "") + piece;
          }
          if (!delivered || clientGone) {
            const charge = await paid.abandon(sent);
            // A charged stream keeps its key: a replay answers what was sent, and is not paid again.
            if (sent === null) await fresh?.abandon();
            else
              await fresh?.complete(
                200,
                completion(
                  { answer: sent, inputTokens: 0, outputTokens: 0, answeredBy: execution.model },
                  charge,
                ),
              );
            return;
          }
          const result = await stream.result;
          const charge = await paid.record("success", result);
          await fresh?.complete(200, completion(result, charge));
          // The headers left with the first chunk: the final usage chunk says what the call cost.
          await chunk({}, "stop", { usage: usage(result, charge) });
          await writer.write("data: [DONE]\n\n");
        } catch (error) {
          await fresh?.abandon();
          const appError = await fail(error);
          await writer.write(
            `data: ${JSON.stringify({ error: { message: appError.message, type: "api_error", param: null, code: appError.code } })}\n\n`,
          );
        } finally {
          raw.end();
        }
      }
    },
  );
};

/** A blocking chat completion, as stored for Idempotency-Key replays. */
interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: "assistant"; content: string; refusal: null };
    finish_reason: "stop";
    logprobs: null;
  }[];
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    /** Absent on answers stored before decision 029. */
    cost?: number;
    charged_cents?: number;
    paid_by?: CallCharge["paidBy"];
  };
}

/** A replayed answer to a streamed request: the stored completion as one chunk, then the end. */
function replayAsStream(reply: FastifyReply, stored: ChatCompletion) {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
  });
  const chunk = (delta: object, finish: string | null, extra: object = {}) =>
    `data: ${JSON.stringify({ id: stored.id, object: "chat.completion.chunk", created: stored.created, model: stored.model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...extra })}\n\n`;
  raw.write(chunk({ role: "assistant", content: stored.choices[0]?.message.content ?? "" }, null));
  raw.write(chunk({}, "stop", { usage: stored.usage }));
  raw.end("data: [DONE]\n\n");
}
