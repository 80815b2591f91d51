import {
  ApiErrorSchema,
  OnlineEvalSettingsSchema,
  OnlineEvalSummarySchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { ExperimentKind } from "./experiment-subjects.ts";
import { getOnlineEvalSummary, putOnlineEvalSettings } from "./online-evals.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema };
const security = [{ bearerAuth: [] }];
const tags = ["online-evals"];
const SubjectParams = z.object({ id: UuidSchema });

/** Where each kind of app's online evals live (as its experiments: experiments.routes.ts). */
const KINDS: { kind: ExperimentKind; base: string; noun: string }[] = [
  { kind: "prompt", base: "/prompts/:id/online-evals", noun: "prompt" },
  { kind: "workflow", base: "/workflows/:id/online-evals", noun: "workflow" },
];

/**
 * Online evaluation of live calls (docs/decisions/076): the settings and the summary, the same
 * routes and answers for a prompt app and a workflow app.
 */
export const onlineEvalsRoutes: FastifyPluginAsyncZod<{ db: Database; guards: AuthGuards }> = async (
  app,
  { db, guards },
) => {
  for (const { kind, base, noun } of KINDS) {
    app.get(
      base,
      {
        schema: {
          tags,
          summary: `A ${noun} app's online evals: settings, today's judge spend against the daily cap, scores per version and experiment arm beside revenue and margin, recent results`,
          security,
          params: SubjectParams,
          response: { 200: OnlineEvalSummarySchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) => getOnlineEvalSummary(db, currentUser(request), kind, request.params.id),
    );

    app.put(
      base,
      {
        schema: {
          tags,
          summary: `Set a ${noun} app's online evals: a share of its customer calls judged by assertions, rubric judges paid from your wallet up to a daily cap`,
          security,
          params: SubjectParams,
          body: OnlineEvalSettingsSchema,
          response: { 200: OnlineEvalSummarySchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request) =>
        putOnlineEvalSettings(db, currentUser(request), kind, request.params.id, request.body),
    );
  }
};
