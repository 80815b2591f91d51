import { DifyFileSchema, MaxPriceCentsSchema } from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { currentUser } from "../auth/authenticate.ts";
import { callerOrAgent, findAppForCall, findOwnCall } from "./access.ts";
import type { CallMeta, CallPresenter, EndedCall } from "./call-lifecycle.ts";
import { DifyError, errorEvent, notWorkflowApp, refuseUnsupportedFields } from "./dify-errors.ts";
import {
  gatewayErrors as errors,
  PaymentRequiredSchema,
  ResultSchema,
  SlugParams,
  gatewaySecurity as security,
  gatewayTags as tags,
  UserBody,
} from "./dify-schemas.ts";
import type { ExecutionResult } from "./execution.ts";
import {
  type createGatewayCall,
  DIFY_PING,
  difyEvents,
  type GatewayDeps,
  taskOwner,
  usageOf,
} from "./gateway-call.ts";
import { maxPriceOf } from "./max-price.ts";
import { rateLimitHook } from "./rate-limit.ts";
import type { RunningTasks } from "./running-tasks.ts";

const WorkflowRunRequestSchema = z.strictObject({
  inputs: z.record(z.string(), z.unknown()),
  response_mode: z.enum(["blocking", "streaming"]).default("blocking"),
  user: z.string().max(256).optional(),
  files: z.array(DifyFileSchema).max(20).nullish(),
  trace_id: z.string().max(200).optional(),
  max_price_cents: MaxPriceCentsSchema.optional(),
});

const RunDataSchema = z.object({
  id: z.string(),
  workflow_id: z.string(),
  status: z.enum(["running", "succeeded", "failed", "stopped"]),
  outputs: z.record(z.string(), z.unknown()).nullable(),
  error: z.string().nullable(),
  elapsed_time: z.number(),
  total_tokens: z.number().int(),
  total_steps: z.number().int(),
  created_at: z.number().int(),
  finished_at: z.number().int().nullable(),
});
const WorkflowRunResponseSchema = z.object({
  workflow_run_id: z.string(),
  task_id: z.string(),
  data: RunDataSchema,
  /** Promptmint's own: what the run cost (the same usage as a message's). */
  metadata: z.object({ usage: z.record(z.string(), z.unknown()) }).optional(),
});
type WorkflowRunResponse = z.infer<typeof WorkflowRunResponseSchema>;

const TaskParams = SlugParams.extend({ task_id: z.string().max(100) });

/**
 * Dify's workflow run for workflow apps (`/info` says `mode: workflow`): the same paid call as a
 * completion (gateway-call.ts), answered as a run: its answer is the output `answer`, streamed
 * as `workflow_started`, `text_chunk`s and `workflow_finished`.
 */
export const workflowRunRoutes: FastifyPluginAsyncZod<
  GatewayDeps & { runCall: ReturnType<typeof createGatewayCall>; tasks: RunningTasks }
> = async (app, deps) => {
  const { db, guards, runCall, tasks } = deps;

  async function workflowApp(slug: string, caller: LocalUser): Promise<ApplicationRow> {
    const application = await findCallableApp(db, slug, caller);
    if (application.type !== "workflow") throw notWorkflowApp();
    return application;
  }

  app.post(
    "/app/:slug/workflows/run",
    {
      schema: {
        tags,
        summary: "Run a workflow app (Dify compatible, blocking or streaming)",
        security,
        params: SlugParams,
        body: WorkflowRunRequestSchema,
        response: { 200: WorkflowRunResponseSchema, ...errors, 402: PaymentRequiredSchema },
      },
      onRequest: [callerOrAgent(deps), rateLimitHook(deps.rateLimiter), deps.admission.hook],
    },
    async (request, reply) => {
      const { max_price_cents, files, ...input } = request.body;
      const maxPriceCents = maxPriceOf(request, max_price_cents);
      const { application } = await findAppForCall(
        deps,
        request,
        request.params.slug,
        (found) => {
          if (found.type !== "workflow") throw notWorkflowApp();
        },
        reply,
      );
      refuseUnsupportedFields({ files });
      return runCall(request, reply, {
        application,
        mode: "completion",
        input,
        maxPriceCents,
        presenter: workflowRun(application, input.inputs),
      });
    },
  );

  app.get(
    "/app/:slug/workflows/run/:workflow_run_id",
    {
      schema: {
        tags,
        summary: "One of your workflow runs: its status, tokens and time (Dify compatible)",
        description:
          "Promptmint keeps no content of a run: `inputs` and `outputs` are null here (the run's answer came in its response).",
        security,
        params: SlugParams.extend({ workflow_run_id: z.string().max(100) }),
        response: {
          200: RunDataSchema.omit({ outputs: true }).extend({ inputs: z.null(), outputs: z.null() }),
          ...errors,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await workflowApp(request.params.slug, caller);
      const runId = request.params.workflow_run_id;
      const run = await findOwnCall(db, application, caller, runId);
      if (!run) throw new DifyError("not_found", "not_found", "Workflow Run Not Exists.");
      const createdAt = Math.floor(run.createdAt.getTime() / 1000);
      return {
        id: run.id,
        workflow_id: application.id,
        status: run.status === "success" ? ("succeeded" as const) : ("failed" as const),
        inputs: null,
        outputs: null,
        error: run.errorMessage,
        elapsed_time: run.latencyMs / 1000,
        total_tokens: run.inputTokens + run.outputTokens,
        total_steps: 1,
        created_at: createdAt,
        finished_at: createdAt + Math.ceil(run.latencyMs / 1000),
      };
    },
  );

  app.post(
    "/app/:slug/workflows/tasks/:task_id/stop",
    {
      schema: {
        tags,
        summary: "Stop a streaming workflow run (Dify compatible)",
        description:
          "Stops your own streamed run in progress, charged like a stream you hung up on (nothing before any content).",
        security,
        params: TaskParams,
        body: UserBody,
        response: { 200: ResultSchema, ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await workflowApp(request.params.slug, caller);
      tasks.stop(request.params.task_id, taskOwner(caller.id, application.id, request.body?.user));
      return { result: "success" as const };
    },
  );
};

/** A paid call presented as Dify's workflow run: its answer is the output `answer`. */
function workflowRun(
  application: ApplicationRow,
  inputs: Record<string, unknown>,
): CallPresenter<WorkflowRunResponse> {
  const ids = (call: CallMeta) => ({ task_id: call.messageId, workflow_run_id: call.messageId });
  const data = (result: ExecutionResult, call: EndedCall): WorkflowRunResponse["data"] => ({
    id: call.messageId,
    workflow_id: application.id,
    status: call.stopped ? "stopped" : "succeeded",
    outputs: { answer: result.answer },
    error: null,
    elapsed_time: Math.round(call.latencyMs) / 1000,
    total_tokens: result.inputTokens + result.outputTokens,
    total_steps: 1,
    created_at: call.createdAt,
    finished_at: Math.floor(Date.now() / 1000),
  });
  const usage = (result: ExecutionResult, call: EndedCall) => ({
    usage: usageOf(result, call.latencyMs, call.charge),
  });
  return {
    body: (result, call) => ({ ...ids(call), data: data(result, call), metadata: usage(result, call) }),
    storedUsage: (body) => body.metadata?.usage,
    streamStart: (call) =>
      difyEvents({
        event: "workflow_started",
        ...ids(call),
        data: { id: call.messageId, workflow_id: application.id, inputs, created_at: call.createdAt },
      }),
    streamChunk: (text, call) =>
      difyEvents({ event: "text_chunk", ...ids(call), data: { text, from_variable_selector: ["answer"] } }),
    streamEnd: (result, call) =>
      difyEvents({
        event: "workflow_finished",
        ...ids(call),
        data: data(result, call),
        metadata: usage(result, call),
      }),
    streamError: (error, call) => difyEvents(errorEvent(error, ids(call))),
    replayStream: (body) => difyEvents({ event: "workflow_finished", ...body }),
    ping: DIFY_PING,
  };
}
