import {
  PromptConfigSchema,
  PromptVersionListSchema,
  RestoreVersionSchema,
  RestoreWorkflowVersionSchema,
  WorkflowConfigSchema,
  WorkflowVersionListSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { ExperimentKind } from "./experiment-subjects.ts";
import { errors, IdParams, RELEASE_ROUTE_KINDS, security } from "./route-kinds.ts";
import { ownVersions, restoreOwnVersion } from "./versions.service.ts";

/** Each kind's versions answer in its own shapes: a version shows its kind's payload. */
const SHAPES: Record<
  ExperimentKind,
  { list: z.ZodType; restore: typeof RestoreVersionSchema; config: z.ZodType }
> = {
  prompt: { list: PromptVersionListSchema, restore: RestoreVersionSchema, config: PromptConfigSchema },
  workflow: {
    list: WorkflowVersionListSchema,
    restore: RestoreWorkflowVersionSchema,
    config: WorkflowConfigSchema,
  },
};

/**
 * Versions (docs/decisions/057, 060, 075): the same routes for a prompt app (`/prompts/{id}/…`)
 * and a workflow app (`/workflows/{id}/…`); each answers in its kind's shapes.
 */
export const versionsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  feePercent: number;
}> = async (app, { db, guards, feePercent }) => {
  for (const { kind, base, noun, tag } of RELEASE_ROUTE_KINDS) {
    const { list, restore, config } = SHAPES[kind];
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
