import {
  ApiErrorSchema,
  IoSchemaSchema,
  ModelCatalogSchema,
  PromptConfigSchema,
  StarterPriceSchema,
  TestConfigRequestSchema,
  TestConfigResponseSchema,
  UpdatePromptConfigSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { getOwnApplication } from "../applications/applications.service.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { CallPayments } from "../billing/call-payment/index.ts";
import { draftOf, runPromptTest } from "../gateway/prompt-test-run.ts";
import type { LlmClient } from "../models/llm.ts";
import { describeModels, KNOWN_MODEL_IDS } from "../models/model-catalog.ts";
import { loadPrompt } from "./load-prompt.ts";
import {
  getPromptConfig,
  starterPriceFloor,
  testPromptConfig,
  updatePromptConfig,
} from "./prompts.service.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 409: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const SlugParams = z.object({ slug: z.string().max(100) });
const tags = ["prompts"];

/** SPEC §7 "Prompts": prompt config, immutable versions, template test; the model catalog. */
export const promptsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  llm: LlmClient;
  secrets: SecretBox;
  feePercent: number;
  publicUrl: string;
  payments: CallPayments;
}> = async (app, { db, guards, llm, secrets, feePercent, publicUrl, payments }) => {
  const testDeps = { db, llm, secrets, feePercent, publicUrl, payments };
  app.get(
    "/models/",
    {
      schema: {
        tags,
        summary: "Models an app may use, and whether this server has their keys",
        security,
        response: { 200: ModelCatalogSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async () => ({
      models: describeModels(llm.isConfigured, llm.openaiCompatible),
      sandbox_fallback: llm.sandboxFallback,
    }),
  );

  app.get(
    "/prompt-apps/starter/",
    {
      schema: {
        tags,
        summary: "A new prompt app's starter model and the lowest price it may be created with",
        description:
          "The price guard (a call's price less the platform fee covers its worst-case model cost) for the settings a new prompt app starts with on the platform's model keys. Creating one at a lower `price_cents` is refused with `message`.",
        security,
        response: { 200: StarterPriceSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async () => starterPriceFloor(feePercent),
  );

  app.get(
    "/app/:slug/prompt/",
    {
      schema: {
        tags,
        summary: "A prompt app's latest version (what the editor edits), its production version and labels",
        security,
        params: SlugParams,
        response: { 200: PromptConfigSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const application = await getOwnApplication(db, currentUser(request), request.params.slug);
      return getPromptConfig(db, application);
    },
  );

  app.patch(
    "/app/:slug/prompt/",
    {
      schema: {
        tags,
        summary:
          "Save the prompt: any change is a new version; production moves only with promote (or before the app is live)",
        security,
        params: SlugParams,
        body: UpdatePromptConfigSchema,
        response: { 200: PromptConfigSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const user = currentUser(request);
      const application = await getOwnApplication(db, user, request.params.slug);
      return updatePromptConfig(db, application, request.body, KNOWN_MODEL_IDS, {
        feePercent,
        actorId: user.id,
      });
    },
  );

  const testConfigSchema = {
    tags,
    security,
    body: TestConfigRequestSchema,
    response: { 200: TestConfigResponseSchema, ...errors },
  };
  app.post(
    "/app/:slug/prompt/test-config/",
    {
      schema: {
        ...testConfigSchema,
        summary: "Render a template with test inputs and run it on the model (the owner's own call)",
        params: SlugParams,
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const owner = currentUser(request);
      const application = await getOwnApplication(db, owner, request.params.slug);
      if (application.type !== "prompt") return { ...testPromptConfig(request.body), run: null };
      const draft = draftOf(request.body, KNOWN_MODEL_IDS);
      // A draft without an input schema keeps the saved one, for the rendering as for the run.
      draft.inputSchema ??= IoSchemaSchema.parse((await loadPrompt(db, application)).active.inputSchema);
      const rendered = testPromptConfig({ ...request.body, input_schema: draft.inputSchema });
      const run = rendered.success
        ? await runPromptTest(testDeps, request, {
            owner,
            application,
            draft,
            inputs: request.body.test_inputs,
          })
        : null;
      return { ...rendered, run };
    },
  );
  app.post(
    "/prompts/test-config/",
    {
      schema: { ...testConfigSchema, summary: "Render a template with test inputs, before the app exists" },
      onRequest: guards.requireUser,
    },
    async (request) => ({ ...testPromptConfig(request.body), run: null }),
  );
};
