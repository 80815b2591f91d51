import {
  ApiErrorSchema,
  ExploreAppDetailSchema,
  ExploreAppListSchema,
  ExploreQuerySchema,
  GatewayResponseSchema,
  TryAppRequestSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { invalidFields } from "../../lib/errors.ts";
import { gatewayResponseExample, insufficientBalanceExample } from "../gateway/examples.ts";
import { createGatewayCall, type GatewayDeps, naturalModeOf } from "../gateway/gateway-call.ts";
import { maxPriceOf } from "../gateway/max-price.ts";
import { rateLimitHook } from "../gateway/rate-limit.ts";
import { findListedApp, getExploreApp, listExploreApps } from "./explore.service.ts";

const tags = ["explore"];
const SlugParams = z.object({ slug: z.string().max(100).meta({ example: "haiku-writer" }) });

const exploreAppExample = {
  name: "Haiku Writer",
  slug: "haiku-writer",
  description: "A haiku about any topic.",
  type: "prompt",
  interaction_mode: "completion",
  price_cents: 5,
  creator_name: "Ada Lovelace",
  updated_at: "2026-01-01T12:00:00.000Z",
  accepts_tools: false,
  rating: { average: 4.6, count: 18 },
  health: { calls_30d: 4210, enough_calls: true, uptime: 0.998, error_rate: 0.004, median_latency_ms: 820 },
};

/**
 * The public catalogue: live public and embeddable apps, readable without signing in, and a
 * signed-in 'Try it' call that runs (and is charged) exactly like the Dify-style endpoints.
 */
export const exploreRoutes: FastifyPluginAsyncZod<GatewayDeps> = async (app, deps) => {
  const { db, guards } = deps;
  const runCall = createGatewayCall(deps);

  app.get(
    "/explore/apps",
    {
      schema: {
        tags,
        summary: "Search the live public apps (no sign-in needed)",
        description:
          "`q` matches name and description; prices are in cents per call. 24 apps per page, ranked by `sort` (default `recommended`: usage, rating and freshness; docs/decisions/081). Each app carries its rating and its measured health over 30 days.",
        querystring: ExploreQuerySchema,
        response: {
          200: ExploreAppListSchema.meta({
            examples: [{ data: [exploreAppExample], page: 1, page_size: 24, total: 1, has_more: false }],
          }),
          400: ApiErrorSchema,
        },
      },
    },
    async (request) => {
      const { min_price_cents: min, max_price_cents: max } = request.query;
      if (min !== undefined && max !== undefined && min > max)
        throw invalidFields({ max_price_cents: "must not be below min_price_cents" });
      return listExploreApps(db, request.query);
    },
  );

  app.get(
    "/explore/apps/:slug",
    {
      schema: {
        tags,
        summary: "One live public app: its inputs and plans (no sign-in needed)",
        params: SlugParams,
        response: {
          200: ExploreAppDetailSchema.meta({
            examples: [
              {
                ...exploreAppExample,
                input_schema: {
                  type: "object",
                  properties: { topic: { type: "string", description: "Topic", maxLength: 40 } },
                  required: ["topic"],
                  additionalProperties: false,
                },
                takes_query: false,
                plans: [],
                max_input_tokens: 7464,
              },
            ],
          }),
          404: ApiErrorSchema,
        },
      },
    },
    async (request) => getExploreApp(db, request.params.slug, { feePercent: deps.feePercent }),
  );

  app.post(
    "/explore/apps/:slug/try",
    {
      schema: {
        tags,
        summary: "Try an app as the signed-in user (charged like any call)",
        description:
          "Runs one blocking call through the same path as `completion-messages` / `chat-messages`: the wallet (or a plan) pays the app's price; 402 when it cannot.",
        security: [{ bearerAuth: [] }],
        params: SlugParams,
        body: TryAppRequestSchema.meta({ examples: [{ inputs: { topic: "autumn rain" } }] }),
        response: {
          200: GatewayResponseSchema.meta({ examples: [gatewayResponseExample("completion")] }),
          400: ApiErrorSchema,
          401: ApiErrorSchema,
          402: ApiErrorSchema.meta({ examples: [insufficientBalanceExample] }),
          404: ApiErrorSchema,
          412: ApiErrorSchema,
          429: ApiErrorSchema,
          502: ApiErrorSchema,
          503: ApiErrorSchema,
          504: ApiErrorSchema,
        },
      },
      onRequest: [guards.requireUser, rateLimitHook(deps.rateLimiter), deps.admission.hook],
    },
    async (request, reply) => {
      const { max_price_cents, ...body } = request.body;
      const maxPriceCents = maxPriceOf(request, max_price_cents);
      const { app: application } = await findListedApp(db, request.params.slug);
      return runCall(request, reply, {
        application,
        mode: naturalModeOf(application),
        input: { ...body, response_mode: "blocking" },
        maxPriceCents,
      });
    },
  );
};
