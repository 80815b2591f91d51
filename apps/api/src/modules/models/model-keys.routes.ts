import {
  ApiErrorSchema,
  CostEstimateRequestSchema,
  CostEstimateSchema,
  ModelKeyListSchema,
  ModelKeyProviderSchema,
  ModelKeySchema,
  ModelPriceListSchema,
  PutModelKeySchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { invalidFields } from "../../lib/errors.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { KNOWN_MODEL_IDS } from "./model-catalog.ts";
import { deleteModelKey, getModelKey, listModelKeys, putModelKey } from "./model-keys.service.ts";
import {
  activeModelPrices,
  MICROS_PER_CENT,
  minimumPriceCents,
  netOfFeeMicros,
  priceAt,
  worstCaseCostMicros,
} from "./model-prices.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const ProviderParams = z.object({ provider: ModelKeyProviderSchema });

/** A creator's own model keys, and the model price table with the editor's cost estimate (doc 026). */
export const modelKeysRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  secrets: SecretBox;
  feePercent: number;
}> = async (app, { db, guards, secrets, feePercent }) => {
  const tags = ["models"];

  app.get(
    "/model-keys",
    {
      schema: {
        tags,
        summary: "Your own model keys, one row per provider (masked)",
        security,
        response: { 200: ModelKeyListSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => ({ keys: await listModelKeys(db, currentUser(request).id) }),
  );

  app.get(
    "/model-keys/:provider",
    {
      schema: {
        tags,
        summary: "Your own key for one provider (masked)",
        security,
        params: ProviderParams,
        response: { 200: ModelKeySchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => getModelKey(db, currentUser(request).id, request.params.provider),
  );

  app.put(
    "/model-keys/:provider",
    {
      schema: {
        tags,
        summary: "Set or replace your own key for a provider (stored encrypted; shown masked)",
        security,
        params: ProviderParams,
        body: PutModelKeySchema,
        response: { 200: ModelKeySchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) =>
      putModelKey(db, secrets, currentUser(request).id, request.params.provider, request.body.api_key),
  );

  app.delete(
    "/model-keys/:provider",
    {
      schema: {
        tags,
        summary: "Delete your own key for a provider",
        security,
        params: ProviderParams,
        response: { 204: z.null(), ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      await deleteModelKey(db, currentUser(request).id, request.params.provider);
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/model-prices",
    {
      schema: {
        tags,
        summary: "What each model costs at its vendor now (micro-dollars per million tokens)",
        security,
        response: { 200: ModelPriceListSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async () => {
      const now = new Date();
      const prices = [...activeModelPrices().keys()].flatMap((model) => {
        const row = priceAt(model, now);
        return row
          ? [
              {
                model,
                from: row.from.toISOString().slice(0, 10),
                input_micros_per_million: row.inputPerMillion,
                output_micros_per_million: row.outputPerMillion,
                cached_input_micros_per_million: row.cachedInputPerMillion,
              },
            ]
          : [];
      });
      return { prices, platform_fee_percent: feePercent };
    },
  );

  app.post(
    "/model-prices/estimate",
    {
      schema: {
        tags,
        summary: "The worst-case model cost of one call under these settings, and the margin at a price",
        security,
        body: CostEstimateRequestSchema,
        response: { 200: CostEstimateSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const body = request.body;
      if (!KNOWN_MODEL_IDS.has(body.model)) throw invalidFields({ model: "is not a known model" });
      const worst = worstCaseCostMicros({
        model: body.model,
        maxTokens: body.max_tokens,
        systemPrompt: body.system_prompt,
        promptTemplate: body.prompt_template,
        inputSchema: body.input_schema ?? null,
        outputSchema: body.output_schema ?? null,
      });
      const modelCost = body.model_keys === "creator" ? 0 : worst.micros;
      const gross = body.price_cents * MICROS_PER_CENT;
      const afterFee = netOfFeeMicros(body.price_cents, feePercent);
      return {
        model: body.model,
        model_keys: body.model_keys,
        input_tokens: worst.inputTokens,
        output_tokens: worst.outputTokens,
        gross_micros: gross,
        fee_micros: gross - afterFee,
        model_cost_micros: modelCost,
        net_micros: afterFee - modelCost,
        minimum_price_cents: minimumPriceCents(modelCost, feePercent),
        covered: afterFee >= modelCost,
      };
    },
  );
};
