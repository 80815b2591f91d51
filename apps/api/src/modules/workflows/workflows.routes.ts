import {
  ApiErrorSchema,
  UpdateWorkflowConfigSchema,
  WorkflowConfigSchema,
  WorkflowProviderListSchema,
  WorkflowTestRequestSchema,
  WorkflowTestResponseSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { getOwnApplication } from "../applications/applications.service.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import {
  listProviders,
  loadWorkflow,
  testWorkflowConfig,
  toWorkflowConfig,
  updateWorkflowConfig,
} from "./workflows.service.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 409: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const SlugParams = z.object({ slug: z.string().max(100) });
const tags = ["workflows"];

/** SPEC §7 "Prompts and workflows": providers, workflow config, Test Config, versions. */
export const workflowsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  secrets: SecretBox;
  safeFetch: SafeFetch;
}> = async (app, { db, guards, secrets, safeFetch }) => {
  app.get(
    "/workflow-providers/",
    {
      schema: {
        tags,
        summary: "Workflow providers and their configuration forms",
        security,
        response: { 200: WorkflowProviderListSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async () => listProviders(db),
  );

  app.get(
    "/app/:slug/workflow/",
    {
      schema: {
        tags,
        summary: "A workflow app's provider settings (secrets masked)",
        security,
        params: SlugParams,
        response: { 200: WorkflowConfigSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const application = await getOwnApplication(db, currentUser(request), request.params.slug);
      return toWorkflowConfig(db, application, await loadWorkflow(db, application));
    },
  );

  app.patch(
    "/app/:slug/workflow/",
    {
      schema: {
        tags,
        summary:
          "Save provider settings as a new version (production moves only with promote, or before the app is live). Send a secret's mask back to keep it.",
        security,
        params: SlugParams,
        body: UpdateWorkflowConfigSchema,
        response: { 200: WorkflowConfigSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const user = currentUser(request);
      const application = await getOwnApplication(db, user, request.params.slug);
      return toWorkflowConfig(
        db,
        application,
        await updateWorkflowConfig(db, secrets, application, request.body, { actorId: user.id }),
      );
    },
  );

  app.post(
    "/app/:slug/workflow/test-config/",
    {
      schema: {
        tags,
        summary:
          "Check these settings with the provider (its answer is the result); a wrong setting answers 400 naming it",
        security,
        params: SlugParams,
        body: WorkflowTestRequestSchema,
        response: { 200: WorkflowTestResponseSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const application = await getOwnApplication(db, currentUser(request), request.params.slug);
      return testWorkflowConfig(db, {
        secrets,
        fetch: safeFetch,
        app: application,
        provider: request.body.provider,
        providerConfig: request.body.provider_config,
      });
    },
  );
};
