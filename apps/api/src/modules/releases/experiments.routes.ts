import {
  ApiErrorSchema,
  EndExperimentSchema,
  ExperimentDetailSchema,
  ExperimentListSchema,
  ExperimentSchema,
  PromoteArmSchema,
  StartExperimentSchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { ExperimentKind } from "./experiment-subjects.ts";
import {
  endOwnExperiment,
  experimentDetail,
  listExperiments,
  startExperiment,
} from "./experiments.service.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 409: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const tags = ["experiments"];
const SubjectParams = z.object({ id: UuidSchema });
const ExperimentParams = z.object({ id: UuidSchema, eid: UuidSchema });

/** Where each kind of app's experiments live, and what its versions are. */
const KINDS: { kind: ExperimentKind; base: string; noun: string; versions: string }[] = [
  { kind: "prompt", base: "/prompts/:id/experiments/", noun: "prompt", versions: "versions" },
  {
    kind: "workflow",
    base: "/workflows/:id/experiments/",
    noun: "workflow",
    versions: "versions of its provider configuration",
  },
];

/**
 * Experiments (docs/decisions/058): split an app's traffic between versions, judge, end. The same
 * routes, answers and rules for a prompt app (`/prompts/{id}/…`) and a workflow app
 * (`/workflows/{id}/…`).
 */
export const experimentsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  feePercent: number;
}> = async (app, { db, guards, feePercent }) => {
  const options = { feePercent };
  for (const { kind, base, noun, versions } of KINDS) {
    app.get(
      base,
      {
        schema: {
          tags,
          summary: `A ${noun}'s experiments, newest first, and the running one`,
          security,
          params: SubjectParams,
          response: { 200: ExperimentListSchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) => listExperiments(db, currentUser(request), kind, request.params.id),
    );

    app.post(
      base,
      {
        schema: {
          tags,
          summary: `Start an experiment: a ${noun} app's production traffic split between 2–5 ${versions} by percent, sticky per caller (one running per app)`,
          security,
          params: SubjectParams,
          body: StartExperimentSchema,
          response: { 201: ExperimentSchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request, reply) => {
        const started = await startExperiment(
          db,
          currentUser(request),
          kind,
          request.params.id,
          request.body,
          options,
        );
        return reply.status(201).send(started);
      },
    );

    app.get(
      `${base}:eid`,
      {
        schema: {
          tags,
          summary: `A ${noun} experiment with each arm's figures, significance against the control and a time series`,
          security,
          params: ExperimentParams,
          response: { 200: ExperimentDetailSchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) =>
        experimentDetail(db, currentUser(request), kind, request.params.id, request.params.eid),
    );

    // Stop and roll back take an optional reason; each is one click (docs/decisions/058).
    for (const { kind: action, summary } of [
      { kind: "stop", summary: `Stop a ${noun} experiment: production stays where it points` },
      {
        kind: "rollback",
        summary: `End a ${noun} experiment by returning production to the version it pointed at when it started`,
      },
    ] as const)
      app.post(
        `${base}:eid/${action}`,
        {
          schema: {
            tags,
            summary,
            security,
            params: ExperimentParams,
            body: EndExperimentSchema.nullish(),
            response: { 200: ExperimentDetailSchema, ...errors },
          },
          onRequest: guards.requireUser,
        },
        async (request) =>
          endOwnExperiment(
            db,
            currentUser(request),
            kind,
            request.params.id,
            request.params.eid,
            { kind: action },
            request.body ?? {},
            options,
          ),
      );

    app.post(
      `${base}:eid/promote`,
      {
        schema: {
          tags,
          summary: `End a ${noun} experiment by promoting one arm to production (audited label move)`,
          security,
          params: ExperimentParams,
          body: PromoteArmSchema,
          response: { 200: ExperimentDetailSchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) =>
        endOwnExperiment(
          db,
          currentUser(request),
          kind,
          request.params.id,
          request.params.eid,
          { kind: "promote", version: request.body.version },
          request.body,
          options,
        ),
    );
  }
};
