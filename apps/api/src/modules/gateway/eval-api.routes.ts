import {
  ApiErrorSchema,
  type AppEvalRun,
  AppEvalRunSchema,
  StartAppEvalRunSchema,
} from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { applications, prompts } from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { CallPayments } from "../billing/call-payment/index.ts";
import type { LlmClient } from "../models/llm.ts";
import { KNOWN_MODEL_IDS } from "../models/model-catalog.ts";
import { runEval } from "../releases/evals.ts";
import { labelsOf } from "../releases/labels.ts";
import { evalCaseCaller, evalJudge, evalRunEstimator } from "./eval-call.ts";

const errors = {
  400: ApiErrorSchema,
  401: ApiErrorSchema,
  402: ApiErrorSchema,
  403: ApiErrorSchema,
  404: ApiErrorSchema,
  409: ApiErrorSchema,
  429: ApiErrorSchema,
};

/** A version as asked: a number, `v7`, or a label of the app (400 naming `version` otherwise). */
async function resolveVersion(
  db: Database,
  prompt: typeof prompts.$inferSelect,
  asked: number | string,
): Promise<{ version: number; label: string | null }> {
  if (typeof asked === "number") return { version: asked, label: null };
  const pinned = /^v([1-9][0-9]*)$/.exec(asked);
  if (pinned?.[1]) return { version: Number(pinned[1]), label: null };
  const labels = await labelsOf(db, prompt.applicationId);
  const label = labels.find((l) => l.name === asked);
  if (!label)
    throw invalidFields({
      version: `is not a label of this app (its labels: ${labels.map((l) => l.name).join(", ") || "none"})`,
    });
  return { version: label.version, label: label.name };
}

/**
 * Evals from a creator's CI (issue 41, docs/decisions/078): `POST /api/v1/apps/{slug}/evals/runs`
 * with an API key of the app's owner (Bearer, as gateway calls), or their sign-in token. The run
 * is the Evals page's run (releases/evals.ts `runEval`), with its bounds: the wallet, the
 * confirmation of a large estimate (409 naming `confirm_cost_micros`), the runs at once (429). The
 * app is found among the caller's own apps only: another owner's app is a 404, as a missing one.
 */
export const evalApiRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  llm: LlmClient;
  secrets: SecretBox;
  feePercent: number;
  publicUrl: string;
  payments: CallPayments;
}> = async (app, { db, guards, llm, secrets, feePercent, publicUrl, payments }) => {
  const callDeps = { db, llm, secrets, feePercent, publicUrl, payments };

  app.post(
    "/apps/:slug/evals/runs",
    {
      schema: {
        tags: ["evals-api"],
        summary:
          "Run an app's eval cases on a version from CI (an API key of the app's owner): answers the finished run, pass or fail per case, its totals and cost",
        description:
          "`version` is a number, `v7` or a label (`production`, `staging`, …). The run is the Evals page's: every case and judge call is the owner's own call, its model cost held from their wallet (402 when it cannot pay the first call); a large estimate needs `confirm_cost_micros` of at least it (409 naming it); at most 2 runs at a time per account (429). An app that is not the key owner's is a 404. `passed` is true when every case passed: the CLI (`promptmint eval`) exits 0 then, 1 otherwise.",
        security: [{ bearerAuth: [] }],
        params: z.object({ slug: z.string().min(1).max(100) }),
        body: StartAppEvalRunSchema,
        response: { 201: AppEvalRunSchema, ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request, reply) => {
      const owner = currentUser(request);
      const [found] = await db
        .select({ app: applications, prompt: prompts })
        .from(applications)
        .leftJoin(prompts, eq(prompts.applicationId, applications.id))
        .where(and(eq(applications.slug, request.params.slug), eq(applications.ownerId, owner.id)))
        .limit(1);
      if (!found) throw notFound("App");
      const { app: application, prompt } = found;
      if (!prompt)
        throw new AppError(
          "conflict",
          `Evals from the API run on prompt apps: '${application.slug}' is a workflow app`,
        );
      const { version, label } = await resolveVersion(db, prompt, request.body.version);
      const run = await runEval(db, {
        owner,
        subject: { kind: "prompt", id: prompt.id },
        body: {
          version,
          judge_model: request.body.judge_model,
          confirm_cost_micros: request.body.confirm_cost_micros,
        },
        feePercent,
        knownModels: KNOWN_MODEL_IDS,
        callCaseFor: (app, v) => evalCaseCaller(callDeps, request, owner, app, v),
        judgeFor: (app, model) => evalJudge(callDeps, request, owner, app, model),
        estimateFor: (app, v) => evalRunEstimator(callDeps, owner, app, v),
        topUpUrl: `${publicUrl}/wallet`,
      });
      const body: AppEvalRun = {
        app: { slug: application.slug, name: application.name },
        version: run.version,
        label,
        passed: run.status === "passed",
        total_cost_micros: (run.results ?? []).reduce(
          (sum, r) => sum + r.cost_micros + r.judge_cost_micros,
          0,
        ),
        url: `${publicUrl}/prompts/${application.slug}/evals?run=${run.id}`,
        run,
      };
      return reply.status(201).send(body);
    },
  );
};
