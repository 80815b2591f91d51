import {
  ApiErrorSchema,
  AppInfoSchema,
  AppParametersSchema,
  GatewayRequestSchema,
  type GatewayResponse,
  GatewayResponseSchema,
  IoSchemaSchema,
} from "@promptmint/contracts";
import { and, desc, eq } from "drizzle-orm";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { conversationMessages, conversations } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { LlmClient } from "../models/llm.ts";
import { loadPrompt } from "../prompts/prompts.service.ts";
import { findCallableApp } from "./access.ts";
import type { ExecutionResult, GatewayInput } from "./execution.ts";
import { claimIdempotencyKey, type IdempotencyClaim } from "./idempotency.ts";
import { openPaidCall } from "./paid-call.ts";
import { preparePromptExecution } from "./prompt-call.ts";
import { type RateLimiter, rateLimitHook } from "./rate-limit.ts";
import { prepareWorkflowExecution } from "./workflow-call.ts";

const errors = {
  400: ApiErrorSchema,
  401: ApiErrorSchema,
  404: ApiErrorSchema,
  409: ApiErrorSchema,
  422: ApiErrorSchema,
  429: ApiErrorSchema,
  502: ApiErrorSchema,
  503: ApiErrorSchema,
  504: ApiErrorSchema,
};
const security = [{ bearerAuth: [] }];
const SlugParams = z.object({ slug: z.string().max(100) });
const tags = ["gateway"];
const PING_INTERVAL_MS = 10_000;

type Mode = "completion" | "chat";

/** The paid endpoints, compatible with Dify's service API (blocking and SSE streaming). */
export const gatewayRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  llm: LlmClient;
  rateLimiter: RateLimiter;
  secrets: SecretBox;
  safeFetch: SafeFetch;
  feePercent: number;
  publicUrl: string;
}> = async (app, { db, guards, llm, rateLimiter, secrets, safeFetch, feePercent, publicUrl }) => {
  const limit = rateLimitHook(rateLimiter);

  for (const mode of ["completion", "chat"] as const) {
    app.post(
      `/app/:slug/${mode}-messages`,
      {
        schema: {
          tags,
          summary:
            mode === "completion"
              ? "Run a completion (Dify compatible)"
              : "Send a chat message (Dify compatible)",
          description:
            "Authenticate with an API key (`Bearer pm_…`) or a sign-in token. `response_mode: streaming` answers with server-sent events.",
          security,
          params: SlugParams,
          body: GatewayRequestSchema,
          response: { 200: GatewayResponseSchema, ...errors },
        },
        onRequest: [guards.requireCaller, limit],
      },
      async (request, reply) => runCall(request, reply, mode, request.params.slug, request.body),
    );
  }

  async function runCall(
    request: FastifyRequest,
    reply: FastifyReply,
    mode: Mode,
    slug: string,
    input: GatewayInput,
  ) {
    const caller = currentUser(request);
    const application = await findCallableApp(db, slug, caller);

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
        if (input.response_mode === "streaming" && claim.status === 200)
          return replayAsStream(reply, claim.body as GatewayResponse);
        return reply.status(claim.status).send(claim.body);
      }
    }
    const fresh = claim?.kind === "new" ? claim : undefined;

    try {
      const execution =
        application.type === "prompt"
          ? await preparePromptExecution(db, llm, { app: application, caller, input, mode })
          : await prepareWorkflowExecution(db, {
              app: application,
              caller,
              input,
              mode,
              secrets,
              fetch: safeFetch,
            });
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
      });
      const { messageId, createdAt, started, release, record } = paid;
      const responseBody = (result: ExecutionResult): GatewayResponse => ({
        event: "message",
        id: messageId,
        message_id: messageId,
        task_id: messageId,
        mode,
        answer: result.answer,
        ...(conversationId ? { conversation_id: conversationId } : {}),
        metadata: { usage: usageOf(result, performance.now() - started) },
        created_at: createdAt,
      });

      if (input.response_mode === "blocking") {
        let result: ExecutionResult;
        try {
          result = await execution.generate();
        } catch (error) {
          const appError =
            error instanceof AppError
              ? error
              : new AppError("upstream_failed", "The upstream failed to answer");
          await release();
          if (appError.status >= 500) await record("error", undefined, appError);
          throw appError;
        }
        await record("success", result);
        const body = responseBody(result);
        await fresh?.complete(200, body);
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
      const send = (event: object) => raw.write(`data: ${JSON.stringify(event)}\n\n`);
      let clientGone = false;
      raw.on("close", () => {
        clientGone = !raw.writableFinished;
      });
      const ping = setInterval(() => raw.write("event: ping\n\n"), PING_INTERVAL_MS);
      const base = {
        task_id: messageId,
        id: messageId,
        message_id: messageId,
        ...(conversationId ? { conversation_id: conversationId } : {}),
        created_at: createdAt,
      };
      try {
        const stream = execution.stream();
        for await (const chunk of stream.chunks) {
          if (clientGone) break;
          send({ event: "message", ...base, answer: chunk });
        }
        if (clientGone) {
          await release();
          await record(
            "error",
            undefined,
            new AppError("bad_request", "The client disconnected before the answer was complete"),
          );
          await fresh?.abandon();
          return;
        }
        const result = await stream.result;
        await record("success", result);
        send({
          event: "message_end",
          ...base,
          metadata: { usage: usageOf(result, performance.now() - started) },
        });
        await fresh?.complete(200, responseBody(result));
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
        send({
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

  app.get(
    "/app/:slug/parameters",
    {
      schema: {
        tags,
        summary: "The app's input form (Dify compatible)",
        security,
        params: SlugParams,
        querystring: z.object({ user: z.string().optional() }),
        response: { 200: AppParametersSchema, ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const application = await findCallableApp(db, request.params.slug, currentUser(request));
      const form: Record<string, Record<string, unknown>>[] = [];
      if (application.type === "prompt") {
        const { active } = await loadPrompt(db, application);
        const schema = IoSchemaSchema.parse(active.inputSchema);
        for (const [variable, property] of Object.entries(schema.properties)) {
          const common = {
            label: property.description || variable,
            variable,
            required: schema.required.includes(variable),
            default: property.default ?? "",
          };
          if (property.enum?.length) form.push({ select: { ...common, options: property.enum.map(String) } });
          else if (property.type === "number" || property.type === "integer") form.push({ number: common });
          else if (property.type === "string")
            form.push({
              [property.maxLength && property.maxLength <= 256 ? "text-input" : "paragraph"]: {
                ...common,
                max_length: property.maxLength ?? 0,
              },
            });
          else form.push({ paragraph: { ...common, max_length: 0 } });
        }
      }
      return {
        opening_statement: "",
        suggested_questions: [],
        user_input_form: form,
        file_upload: { image: { enabled: false } },
        system_parameters: { file_size_limit: 15, image_file_size_limit: 10 },
      };
    },
  );

  app.get(
    "/app/:slug/info",
    {
      schema: {
        tags,
        summary: "The app's name, description and mode (Dify compatible)",
        security,
        params: SlugParams,
        response: { 200: AppInfoSchema, ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const application = await findCallableApp(db, request.params.slug, currentUser(request));
      return {
        name: application.name,
        description: application.description,
        tags: [],
        mode: application.type === "workflow" ? ("workflow" as const) : application.interactionMode,
      };
    },
  );

  const ListQuery = z.object({
    user: z.string().max(256).optional(),
    conversation_id: z.string().max(100).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    first_id: z.string().optional(),
    pinned: z.string().optional(),
  });

  app.get(
    "/app/:slug/conversations",
    {
      schema: {
        tags,
        summary: "Your conversations with a chat app (Dify compatible)",
        security,
        params: SlugParams,
        querystring: ListQuery,
        response: {
          200: z.object({
            limit: z.number(),
            has_more: z.boolean(),
            data: z.array(
              z.object({
                id: z.string(),
                name: z.string(),
                inputs: z.record(z.string(), z.unknown()),
                status: z.string(),
                introduction: z.string(),
                created_at: z.number(),
                updated_at: z.number(),
              }),
            ),
          }),
          ...errors,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await findCallableApp(db, request.params.slug, caller);
      const rows = await db
        .select()
        .from(conversations)
        .where(
          and(
            eq(conversations.applicationId, application.id),
            eq(conversations.callerUserId, caller.id),
            eq(conversations.endUser, request.query.user ?? ""),
          ),
        )
        .orderBy(desc(conversations.updatedAt))
        .limit(request.query.limit + 1);
      return {
        limit: request.query.limit,
        has_more: rows.length > request.query.limit,
        data: rows.slice(0, request.query.limit).map((row) => ({
          id: row.id,
          name: row.name,
          inputs: {},
          status: "normal",
          introduction: "",
          created_at: Math.floor(row.createdAt.getTime() / 1000),
          updated_at: Math.floor(row.updatedAt.getTime() / 1000),
        })),
      };
    },
  );

  app.get(
    "/app/:slug/messages",
    {
      schema: {
        tags,
        summary: "A conversation's messages, oldest first (Dify compatible)",
        security,
        params: SlugParams,
        querystring: ListQuery,
        response: {
          200: z.object({
            limit: z.number(),
            has_more: z.boolean(),
            data: z.array(
              z.object({
                id: z.string(),
                conversation_id: z.string(),
                inputs: z.record(z.string(), z.unknown()),
                query: z.string(),
                answer: z.string(),
                created_at: z.number(),
              }),
            ),
          }),
          ...errors,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await findCallableApp(db, request.params.slug, caller);
      const conversationId = request.query.conversation_id ?? "";
      const [conversation] = /^[0-9a-f-]{36}$/i.test(conversationId)
        ? await db
            .select({ id: conversations.id })
            .from(conversations)
            .where(
              and(
                eq(conversations.id, conversationId),
                eq(conversations.applicationId, application.id),
                eq(conversations.callerUserId, caller.id),
                eq(conversations.endUser, request.query.user ?? ""),
              ),
            )
        : [];
      if (!conversation) throw notFound("Conversation");
      const rows = await db
        .select()
        .from(conversationMessages)
        .where(eq(conversationMessages.conversationId, conversation.id))
        .orderBy(desc(conversationMessages.createdAt))
        .limit(request.query.limit + 1);
      return {
        limit: request.query.limit,
        has_more: rows.length > request.query.limit,
        data: rows
          .slice(0, request.query.limit)
          .reverse()
          .map((row) => ({
            id: row.id,
            conversation_id: row.conversationId,
            inputs: row.inputs as Record<string, unknown>,
            query: row.query,
            answer: row.answer,
            created_at: Math.floor(row.createdAt.getTime() / 1000),
          })),
      };
    },
  );
};

function usageOf(result: ExecutionResult, latencyMs: number) {
  return {
    prompt_tokens: result.inputTokens,
    completion_tokens: result.outputTokens,
    total_tokens: result.inputTokens + result.outputTokens,
    input_tokens: result.inputTokens,
    output_tokens: result.outputTokens,
    latency: Math.round(latencyMs) / 1000,
  };
}
