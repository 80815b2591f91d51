import {
  AppInfoSchema,
  AppParametersSchema,
  allowedValueText,
  GatewayRequestSchema,
  GatewayResponseSchema,
  IoSchemaSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import { currentUser } from "../auth/authenticate.ts";
import { priceFields } from "../billing/price-changes.ts";
import { loadPrompt } from "../prompts/load-prompt.ts";
import { callerOrAgent, findAppForCall } from "./access.ts";
import { difyConversationRoutes } from "./dify-conversations.routes.ts";
import { installDifyErrorHandler, notChatApp, refuseUnsupportedFields } from "./dify-errors.ts";
import { difyFileRoutes } from "./dify-files.routes.ts";
import {
  gatewayErrors as errors,
  PaymentRequiredSchema,
  ResultSchema,
  SlugParams,
  gatewaySecurity as security,
  gatewayTags as tags,
  UserBody,
} from "./dify-schemas.ts";
import { chatRequestExample, completionRequestExample, gatewayResponseExample } from "./examples.ts";
import { createGatewayCall, type GatewayDeps, headerPin, type Mode, taskOwner } from "./gateway-call.ts";
import { maxPriceOf } from "./max-price.ts";
import { difyInputs } from "./prompt-call.ts";
import { rateLimitHook } from "./rate-limit.ts";
import { createRunningTasks } from "./running-tasks.ts";
import { workflowRunRoutes } from "./workflow-run.ts";

/** Where consumers' files go (`/files/upload`): the same storage and limits as creators' uploads. */
export interface UploadOptions {
  dataDir: string;
  maxUploadBytes: number;
  uploadQuotaBytes: number;
}
export type DifyRouteDeps = GatewayDeps & { uploads: UploadOptions };

/**
 * The paid endpoints, compatible with Dify's service API (blocking and SSE streaming), with
 * Dify's error codes (dify-errors.ts) and its app, conversation, file and workflow routes.
 */
export const gatewayRoutes: FastifyPluginAsyncZod<DifyRouteDeps> = async (app, deps) => {
  const { db, guards } = deps;
  installDifyErrorHandler(app);
  const limit = rateLimitHook(deps.rateLimiter);
  const tasks = createRunningTasks();
  const runCall = createGatewayCall(deps, tasks);

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
            "Authenticate with an API key (`Bearer pm_…`) or a sign-in token. `response_mode: streaming` answers with server-sent events. Undeclared inputs are left out and optional ones not sent are empty, as in Dify.\n\n**Versions.** Without a pin the call gets the app's `production` version. Send `Promptmint-Version: v12` to pin version 12, or a label (`staging`, `latest`, the creator's own). The `Promptmint-Version` response header and `metadata.promptmint_version` (blocking answers and `message_end`) name the version that answered. A version or label the app does not have is a 404 `version_not_found` naming it; nothing is charged. Workflow apps are pinned the same way (their provider configuration is versioned).",
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
        onRequest: [callerOrAgent(deps), limit, deps.admission.hook],
      },
      async (request, reply) => {
        const { max_price_cents, ...input } = request.body;
        const maxPriceCents = maxPriceOf(request, max_price_cents);
        const { application } = await findAppForCall(
          deps,
          request,
          request.params.slug,
          (found) => requireMode(found, mode),
          reply,
        );
        refuseUnsupportedFields(input);
        const inputs = await difyInputs(db, application, input.inputs, headerPin(request)?.pin);
        return runCall(request, reply, { application, mode, input: { ...input, inputs }, maxPriceCents });
      },
    );

    app.post(
      `/app/:slug/${mode}-messages/:task_id/stop`,
      {
        schema: {
          tags,
          summary: `Stop a streaming ${mode} call (Dify compatible)`,
          description:
            "Stops your own streamed call in progress: stopped before any content it costs nothing, after that it is charged like a stream you hung up on. A call already finished, or running on another server process, is not stopped (the answer is the same, as in Dify).",
          security,
          params: SlugParams.extend({ task_id: z.string().max(100) }),
          body: UserBody,
          response: { 200: ResultSchema, ...errors },
        },
        onRequest: guards.requireCaller,
      },
      async (request) => {
        const caller = currentUser(request);
        const application = await findCallableApp(db, request.params.slug, caller);
        requireMode(application, mode);
        tasks.stop(request.params.task_id, taskOwner(caller.id, application.id, request.body?.user));
        return { result: "success" as const };
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
              appParameters(
                [
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
                15 * 1024 * 1024,
              ),
            ],
          }),
          ...errors,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const application = await findCallableApp(db, request.params.slug, currentUser(request));
      return appParameters(await inputForm(db, application), deps.uploads.maxUploadBytes);
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

  app.get(
    "/app/:slug/meta",
    {
      schema: {
        tags,
        summary: "The app's tool icons (Dify compatible; Promptmint apps use no tools)",
        security,
        params: SlugParams,
        response: { 200: z.object({ tool_icons: z.record(z.string(), z.unknown()) }), ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      await findCallableApp(db, request.params.slug, currentUser(request));
      return { tool_icons: {} };
    },
  );

  app.get(
    "/app/:slug/site",
    {
      schema: {
        tags,
        summary: "The app's WebApp settings: title, description, icon (Dify compatible)",
        security,
        params: SlugParams,
        response: { 200: SiteSchema, ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const application = await findCallableApp(db, request.params.slug, currentUser(request));
      return {
        title: application.name,
        description: application.description,
        chat_color_theme: null,
        chat_color_theme_inverted: false,
        icon_type: null,
        icon: null,
        icon_background: null,
        icon_url: null,
        copyright: null,
        privacy_policy: null,
        custom_disclaimer: "",
        default_language: "en-US",
        show_workflow_steps: false,
        use_icon_as_answer_icon: false,
      };
    },
  );

  await app.register(difyConversationRoutes, deps);
  await app.register(difyFileRoutes, deps);
  await app.register(workflowRunRoutes, { ...deps, runCall, tasks });
};

const SiteSchema = z.object({
  title: z.string(),
  description: z.string(),
  chat_color_theme: z.string().nullable(),
  chat_color_theme_inverted: z.boolean(),
  icon_type: z.string().nullable(),
  icon: z.string().nullable(),
  icon_background: z.string().nullable(),
  icon_url: z.string().nullable(),
  copyright: z.string().nullable(),
  privacy_policy: z.string().nullable(),
  custom_disclaimer: z.string(),
  default_language: z.string(),
  show_workflow_steps: z.boolean(),
  use_icon_as_answer_icon: z.boolean(),
});

/**
 * Dify's chat endpoint answers only chat apps (`not_chat_app`). Its completion endpoint answers
 * every app here: SPEC §2 calls all prompt apps through completion-messages (a chat app then
 * answers one turn), and workflow apps through either (docs/decisions/031).
 */
function requireMode(application: ApplicationRow, mode: Mode): void {
  if (mode === "chat" && application.type === "prompt" && application.interactionMode !== "chat")
    throw notChatApp();
}

/** The app's input form in Dify's `user_input_form` shape (workflow apps declare none). */
async function inputForm(db: Database, application: ApplicationRow) {
  const form: Record<string, Record<string, unknown>>[] = [];
  if (application.type !== "prompt") return form;
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
    else if (property.type === "boolean")
      form.push({ checkbox: { ...common, default: property.default ?? false } });
    else if (property.type === "string")
      form.push({
        [property.maxLength && property.maxLength <= 256 ? "text-input" : "paragraph"]: {
          ...common,
          max_length: property.maxLength ?? 0,
        },
      });
    else form.push({ paragraph: { ...common, max_length: 0 } });
  }
  return form;
}

/**
 * Dify's `/parameters` with every key its clients read. Promptmint apps have none of Dify's
 * optional features (suggestions, speech, retrieval, annotations, moderation) and their models
 * take no files, so each says `enabled: false`; the upload limit is the real one.
 */
function appParameters(form: Record<string, Record<string, unknown>>[], maxUploadBytes: number) {
  const off = { enabled: false };
  const megabytes = Math.floor(maxUploadBytes / 1024 / 1024);
  return {
    opening_statement: "",
    suggested_questions: [],
    suggested_questions_after_answer: off,
    speech_to_text: off,
    text_to_speech: { enabled: false, voice: "", language: "", autoPlay: "disabled" },
    retriever_resource: off,
    annotation_reply: off,
    more_like_this: off,
    user_input_form: form,
    sensitive_word_avoidance: { enabled: false, type: "", configs: [] },
    file_upload: {
      enabled: false,
      image: { enabled: false, number_limits: 0, detail: "low", transfer_methods: [] },
      allowed_file_types: [],
      allowed_file_extensions: [],
      allowed_file_upload_methods: [],
      number_limits: 0,
    },
    system_parameters: {
      file_size_limit: megabytes,
      image_file_size_limit: megabytes,
      audio_file_size_limit: 0,
      video_file_size_limit: 0,
      workflow_file_upload_limit: 0,
    },
  };
}
