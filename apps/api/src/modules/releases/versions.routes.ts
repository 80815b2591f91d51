import {
  ApiErrorSchema,
  PromptConfigSchema,
  PromptVersionListSchema,
  RestoreVersionSchema,
  RestoreWorkflowVersionSchema,
  UuidSchema,
  WorkflowConfigSchema,
  WorkflowVersionListSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { ExperimentKind } from "./experiment-subjects.ts";
import { ownVersions, restoreOwnVersion } from "./versions.service.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 409: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const IdParams = z.object({ id: UuidSchema });

/**
 * Where each kind of app's versions live, and the shapes they answer in (the tag its routes had
 * before: the fuzz shards by it). Only the response shapes differ: a version shows its kind's payload.
 */
const KINDS: {
  kind: ExperimentKind;
  base: string;
  noun: string;
  tag: string;
  list: z.ZodType;
  restore: typeof RestoreVersionSchema;
  config: z.ZodType;
}[] = [
  {
    kind: "prompt",
    base: "/prompts/:id",
    noun: "prompt",
    tag: "prompts",
    list: PromptVersionListSchema,
    restore: RestoreVersionSchema,
    config: PromptConfigSchema,
  },
  {
    kind: "workflow",
    base: "/workflows/:id",
    noun: "workflow",
    tag: "workflows",
    list: WorkflowVersionListSchema,
    restore: RestoreWorkflowVersionSchema,
    config: WorkflowConfigSchema,
  },
];

/**
 * Versions (docs/decisions/057, 060, 075): the same routes for a prompt app (`/prompts/{id}/…`)
 * and a workflow app (`/workflows/{id}/…`); each answers in its kind's shapes.
 */
export const versionsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  feePercent: number;
}> = async (app, { db, guards, feePercent }) => {
  for (const { kind, base, noun, tag, list, restore, config } of KINDS) {
    const tags = [tag];
    app.get(
      `${base}/versions/`,
      {
        schema: {
          tags,
          summary: `A ${noun}'s versions, newest first, with their authors and labels`,
          security,
          params: IdParams,
          response: { 200: list, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) => ownVersions(db, currentUser(request), kind, request.params.id),
    );

    app.post(
      `${base}/versions/`,
      {
        schema: {
          tags,
          summary:
            "Restore a version as a new latest version (production moves only with promote, or before the app is live)",
          security,
          params: IdParams,
          body: restore,
          response: { 200: config, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) =>
        restoreOwnVersion(db, currentUser(request), kind, request.params.id, request.body, { feePercent }),
    );
  }
};
