import {
  ApiErrorSchema,
  EvalCaseInputSchema,
  EvalCaseListSchema,
  EvalCaseSchema,
  EvalCompareQuerySchema,
  EvalComparisonSchema,
  EvalEstimateQuerySchema,
  EvalEstimateSchema,
  EvalRunListSchema,
  EvalRunQuerySchema,
  EvalRunSchema,
  EvalSettingsSchema,
  StartEvalRunSchema,
  UpdateEvalCaseSchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { CallPayments } from "../billing/call-payment/index.ts";
import { evalCaseCaller, evalJudge, evalRunEstimator } from "../gateway/eval-call.ts";
import type { LlmClient } from "../models/llm.ts";
import { KNOWN_MODEL_IDS } from "../models/model-catalog.ts";
import {
  compareRuns,
  createCase,
  deleteCase,
  estimateEvalRun,
  getRun,
  listCases,
  listRuns,
  runEval,
  setRequirePassingEval,
  updateCase,
} from "./evals.ts";
import type { ExperimentKind } from "./experiment-subjects.ts";

const errors = {
  400: ApiErrorSchema,
  401: ApiErrorSchema,
  402: ApiErrorSchema,
  404: ApiErrorSchema,
  409: ApiErrorSchema,
  429: ApiErrorSchema,
};
const security = [{ bearerAuth: [] }];
const IdParams = z.object({ id: UuidSchema });
const CaseParams = z.object({ id: UuidSchema, cid: UuidSchema });
const RunParams = z.object({ id: UuidSchema, rid: UuidSchema });

/** Where each kind of app's evals live (the same routes and shapes: docs/decisions/059, "Workflow apps"). */
const KINDS: { kind: ExperimentKind; prefix: string; noun: string; tags: string[]; calls: string }[] = [
  {
    kind: "prompt",
    prefix: "/prompts/:id/evals",
    noun: "prompt",
    tags: ["prompts"],
    calls:
      "the owner's own calls: each holds its worst-case model cost from the owner's wallet; 402 when the wallet cannot pay the first call",
  },
  {
    kind: "workflow",
    prefix: "/workflows/:id/evals",
    noun: "workflow",
    tags: ["workflows"],
    calls:
      "the owner's own calls of their workflow, free as any owner call; only rubric judges hold their worst-case model cost from the owner's wallet; 402 when it cannot pay the first judge",
  },
];

/** Evals before publishing (docs/decisions/059): cases, runs, comparisons, the release gate's switch. */
export const evalsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  llm: LlmClient;
  secrets: SecretBox;
  feePercent: number;
  publicUrl: string;
  payments: CallPayments;
  /** The workflow providers' fetch (workflow cases call the provider as a gateway call would). */
  safeFetch: SafeFetch;
}> = async (app, { db, guards, llm, secrets, feePercent, publicUrl, payments, safeFetch }) => {
  const callDeps = { db, llm, secrets, feePercent, publicUrl, payments, safeFetch };
  const onRequest = guards.requireUser;
  for (const { kind, prefix, noun, tags, calls } of KINDS) {
    const subject = (id: string) => ({ kind, id });

    app.get(
      `${prefix}/cases`,
      {
        schema: {
          tags,
          summary: `A ${noun} app's eval cases, and whether a passing run is required before production`,
          security,
          params: IdParams,
          response: { 200: EvalCaseListSchema, ...errors },
        },
        onRequest,
      },
      async (request) => listCases(db, currentUser(request), subject(request.params.id)),
    );

    app.post(
      `${prefix}/cases`,
      {
        schema: {
          tags,
          summary:
            kind === "prompt"
              ? "Add an eval case: inputs (checked against the latest version's input schema) and assertions"
              : "Add an eval case: inputs (free-form: strings, numbers, booleans; the provider checks them) and assertions",
          security,
          params: IdParams,
          body: EvalCaseInputSchema,
          response: { 201: EvalCaseSchema, ...errors },
        },
        onRequest,
      },
      async (request, reply) =>
        reply
          .status(201)
          .send(await createCase(db, currentUser(request), subject(request.params.id), request.body)),
    );

    app.patch(
      `${prefix}/cases/:cid`,
      {
        schema: {
          tags,
          summary: "Change an eval case",
          security,
          params: CaseParams,
          body: UpdateEvalCaseSchema,
          response: { 200: EvalCaseSchema, ...errors },
        },
        onRequest,
      },
      async (request) =>
        updateCase(db, currentUser(request), subject(request.params.id), request.params.cid, request.body),
    );

    app.delete(
      `${prefix}/cases/:cid`,
      {
        schema: {
          tags,
          summary: "Delete an eval case (past runs keep its results)",
          security,
          params: CaseParams,
          response: { 204: z.null(), ...errors },
        },
        onRequest,
      },
      async (request, reply) => {
        await deleteCase(db, currentUser(request), subject(request.params.id), request.params.cid);
        return reply.status(204).send(null);
      },
    );

    app.patch(
      `${prefix}/settings`,
      {
        schema: {
          tags,
          summary:
            kind === "prompt"
              ? "Require a passing eval run before a version goes to production"
              : "The release gate on a passing eval run (prompt apps only: true is a 400 for a workflow app)",
          security,
          params: IdParams,
          body: EvalSettingsSchema,
          response: { 200: EvalCaseListSchema, ...errors },
        },
        onRequest,
      },
      async (request) =>
        setRequirePassingEval(
          db,
          currentUser(request),
          subject(request.params.id),
          request.body.require_passing_eval,
        ),
    );

    app.post(
      `${prefix}/runs`,
      {
        schema: {
          tags,
          summary: `Run every case against a version (${calls}; 409 until a large estimate is confirmed with confirm_cost_micros, 429 past the concurrent runs limit); answers when done`,
          security,
          params: IdParams,
          body: StartEvalRunSchema,
          response: { 201: EvalRunSchema, ...errors },
        },
        onRequest,
      },
      async (request, reply) => {
        const owner = currentUser(request);
        const run = await runEval(db, {
          owner,
          subject: subject(request.params.id),
          body: request.body,
          feePercent,
          knownModels: KNOWN_MODEL_IDS,
          callCaseFor: (application, version) =>
            evalCaseCaller(callDeps, request, owner, application, version),
          judgeFor: (application, model) => evalJudge(callDeps, request, owner, application, model),
          estimateFor: (application, version) => evalRunEstimator(callDeps, owner, application, version),
          topUpUrl: `${publicUrl}/wallet`,
        });
        return reply.status(201).send(run);
      },
    );

    app.get(
      `${prefix}/estimate`,
      {
        schema: {
          tags,
          summary:
            "What a run of a version may cost at most (every case and judge call at its worst case, paid from your wallet), and whether it needs confirming",
          security,
          params: IdParams,
          querystring: EvalEstimateQuerySchema,
          response: { 200: EvalEstimateSchema, ...errors },
        },
        onRequest,
      },
      async (request) => {
        const owner = currentUser(request);
        return estimateEvalRun(db, {
          owner,
          subject: subject(request.params.id),
          version: request.query.version,
          judgeModel: request.query.judge_model,
          knownModels: KNOWN_MODEL_IDS,
          estimateFor: (application, version) => evalRunEstimator(callDeps, owner, application, version),
        });
      },
    );

    app.get(
      `${prefix}/runs`,
      {
        schema: {
          tags,
          summary: `A ${noun} app's eval runs, newest first (of one version with ?version=)`,
          security,
          params: IdParams,
          querystring: EvalRunQuerySchema,
          response: { 200: EvalRunListSchema, ...errors },
        },
        onRequest,
      },
      async (request) => ({
        runs: await listRuns(db, currentUser(request), subject(request.params.id), request.query.version),
      }),
    );

    app.get(
      `${prefix}/runs/:rid`,
      {
        schema: {
          tags,
          summary: "One eval run with each case's result, cost and latency, and its margin estimate",
          security,
          params: RunParams,
          response: { 200: EvalRunSchema, ...errors },
        },
        onRequest,
      },
      async (request) => getRun(db, currentUser(request), subject(request.params.id), request.params.rid),
    );

    app.get(
      `${prefix}/compare`,
      {
        schema: {
          tags,
          summary: "Two eval runs case by case: fixed, broke, still passing, still failing",
          security,
          params: IdParams,
          querystring: EvalCompareQuerySchema,
          response: { 200: EvalComparisonSchema, ...errors },
        },
        onRequest,
      },
      async (request) =>
        compareRuns(db, currentUser(request), subject(request.params.id), request.query.a, request.query.b),
    );
  }
};
