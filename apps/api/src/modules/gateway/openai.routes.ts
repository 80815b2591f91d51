import { PaymentRemedySchema } from "@promptmint/contracts";
import type { FastifyError, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { databaseUnavailable } from "../../lib/database-errors.ts";
import { describeClientError, fieldsFromValidation, sendRouteNotFound } from "../../lib/error-handler.ts";
import { AppError } from "../../lib/errors.ts";
import { remedyFields } from "../../lib/payment-remedy.ts";
import { patternOf } from "../../lib/security-headers.ts";
import { findCallableApp, listCallableApps } from "../applications/callable-app.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { currentUser } from "../auth/authenticate.ts";
import { callerOrAgent, installAgentPaymentHooks } from "./access.ts";
import {
  chatCompletionRequestExample,
  chatCompletionResponseExample,
  insufficientBalanceExample,
  modelsExample,
} from "./examples.ts";
import type { GatewayDeps } from "./gateway-call.ts";
import { runOpenAiCall } from "./openai-call.ts";
import { chatDialect } from "./openai-chat.ts";
import {
  ChatCompletionRequestSchema,
  chatCall,
  ResponsesRequestSchema,
  responsesCall,
} from "./openai-request.ts";
import { responsesDialect } from "./openai-responses.ts";
import { rateLimitHook } from "./rate-limit.ts";

const OpenAiErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string(),
    param: z.string().nullable(),
    code: z.string().nullable(),
    /** On a 402: what would let the call through (docs/decisions/052). */
    remedy: PaymentRemedySchema.optional(),
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
  /**
   * Promptmint extension: the app passes `tools` (function calling) to its model, so it can take
   * part in an agent's tool loop; each request of the loop is one paid call (decision 053).
   */
  accepts_tools: z.boolean(),
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

/** The OpenAI error `type` for a status. */
function errorType(status: number): string {
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
      type: errorType(status),
      param: fields ? (Object.keys(fields)[0] ?? null) : null,
      code: error instanceof AppError ? error.code : fields ? "invalid_request" : (error.code ?? null),
      ...remedyFields(error),
    },
  });
}

const modelOf = (row: ApplicationRow, caller: LocalUser) => ({
  id: row.slug,
  object: "model" as const,
  created: Math.floor(row.createdAt.getTime() / 1000),
  owned_by: row.ownerId === caller.id ? "you" : "promptmint",
  accepts_tools: row.type === "prompt" && row.allowTools,
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
  installAgentPaymentHooks(app);

  // Each route's path and methods, for the 405 of a path served under another method.
  const served: { pattern: RegExp; method: string }[] = [];
  app.addHook("onRoute", (route: RouteOptions) => {
    for (const method of [route.method].flat()) served.push({ pattern: patternOf(route.url), method });
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    // The Dify-style routes under the versioned root keep Dify's shape (their clients read it).
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
  });

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
      onRequest: [callerOrAgent(deps), limit, admission.hook],
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
      onRequest: [callerOrAgent(deps), limit, admission.hook],
    },
    async (request, reply) => {
      const body = request.body;
      return runOpenAiCall(deps, request, reply, responsesCall(body), responsesDialect(body), {
        responses: body,
      });
    },
  );
};
