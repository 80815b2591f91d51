import {
  ApiErrorSchema,
  AppInfoSchema,
  AppParametersSchema,
  allowedValueText,
  GatewayRequestSchema,
  GatewayResponseSchema,
  IoSchemaSchema,
} from "@promptmint/contracts";
import { and, desc, eq } from "drizzle-orm";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { conversationMessages, conversations } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import { currentUser } from "../auth/authenticate.ts";
import { priceFields } from "../billing/price-changes.ts";
import { loadPrompt } from "../prompts/prompts.service.ts";
import { findCallableApp } from "./access.ts";
import {
  chatRequestExample,
  completionRequestExample,
  conversationsExample,
  gatewayResponseExample,
  insufficientBalanceExample,
  messagesExample,
} from "./examples.ts";
import { createGatewayCall, type GatewayDeps } from "./gateway-call.ts";
import { maxPriceOf } from "./max-price.ts";
import { rateLimitHook } from "./rate-limit.ts";

const errors = {
  400: ApiErrorSchema,
  401: ApiErrorSchema,
  404: ApiErrorSchema,
  409: ApiErrorSchema,
  412: ApiErrorSchema,
  422: ApiErrorSchema,
  429: ApiErrorSchema,
  502: ApiErrorSchema,
  503: ApiErrorSchema,
  504: ApiErrorSchema,
};
const security = [{ bearerAuth: [] }];
const SlugParams = z.object({ slug: z.string().max(100).meta({ example: "haiku-writer" }) });
const PaymentRequiredSchema = ApiErrorSchema.meta({ examples: [insufficientBalanceExample] });
const tags = ["gateway"];

/** The paid endpoints, compatible with Dify's service API (blocking and SSE streaming). */
export const gatewayRoutes: FastifyPluginAsyncZod<GatewayDeps> = async (app, deps) => {
  const { db, guards } = deps;
  const limit = rateLimitHook(deps.rateLimiter);
  const runCall = createGatewayCall(deps);

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
          body: GatewayRequestSchema.meta({
            examples: [mode === "completion" ? completionRequestExample : chatRequestExample],
          }),
          response: {
            200: GatewayResponseSchema.meta({ examples: [gatewayResponseExample(mode)] }),
            ...errors,
            402: PaymentRequiredSchema,
          },
        },
        onRequest: [guards.requireCaller, limit, deps.admission.hook],
      },
      async (request, reply) => {
        const { max_price_cents, ...input } = request.body;
        const maxPriceCents = maxPriceOf(request, max_price_cents);
        const application = await findCallableApp(db, request.params.slug, currentUser(request));
        return runCall(request, reply, { application, mode, input, maxPriceCents });
      },
    );
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
        response: {
          200: AppParametersSchema.meta({
            examples: [
              {
                opening_statement: "",
                suggested_questions: [],
                user_input_form: [
                  {
                    "text-input": {
                      label: "Topic",
                      variable: "topic",
                      required: true,
                      default: "",
                      max_length: 40,
                    },
                  },
                ],
                file_upload: { image: { enabled: false } },
                system_parameters: { file_size_limit: 15, image_file_size_limit: 10 },
              },
            ],
          }),
          ...errors,
        },
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
          if (property.enum?.length)
            form.push({ select: { ...common, options: property.enum.map(allowedValueText) } });
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
        summary: "The app's name, description, mode (Dify compatible) and price, with any announced increase",
        security,
        params: SlugParams,
        response: {
          200: AppInfoSchema.meta({
            examples: [
              {
                name: "Haiku Writer",
                description: "A haiku about any topic.",
                tags: [],
                mode: "completion",
                price_cents: 5,
                pending_price_cents: 8,
                pending_price_at: "2026-03-01T12:00:00.000Z",
              },
            ],
          }),
          ...errors,
        },
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
        ...priceFields(application),
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
          200: z
            .object({
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
            })
            .meta({ examples: [conversationsExample] }),
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
          200: z
            .object({
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
            })
            .meta({ examples: [messagesExample] }),
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
