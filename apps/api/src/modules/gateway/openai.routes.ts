import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { databaseUnavailable } from "../../lib/database-errors.ts";
import { describeClientError, fieldsFromValidation } from "../../lib/error-handler.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { remedyFields } from "../../lib/payment-remedy.ts";
import { findCallableApp, listCallableApps } from "../applications/callable-app.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { currentUser } from "../auth/authenticate.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import { loadPrompt, type VersionPin } from "../prompts/load-prompt.ts";
import { loadWorkflowVersion } from "../workflows/workflow-payload.ts";
import { callerOrAgent } from "./access.ts";
import type { CallMeta } from "./call-lifecycle.ts";
import { publishedInputLimit } from "./call-worst-case.ts";
import {
  chatCompletionRequestExample,
  chatCompletionResponseExample,
  insufficientBalanceExample,
  modelsExample,
  responseExample,
} from "./examples.ts";
import type { GatewayDeps } from "./gateway-call.ts";
import { runOpenAiCall, unknownModel } from "./openai-call.ts";
import { chatDialect } from "./openai-chat.ts";
import { OpenAiError, OpenAiErrorSchema, openAiCodeOfAppError, openAiErrorType } from "./openai-errors.ts";
import {
  ChatCompletionRequestSchema,
  chatCall,
  openAiModel,
  type ResponsesRequest,
  ResponsesRequestSchema,
  responsesCall,
} from "./openai-request.ts";
import { type ResponseObject, responsesDialect } from "./openai-responses.ts";
import { storedResponsesRoutes } from "./openai-stored-responses.routes.ts";
import { answerUnknownRoutes } from "./openai-unknown-routes.ts";
import { rateLimitHook } from "./rate-limit.ts";
import { continuationOf, inputItemsOf, keepResponse } from "./response-store.ts";

type ResponsesInputItems = Exclude<ResponsesRequest["input"], string>;

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
  /**
   * Promptmint extension, on `GET /models/{id}`: the most input tokens one call may carry at the
   * app's price, its own prompt included, one token per byte of what you send; more is refused with
   * 413 `input_too_large` and costs nothing (decision 063). Null: no limit.
   */
  max_input_tokens: z.number().int().nullable().optional(),
});

/** How an OpenAI-style call pins a prompt version (docs/decisions/057), for the routes' descriptions. */
const PINNING = [
  "**Versions.** `model` is the app's slug; `slug@v12` pins version 12, `slug@staging` (or any label the creator set, `slug@latest`, `slug@production`) pins what that label points at. The `Promptmint-Version: v12` request header pins too; both given and different is a 400 naming `model`.",
  "Without a pin the call gets the app's `production` version. The answer's `model` is what you sent, and the `Promptmint-Version` response header names the version that answered.",
  "A version or label the app does not have is a 404 `model_not_found` naming it; a malformed pin a 400 naming `model`; nothing is charged for either. Workflow apps are pinned the same way (their provider configuration is versioned).",
].join("\n\n");

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
      type: openAiErrorType(status, error instanceof AppError ? error.code : undefined),
      param: error instanceof OpenAiError ? error.param : fields ? (Object.keys(fields)[0] ?? null) : null,
      code: openAiCodeOf(error, fields),
      ...remedyFields(error),
    },
  });
}

/** The error's `code` as OpenAI names it where it has a name of its own, else ours. */
function openAiCodeOf(error: Error & { code?: string }, fields: Record<string, string> | undefined) {
  if (error instanceof AppError) return openAiCodeOfAppError(error);
  return fields ? "invalid_request" : (error.code ?? null);
}

const modelOf = (row: ApplicationRow, caller: LocalUser, pinned?: { id: string; createdAt: Date }) => ({
  id: pinned?.id ?? row.slug,
  object: "model" as const,
  created: Math.floor((pinned?.createdAt ?? row.createdAt).getTime() / 1000),
  owned_by: row.ownerId === caller.id ? "you" : "promptmint",
  accepts_tools: row.type === "prompt" && row.allowTools,
});

/** The published input limit of the app's production (or pinned) version; a missing pin is the caller's 404 below. */
async function inputLimitOf(
  db: Database,
  app: ApplicationRow,
  feePercent: number,
  pin?: VersionPin,
): Promise<number | null> {
  if (app.type !== "prompt") return null;
  const loaded = await loadPrompt(db, app, pin).catch(() => null);
  return publishedInputLimit(loaded?.prompt ?? null, effectivePriceCents(app), feePercent);
}

/** When the version a pin names was saved: a 404 `version_not_found` naming it when there is none. */
async function pinnedVersionCreatedAt(db: Database, app: ApplicationRow, pin: VersionPin): Promise<Date> {
  if (app.type === "workflow") return (await loadWorkflowVersion(db, app, pin)).version.createdAt;
  return (await loadPrompt(db, app, pin)).active.createdAt;
}

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
        description:
          "`model` is the app's slug, or a pinned version or label of it as calls take it (`slug@v12`, `slug@staging`): the answer's `id` is what you sent and, for a pin, `created` is when that version was saved. A version or label the app does not have is a 404 `model_not_found` naming it, as is an app you may not call; a malformed pin a 400 naming `model`.",
        security: [{ bearerAuth: [] }],
        params: z.object({ model: z.string().min(1).max(140) }),
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
      const { slug, pin } = openAiModel(request.params.model);
      const found = await findCallableApp(db, slug, caller).catch((error) =>
        Promise.reject(unknownModel(error, request.params.model)),
      );
      const limited = { max_input_tokens: await inputLimitOf(db, found, deps.feePercent, pin) };
      if (!pin) return { ...modelOf(found, caller), ...limited };
      const createdAt = await pinnedVersionCreatedAt(db, found, pin).catch((error) => {
        if (error instanceof AppError && error.code === "version_not_found")
          throw new OpenAiError("version_not_found", "model_not_found", error.message, "model");
        throw error;
      });
      return { ...modelOf(found, caller, { id: request.params.model, createdAt }), ...limited };
    },
  );

  app.post(
    "/chat/completions",
    {
      schema: {
        tags: ["openai"],
        summary: "OpenAI-compatible chat completion: model = app slug; stream supported",
        description: `${PINNING}\n\nThe answer's \`system_fingerprint\` (and every stream chunk's) is the version that answered, e.g. \`v12\`.`,
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
        description: `${PINNING}\n\nThe response's \`metadata.promptmint_version\` is the version that answered, e.g. \`v12\` (stored responses keep it).`,
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
      // An agent paying without credentials is known by its payment only once it is paid: it
      // continues a response with its balance key (access.ts), its payer's account-less user.
      const caller = request.payingAgent ? undefined : currentUser(request);
      if (!caller && body.previous_response_id)
        throw invalidFields({
          previous_response_id:
            "needs credentials: responses are kept per payer, so continue with your balance key (send `Promptmint-Balance-Key: issue` with a paid call to get one) or an API key",
        });
      // Refused before anything is paid: an unknown, expired, deleted or another caller's response.
      const earlier =
        caller && body.previous_response_id
          ? await continuationOf(db, caller.id, body.previous_response_id, openAiModel(body.model).slug)
          : undefined;
      const store = body.store !== false;
      // Kept for whoever paid: the caller, or an agent's payer (request.user once it paid).
      const keep = store
        ? async (answer: ResponseObject, call: CallMeta) => {
            const callerId = request.user?.id;
            if (!callerId) return;
            await keepResponse(db, {
              callerId,
              applicationId: call.applicationId,
              inputItems: [...(earlier?.items ?? []), ...inputItemsOf(body.input, answer.id)],
              response: answer,
            });
          }
        : undefined;
      return runOpenAiCall(
        deps,
        request,
        reply,
        responsesCall(body, earlier?.items as ResponsesInputItems | undefined),
        responsesDialect({ ...body, store }, keep),
        { responses: body },
      );
    },
  );

  // The caller's stored responses: retrieve, delete, input_items (openai-stored-responses.routes.ts).
  // Not `deps` itself: it holds this plugin's own prefix, which the child would add again.
  await app.register(storedResponsesRoutes, { db, guards });
};
