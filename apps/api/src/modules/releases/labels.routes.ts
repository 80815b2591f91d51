import {
  LabelNameSchema,
  MoveLabelSchema,
  NewLabelNameSchema,
  PromptLabelsSchema,
  ServingStateSchema,
  UuidSchema,
  WorkflowLabelsSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { ExperimentKind } from "./experiment-subjects.ts";
import { deleteOwnLabel, moveOwnLabel, ownLabels, ownServingState } from "./labels.service.ts";
import { errors, IdParams, RELEASE_ROUTE_KINDS, security } from "./route-kinds.ts";

/** Each kind's labels answer in its own schema (the same shape, named by kind). */
const LABELS_SCHEMA: Record<ExperimentKind, typeof PromptLabelsSchema> = {
  prompt: PromptLabelsSchema,
  workflow: WorkflowLabelsSchema,
};

/**
 * Labels and what callers get (docs/decisions/057, 060, 075): the same routes and answers for a
 * prompt app (`/prompts/{id}/…`) and a workflow app (`/workflows/{id}/…`).
 */
export const labelsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  feePercent: number;
}> = async (app, { db, guards, feePercent }) => {
  for (const { kind, base, noun, tag } of RELEASE_ROUTE_KINDS) {
    const schema = LABELS_SCHEMA[kind];
    const tags = [tag];
    app.get(
      `${base}/labels/`,
      {
        schema: {
          tags,
          summary: `A ${noun}'s labels (production, latest, staging, the creator's own) and their moves, newest first`,
          security,
          params: IdParams,
          response: { 200: schema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) => ownLabels(db, currentUser(request), kind, request.params.id),
    );

    app.put(
      `${base}/labels/:name`,
      {
        schema: {
          tags,
          summary: `Point a label at a ${noun} version: production is a release or a rollback (refused while an experiment runs unless end_experiment is true)`,
          security,
          params: z.object({ id: UuidSchema, name: NewLabelNameSchema }),
          body: MoveLabelSchema,
          response: { 200: schema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) =>
        moveOwnLabel(db, currentUser(request), kind, request.params.id, request.params.name, request.body, {
          feePercent,
        }),
    );

    app.delete(
      `${base}/labels/:name`,
      {
        schema: {
          tags,
          summary: `Remove one of the creator's labels of a ${noun} (production and latest cannot be removed)`,
          security,
          params: z.object({ id: UuidSchema, name: LabelNameSchema }),
          response: { 200: schema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) =>
        deleteOwnLabel(db, currentUser(request), kind, request.params.id, request.params.name),
    );

    app.get(
      `${base}/serving`,
      {
        schema: {
          tags: ["experiments"],
          summary: `What a ${noun} app's callers get now: the production version and the running experiment (its split), if any`,
          security,
          params: IdParams,
          response: { 200: ServingStateSchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) => ownServingState(db, currentUser(request), kind, request.params.id),
    );
  }
};
