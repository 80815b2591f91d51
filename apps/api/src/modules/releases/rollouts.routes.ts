import {
  ApiErrorSchema,
  ExperimentSchema,
  StartRolloutSchema,
  StopRolloutSchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { ExperimentKind } from "./experiment-subjects.ts";
import { advanceRollout, type OnlineScore, startRollout, stopRollout } from "./rollouts.service.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 409: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const tags = ["rollouts"];
const SubjectParams = z.object({ id: UuidSchema });

const KINDS: { kind: ExperimentKind; base: string; noun: string }[] = [
  { kind: "prompt", base: "/prompts/:id/rollouts", noun: "prompt" },
  { kind: "workflow", base: "/workflows/:id/rollouts", noun: "workflow" },
];

/**
 * Guarded rollouts (docs/decisions/077): start one (a candidate's share raised step by step within
 * bounds, rolled back by itself on a breach) and stop it. The stepper job does the rest
 * (rollouts.service.ts runRolloutSteps); the rollout is read as its experiment (`rollout` field).
 */
export const rolloutsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  feePercent: number;
  onlineScore?: OnlineScore;
}> = async (app, { db, guards, feePercent, onlineScore }) => {
  for (const { kind, base, noun } of KINDS) {
    app.post(
      base,
      {
        schema: {
          tags,
          summary: `Start a guarded rollout of a ${noun} app's version: its share of production's callers grows by steps (5% → 25% → 100% by default) while it stays within bounds, and rolls back by itself otherwise`,
          security,
          params: SubjectParams,
          body: StartRolloutSchema,
          response: { 201: ExperimentSchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request, reply) => {
        const started = await startRollout(db, currentUser(request), kind, request.params.id, request.body, {
          feePercent,
        });
        return reply.status(201).send(started);
      },
    );

    app.post(
      `${base}/current/stop`,
      {
        schema: {
          tags,
          summary: `Stop a ${noun} app's running rollout: its experiment ends and production returns to the version it rolled out from`,
          security,
          params: SubjectParams,
          body: StopRolloutSchema.nullish(),
          response: { 200: ExperimentSchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) =>
        stopRollout(db, currentUser(request), kind, request.params.id, request.body ?? {}, { feePercent }),
    );

    app.post(
      `${base}/current/advance`,
      {
        schema: {
          tags,
          summary: `Take a ${noun} app's rollout to its next step now, judged by its bounds as the stepper would: a breach rolls it back, too few candidate calls is a 409`,
          security,
          params: SubjectParams,
          body: z.strictObject({}).nullish(),
          response: { 200: ExperimentSchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) =>
        advanceRollout(db, currentUser(request), kind, request.params.id, { feePercent, onlineScore }),
    );
  }
};
