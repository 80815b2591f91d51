import {
  ApiErrorSchema,
  EndExperimentSchema,
  ExperimentDetailSchema,
  ExperimentListSchema,
  ExperimentSchema,
  PromoteArmSchema,
  StartExperimentSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import {
  experimentDetail,
  listExperiments,
  promoteArm,
  rollbackExperiment,
  startExperiment,
  stopExperiment,
} from "./experiments.service.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 409: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const tags = ["experiments"];
const PromptParams = z.object({ id: z.string().max(100) });
const ExperimentParams = z.object({ id: z.string().max(100), eid: z.string().max(100) });

/** Experiments (docs/decisions/058): split a prompt's traffic between versions, judge, end. */
export const experimentsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  feePercent: number;
}> = async (app, { db, guards, feePercent }) => {
  const options = { feePercent };
  app.get(
    "/prompts/:id/experiments/",
    {
      schema: {
        tags,
        summary: "A prompt's experiments, newest first, and the running one",
        security,
        params: PromptParams,
        response: { 200: ExperimentListSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => listExperiments(db, currentUser(request), request.params.id),
  );

  app.post(
    "/prompts/:id/experiments/",
    {
      schema: {
        tags,
        summary:
          "Start an experiment: production traffic split between 2–5 versions by percent, sticky per caller (one running per prompt)",
        security,
        params: PromptParams,
        body: StartExperimentSchema,
        response: { 201: ExperimentSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const started = await startExperiment(
        db,
        currentUser(request),
        request.params.id,
        request.body,
        options,
      );
      return reply.status(201).send(started);
    },
  );

  app.get(
    "/prompts/:id/experiments/:eid",
    {
      schema: {
        tags,
        summary: "An experiment with each arm's figures, significance against the control and a time series",
        security,
        params: ExperimentParams,
        response: { 200: ExperimentDetailSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => experimentDetail(db, currentUser(request), request.params.id, request.params.eid),
  );

  app.post(
    "/prompts/:id/experiments/:eid/stop",
    {
      schema: {
        tags,
        summary: "Stop an experiment: production stays where it points",
        security,
        params: ExperimentParams,
        body: EndExperimentSchema.nullish(),
        response: { 200: ExperimentDetailSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) =>
      stopExperiment(
        db,
        currentUser(request),
        request.params.id,
        request.params.eid,
        request.body ?? {},
        options,
      ),
  );

  app.post(
    "/prompts/:id/experiments/:eid/promote",
    {
      schema: {
        tags,
        summary: "End an experiment by promoting one arm to production (audited label move)",
        security,
        params: ExperimentParams,
        body: PromoteArmSchema,
        response: { 200: ExperimentDetailSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) =>
      promoteArm(db, currentUser(request), request.params.id, request.params.eid, request.body, options),
  );

  app.post(
    "/prompts/:id/experiments/:eid/rollback",
    {
      schema: {
        tags,
        summary: "End an experiment by returning production to the version it pointed at when it started",
        security,
        params: ExperimentParams,
        body: EndExperimentSchema.nullish(),
        response: { 200: ExperimentDetailSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) =>
      rollbackExperiment(
        db,
        currentUser(request),
        request.params.id,
        request.params.eid,
        request.body ?? {},
        options,
      ),
  );
};
