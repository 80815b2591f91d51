import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { databaseUnavailable } from "../../lib/database-errors.ts";
import { describeClientError, fieldsFromValidation, sendRouteNotFound } from "../../lib/error-handler.ts";
import { AppError } from "../../lib/errors.ts";
import { patternOf } from "../../lib/security-headers.ts";
import { findCallableApp, listCallableApps } from "../applications/callable-app.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { currentUser } from "../auth/authenticate.ts";
import type { CallMeta } from "./call-lifecycle.ts";
import {
  chatCompletionRequestExample,
  chatCompletionResponseExample,
  insufficientBalanceExample,
  modelsExample,
} from "./examples.ts";
import type { GatewayDeps } from "./gateway-call.ts";
import { runOpenAiCall } from "./openai-call.ts";
import { chatDialect } from "./openai-chat.ts";
import { OpenAiError } from "./openai-errors.ts";
import {
  ChatCompletionRequestSchema,
  chatCall,
  type ResponsesRequest,
  ResponsesRequestSchema,
  responsesCall,
} from "./openai-request.ts";
import { type ResponseObject, responsesDialect } from "./openai-responses.ts";
import { rateLimitHook } from "./rate-limit.ts";
import {
  continuationOf,
  deleteStoredResponse,
  findStoredResponse,
  inputItemsOf,
  keepResponse,
  pageOfInputItems,
} from "./response-store.ts";

type ResponsesInputItems = Exclude<ResponsesRequest["input"], string>;

const OpenAiErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
  }),
});

const paymentRequired = OpenAiErrorSchema.meta({
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
});

const ModelSchema = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.number(),
  owned_by: z.string(),
});

const responseExample = {
  id: "resp_5ad4cb98f0c74085b38488c403be6290",
  object: "response",
  created_at: 1767225600,
  status: "completed",
  model: "haiku-writer",
  output: [
    {
      type: "message",
      id: "msg_5ad4cb98f0c74085b38488c403be6290",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Soft rain on red leaves…", annotations: [], logprobs: [] }],
    },
  ],
  usage: {
    input_tokens: 18,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 42,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 60,
    cost: 0.05,
    charged_cents: 5,
    paid_by: "wallet",
  },
};

/** The OpenAI error `type` for a status (a model provider's rate limit: OpenAI's own `requests`). */
function errorType(status: number, code?: string): string {
  if (code === "upstream_rate_limited") return "requests";
  if (status === 401) return "authentication_error";
  if (status === 402) return "insufficient_quota";
  if (status === 429) return "rate_limit_exceeded";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

/**
 * Any error as OpenAI's `{error: {message, type, param, code}}` with our status codes; `param` names
 * the first field at fault (a refused request field, an unknown one, a bad value).
 */
function sendOpenAiError(
  error: Error & { statusCode?: number; validation?: unknown; validationContext?: string; code?: string },
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const unavailable = databaseUnavailable(error);
  if (unavailable) error = unavailable;
  const status =
    error instanceof AppError
      ? error.status
      : error.statusCode && error.statusCode < 500
        ? error.statusCode
        : 500;
  const fields =
    error instanceof AppError
      ? error.fields
      : error.validation
        ? fieldsFromValidation(error.validation as never, error.validationContext)
        : undefined;
  if (error instanceof AppError && error.headers) reply.headers(error.headers);
  if (status >= 500 && !(error instanceof AppError)) request.log.error({ err: error }, "unhandled error");
  const message =
    status >= 500 && !(error instanceof AppError)
      ? "Internal server error"
      : error instanceof AppError
        ? error.message
        : fields
          ? `Invalid request: ${Object.entries(fields)
              .map(([field, problem]) => `${field} ${problem}`)
              .join("; ")}`
          : describeClientError(error as FastifyError, request);
  return reply.status(status).send({
    error: {
      message,
      type: errorType(status, error instanceof AppError ? error.code : undefined),
      param: error instanceof OpenAiError ? error.param : fields ? (Object.keys(fields)[0] ?? null) : null,
      code: openAiCodeOf(error, fields),
    },
  });
}

/** The error's `code` as OpenAI names it where it has a name of its own, else ours. */
function openAiCodeOf(error: Error & { code?: string }, fields: Record<string, string> | undefined) {
  if (error instanceof OpenAiError) return error.openAiCode;
  if (error instanceof AppError)
    return error.code === "upstream_rate_limited" ? "rate_limit_exceeded" : error.code;
  return fields ? "invalid_request" : (error.code ?? null);
}

/**
 * Every path under /api/v1 that no route serves answers in OpenAI's shape, whatever its method: 404
 * `unknown_url`, or 405 with `Allow` when the path is served under another method. The Dify-style
 * routes under /api/v1/app/ keep Dify's shape (their clients read it). A catch-all route as well as
 * the not-found handler: in production the SPA's history fallback (`GET /*`, web.ts) would
 * otherwise answer unknown GETs; the more specific `/api/v1/*` wins over it.
 */
function answerUnknownRoutes(app: FastifyInstance) {
  // Each route's path and methods, for the 405 of a path served under another method.
  const served: { pattern: RegExp; method: string }[] = [];
  app.addHook("onRoute", (route: RouteOptions) => {
    if (route.url.endsWith("*")) return;
    for (const method of [route.method].flat()) served.push({ pattern: patternOf(route.url), method });
  });
  const unknownRoute = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0] ?? "";
    if (path.startsWith("/api/v1/app/")) return sendRouteNotFound(request, reply);
    const allowed = served.filter((route) => route.pattern.test(path)).map((route) => route.method);
    const methods = [...new Set(allowed.filter((method) => method !== "HEAD"))];
    if (methods.length > 0) reply.header("allow", methods.join(", "));
    const status = methods.length > 0 ? 405 : 404;
    return reply.status(status).send({
      error: {
        message:
          status === 405
            ? `Method ${request.method} is not allowed on ${path}; use ${methods.join(" or ")}`
            : `Unknown request URL: ${request.method} ${path}`,
        type: "invalid_request_error",
        param: null,
        code: status === 405 ? "method_not_allowed" : "unknown_url",
      },
    });
  };
  app.setNotFoundHandler(unknownRoute);
  // Preflights (OPTIONS) stay with security-headers.ts; `cors` set so this route adds no preflight.
  app.route({
    method: ["GET", "POST", "PUT", "PATCH", "DELETE"],
    url: "/*",
    schema: { hide: true },
    config: { cors: true },
    handler: unknownRoute,
  });
}

const modelOf = (row: ApplicationRow, caller: LocalUser) => ({
  id: row.slug,
  object: "model" as const,
  created: Math.floor(row.createdAt.getTime() / 1000),
  owned_by: row.ownerId === caller.id ? "you" : "promptmint",
});

/**
 * OpenAI-compatible gateway (docs/decisions/032): `model` = app slug, so OpenAI clients work with
 * baseURL `/api/v1`: Chat Completions and Responses (blocking and streamed, charged and recorded
 * like the Dify endpoints through one flow, openai-call.ts), models list and retrieve. Errors, an
 * unknown route (404) and a wrong method (405) included, answer in OpenAI's shape.
 */
export const openAiRoutes: FastifyPluginAsyncZod<GatewayDeps> = async (app, deps) => {
  const { db, guards, rateLimiter, admission } = deps;
  app.setErrorHandler(sendOpenAiError);
  answerUnknownRoutes(app);

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
            .object({ object: z.literal("list"), data: z.array(ModelSchema) })
            .meta({ examples: [modelsExample] }),
          401: OpenAiErrorSchema,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const rows = await listCallableApps(db, caller, 500);
      return { object: "list" as const, data: rows.map((row) => modelOf(row, caller)) };
    },
  );

  app.get(
    "/models/:model",
    {
      schema: {
        tags: ["openai"],
        summary: "One app you may call, as an OpenAI model; 404 for any other",
        security: [{ bearerAuth: [] }],
        params: z.object({ model: z.string().min(1).max(100) }),
        response: {
          200: ModelSchema.meta({ examples: [modelsExample.data[0]] }),
          401: OpenAiErrorSchema,
          404: OpenAiErrorSchema,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const found = await findCallableApp(db, request.params.model, caller).catch((error) => {
        if (error instanceof AppError && error.code === "not_found")
          throw new AppError("not_found", `The model '${request.params.model}' does not exist`, {
            fields: { model: "does not exist" },
          });
        throw error;
      });
      return modelOf(found, caller);
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
          402: paymentRequired,
        },
      },
      onRequest: [guards.requireCaller, limit, admission.hook],
    },
    async (request, reply) => {
      const body = request.body;
      const dialect = chatDialect(body.stream_options?.include_usage === true);
      return runOpenAiCall(deps, request, reply, chatCall(body), dialect, { openai: body });
    },
  );

  app.post(
    "/responses",
    {
      schema: {
        tags: ["openai"],
        summary: "OpenAI Responses API: model = app slug; stream supported",
        security: [{ bearerAuth: [] }],
        body: ResponsesRequestSchema.meta({
          examples: [{ model: "haiku-writer", input: "Write a haiku about autumn rain." }],
        }),
        response: {
          200: z.unknown().meta({ examples: [responseExample] }),
          402: paymentRequired,
        },
      },
      onRequest: [guards.requireCaller, limit, admission.hook],
    },
    async (request, reply) => {
      const body = request.body;
      const caller = currentUser(request);
      // Refused before anything is paid: an unknown, expired, deleted or another caller's response.
      const earlier = body.previous_response_id
        ? await continuationOf(db, caller.id, body.previous_response_id, body.model)
        : undefined;
      const keep =
        body.store === false
          ? undefined
          : (answer: ResponseObject, call: CallMeta) =>
              keepResponse(db, {
                callerId: caller.id,
                applicationId: call.applicationId,
                inputItems: [...(earlier?.items ?? []), ...inputItemsOf(body.input, answer.id)],
                response: answer,
              });
      return runOpenAiCall(
        deps,
        request,
        reply,
        responsesCall(body, earlier?.items as ResponsesInputItems | undefined),
        responsesDialect(body, keep),
        { responses: body },
      );
    },
  );

  const responseId = z.object({ response_id: z.string().min(1).max(200) });

  app.get(
    "/responses/:response_id",
    {
      schema: {
        tags: ["openai"],
        summary: "One of your stored responses (store: true, kept 30 days); 404 for any other",
        security: [{ bearerAuth: [] }],
        params: responseId,
        querystring: z.strictObject({
          stream: z.literal("false", "must be false: a stored response is answered in one piece").optional(),
        }),
        response: {
          200: z.unknown().meta({ examples: [responseExample] }),
          401: OpenAiErrorSchema,
          404: OpenAiErrorSchema,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const stored = await findStoredResponse(db, currentUser(request).id, request.params.response_id);
      return stored.response;
    },
  );

  app.delete(
    "/responses/:response_id",
    {
      schema: {
        tags: ["openai"],
        summary: "Deletes one of your stored responses (the responses it was continued by keep theirs)",
        security: [{ bearerAuth: [] }],
        params: responseId,
        response: {
          200: z.object({ id: z.string(), object: z.literal("response"), deleted: z.literal(true) }),
          401: OpenAiErrorSchema,
          404: OpenAiErrorSchema,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const id = request.params.response_id;
      await deleteStoredResponse(db, currentUser(request).id, id);
      return { id, object: "response" as const, deleted: true as const };
    },
  );

  app.get(
    "/responses/:response_id/input_items",
    {
      schema: {
        tags: ["openai"],
        summary: "The input items of one of your stored responses, earlier turns of its chain included",
        security: [{ bearerAuth: [] }],
        params: responseId,
        querystring: z.strictObject({
          limit: z.coerce.number().int().min(1).max(100).default(20),
          order: z.enum(["asc", "desc"]).default("desc"),
          after: z.string().max(300).optional(),
        }),
        response: {
          200: z.unknown(),
          401: OpenAiErrorSchema,
          404: OpenAiErrorSchema,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const stored = await findStoredResponse(db, currentUser(request).id, request.params.response_id);
      return pageOfInputItems(stored.inputItems, request.query);
    },
  );
};
