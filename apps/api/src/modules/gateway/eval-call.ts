import type { IoSchema } from "@promptmint/contracts";
import type { FastifyRequest } from "fastify";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { findModel } from "../models/model-catalog.ts";
import { modelCostMicros } from "../models/model-prices.ts";
import { requestWorstCaseMicros, worstCaseInputTokensOf } from "../models/worst-case.ts";
import type { EstimatedCase, EstimateRun, RunCostBound } from "../releases/eval-costs.ts";
import type { CallCase, CaseCallResult, Judge, JudgeVerdict } from "../releases/evals.ts";
import { generatePaidAnswer, payForCall } from "./call-lifecycle.ts";
import type { Execution, ExecutionResult } from "./execution.ts";
import { streamOnce } from "./execution.ts";
import { preparePromptExecution } from "./prompt-call.ts";
import type { PromptTestDeps } from "./prompt-test-run.ts";
import { prepareWorkflowExecution } from "./workflow-call.ts";

/**
 * The calls of an eval run (docs/decisions/059), on the same money rule as Test Prompt
 * (prompt-test-run.ts, decision 056): each case is the owner's own call of their app at the run's
 * version, through the one call lifecycle (decision 048): no price, its worst-case model cost
 * held from the owner's wallet before the vendor is called and its actual cost taken when it is
 * recorded (decision 062). The judge of a rubric is such a call too, on the judge model. No path
 * here charges anyone else. A workflow app's case is the owner's own call of their workflow at the
 * version (its provider configuration): free, as every owner call is, with no model cost of ours
 * to hold (decision 059, "Workflow apps"); only its rubric judges are paid from the wallet.
 */

/** The eval calls' dependencies: a workflow's case calls its provider through `safeFetch`. */
export interface EvalCallDeps extends PromptTestDeps {
  safeFetch?: SafeFetch;
}

/** One case's call prepared as a consumer pinning `v{version}` would get it, by the app's type. */
function prepareCase(
  deps: EvalCallDeps,
  owner: LocalUser,
  application: ApplicationRow,
  version: number,
  input: {
    inputs: Record<string, unknown>;
    query: string | undefined;
    response_mode: "blocking";
    user: undefined;
  },
): Promise<Execution> {
  if (application.type === "workflow") {
    if (!deps.safeFetch) throw new Error("a workflow app's eval case needs the providers' safeFetch");
    return prepareWorkflowExecution(deps.db, {
      app: application,
      caller: owner,
      input,
      mode: "completion",
      secrets: deps.secrets,
      fetch: deps.safeFetch,
      pin: { version },
    });
  }
  return preparePromptExecution(deps.db, deps.llm, {
    app: application,
    caller: owner,
    input,
    mode: "completion",
    secrets: deps.secrets,
    pin: { version },
  });
}

/**
 * The answer length a judge's worst case assumes when the version has no `max_tokens` (a
 * workflow's provider answers as long as it likes): the estimate's bound, not the hold, which is
 * taken on the real answer when the judge is called.
 */
const UNBOUNDED_ANSWER_TOKENS = 4_000;

/** One case on the version pinned by number, as a consumer pinning `v12` would get it. */
export function evalCaseCaller(
  deps: EvalCallDeps,
  request: FastifyRequest,
  owner: LocalUser,
  application: ApplicationRow,
  version: number,
): CallCase {
  return async ({ inputs, query }) => {
    const started = performance.now();
    const input = { inputs, query: query ?? undefined, response_mode: "blocking" as const, user: undefined };
    const failed = (error: unknown, invocationId: string | null): CaseCallResult => {
      if (!(error instanceof AppError)) throw error;
      return {
        output: null,
        error: error.message,
        costMicros: 0,
        latencyMs: Math.round(performance.now() - started),
        inputTokens: 0,
        outputTokens: 0,
        invocationId,
      };
    };
    let execution: Execution;
    try {
      execution = await prepareCase(deps, owner, application, version, input);
    } catch (error) {
      return failed(error, null);
    }
    let paid: Awaited<ReturnType<typeof payForCall>>;
    try {
      // Its worst-case model cost is held from the owner's wallet first (decision 062): a wallet
      // that ran dry is this case's error (402's message), and the run goes on to the next.
      paid = await payForCall(deps, {
        request,
        caller: owner,
        application,
        execution,
        mode: "completion",
        input,
        purpose: "eval",
      });
    } catch (error) {
      return failed(error, null);
    }
    let result: ExecutionResult;
    try {
      ({ result } = await generatePaidAnswer(request, paid, execution));
    } catch (error) {
      return failed(error, paid.messageId);
    }
    return {
      output: result.answer,
      error: null,
      costMicros: result.modelCostMicros ?? 0,
      latencyMs: Math.round(performance.now() - paid.started),
      inputTokens: result.inputTokens,
      outputTokens: result.outputTokens,
      invocationId: paid.messageId,
    };
  };
}

const VERDICT_SCHEMA: IoSchema = {
  type: "object",
  properties: {
    pass: { type: "boolean", description: "Whether the answer meets the rubric" },
    reason: { type: "string", description: "One sentence: why" },
  },
  required: ["pass", "reason"],
  additionalProperties: false,
};

const JUDGE_SYSTEM =
  "You are a strict evaluator of an AI app's answers. You are given a rubric, the inputs the app " +
  "was called with and the app's answer. Decide whether the answer meets the rubric. Answer only " +
  'with one JSON object: {"pass": true or false, "reason": "one sentence"}.';

/** What the judge reads: the rubric, the inputs (and query) and the answer. */
export function judgePrompt(input: Parameters<Judge>[0]): string {
  return [
    `Rubric:\n${input.rubric}`,
    `Inputs:\n${JSON.stringify(input.inputs)}`,
    ...(input.query ? [`Query:\n${input.query}`] : []),
    `Answer:\n${input.output}`,
  ].join("\n\n");
}

/** The judge's JSON answer, read strictly: `pass` a boolean, `reason` a string. */
export function readVerdict(text: string): { pass: boolean; reason: string } {
  const trimmed = text
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/\s*```$/, "");
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    throw new AppError("upstream_failed", "the judge's answer was not JSON");
  }
  const verdict = parsed as { pass?: unknown; reason?: unknown };
  if (typeof verdict?.pass !== "boolean")
    throw new AppError("upstream_failed", 'the judge\'s answer had no boolean "pass"');
  return { pass: verdict.pass, reason: typeof verdict.reason === "string" ? verdict.reason : "" };
}

/**
 * The sandbox judge (offline, no vendor key): the sandbox model cannot read a rubric, so its
 * verdict is decided here, deterministically: the answer must contain every phrase the rubric
 * quotes ("…", case-insensitive); a rubric without quotes passes any non-empty answer.
 */
export function sandboxVerdict(rubric: string, output: string): { pass: boolean; reason: string } {
  const phrases = [...rubric.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string);
  if (phrases.length === 0)
    return output.trim()
      ? {
          pass: true,
          reason:
            "Sandbox judge (offline): the answer is not empty; quote phrases in the rubric to check them",
        }
      : { pass: false, reason: "Sandbox judge (offline): the answer is empty" };
  const missing = phrases.filter((p) => !output.toLowerCase().includes(p.toLowerCase()));
  return missing.length === 0
    ? {
        pass: true,
        reason: `Sandbox judge (offline): the answer contains ${phrases.map((p) => `"${p}"`).join(", ")}`,
      }
    : {
        pass: false,
        reason: `Sandbox judge (offline): the answer lacks ${missing.map((p) => `"${p}"`).join(", ")}`,
      };
}

/**
 * The worst case of a run's calls (decision 062): each case prepared as it will run (its rendered
 * input counted; a case that cannot be prepared makes no call), and each rubric's judge call with
 * the case's answer at its longest (`max_tokens`, with the tokenizer margin) in its input.
 */
export function evalRunEstimator(
  deps: EvalCallDeps,
  owner: LocalUser,
  application: ApplicationRow,
  version: number,
): EstimateRun {
  return async (cases: EstimatedCase[], judgeModel: string | null): Promise<RunCostBound> => {
    const bound: RunCostBound = { totalMicros: 0, largestCallMicros: 0, calls: 0, judgeCalls: 0 };
    const add = (micros: number, judge: boolean) => {
      bound.totalMicros += micros;
      bound.largestCallMicros = Math.max(bound.largestCallMicros, micros);
      if (judge) bound.judgeCalls += 1;
      else bound.calls += 1;
    };
    for (const c of cases) {
      const input = {
        inputs: c.inputs,
        query: c.query ?? undefined,
        response_mode: "blocking" as const,
        user: undefined,
      };
      const execution = await prepareCase(deps, owner, application, version, input).catch(() => undefined);
      if (!execution) continue;
      // A workflow's case has no model cost of ours: its worst case is 0 (an owner call is free).
      add(execution.worstCaseModelCostMicros ?? 0, false);
      for (const rubric of c.rubrics) {
        if (!judgeModel) continue;
        const request = judgeRequest(judgeModel, { rubric, inputs: c.inputs, query: c.query, output: "" });
        const answerTokens = Math.ceil((execution.maxOutputTokens ?? UNBOUNDED_ANSWER_TOKENS) * 1.25);
        const micros =
          judgeWorstCaseMicros(deps.llm, request) === 0
            ? 0
            : modelCostMicros(
                judgeModel,
                {
                  inputTokens: worstCaseInputTokensOf(request) + answerTokens,
                  outputTokens: request.maxTokens,
                },
                new Date(),
              );
        add(micros, true);
      }
    }
    return bound;
  };
}

/** The judge's request for one answer: the rubric, the inputs and the answer, a JSON verdict back. */
function judgeRequest(model: string, input: Parameters<Judge>[0]) {
  return {
    model,
    system: JUDGE_SYSTEM,
    messages: [{ role: "user" as const, content: judgePrompt(input) }],
    temperature: 0,
    maxTokens: 300,
    topP: 1,
    frequencyPenalty: 0,
    presencePenalty: 0,
    outputSchema: VERDICT_SCHEMA,
  };
}

/** The judge's worst case (decision 062): 0 when the sandbox answers (no key for its provider). */
function judgeWorstCaseMicros(
  llm: PromptTestDeps["llm"],
  request: Parameters<typeof requestWorstCaseMicros>[0],
) {
  const provider = findModel(request.model)?.provider;
  return provider && provider !== "sandbox" && llm.isConfigured(provider)
    ? requestWorstCaseMicros(request)
    : 0;
}

/**
 * What an online eval (releases/online-evals.ts, decision 076) wraps around each judge call: its
 * daily cap reserves the call's worst case first (throws to refuse it: no hold, no vendor call),
 * learns the call's invocation id before the vendor is called, and settles what it really cost.
 */
export interface JudgeSpendGuard {
  reserve(worstCaseMicros: number): Promise<void>;
  opened(invocationId: string): Promise<void>;
  settle(worstCaseMicros: number, costMicros: number): Promise<void>;
}

/** The judge of rubric assertions on `model`: an owner's own call of their app (see above). */
export function evalJudge(
  deps: PromptTestDeps,
  request: FastifyRequest,
  owner: LocalUser,
  application: ApplicationRow,
  model: string,
  guard?: JudgeSpendGuard,
): Judge {
  return async (input): Promise<JudgeVerdict> => {
    const llmRequest = judgeRequest(model, input);
    const generate = async (): Promise<ExecutionResult> => {
      const generated = await deps.llm.generate(llmRequest);
      return {
        answer: generated.text,
        inputTokens: generated.inputTokens,
        outputTokens: generated.outputTokens,
        answeredBy: generated.answeredBy,
        modelCostMicros: modelCostMicros(
          generated.answeredBy,
          {
            inputTokens: generated.inputTokens,
            outputTokens: generated.outputTokens,
            cachedInputTokens: generated.cachedInputTokens,
          },
          new Date(),
        ),
      };
    };
    const execution: Execution = {
      model,
      conversation: null,
      inputs: {},
      storeContent: false,
      deadlineSeconds: deps.llm.timeoutSeconds,
      worstCaseModelCostMicros: judgeWorstCaseMicros(deps.llm, llmRequest),
      generate,
      stream: () => streamOnce(generate),
    };
    const callInput = { user: undefined, query: undefined };
    const worstCase = execution.worstCaseModelCostMicros ?? 0;
    await guard?.reserve(worstCase);
    let costMicros = 0;
    try {
      const paid = await payForCall(deps, {
        request,
        caller: owner,
        application,
        execution,
        mode: "completion",
        input: callInput,
        // An online eval's judge is apart from eval runs (decisions 076, 078).
        purpose: guard ? "online_eval" : "eval",
      });
      await guard?.opened(paid.messageId);
      const { result } = await generatePaidAnswer(request, paid, execution);
      costMicros = result.modelCostMicros ?? 0;
      const verdict =
        result.answeredBy === "sandbox"
          ? sandboxVerdict(input.rubric, input.output)
          : readVerdict(result.answer);
      return { ...verdict, costMicros };
    } finally {
      await guard?.settle(worstCase, costMicros);
    }
  };
}
