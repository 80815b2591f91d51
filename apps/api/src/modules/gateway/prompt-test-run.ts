import { IoSchemaSchema, type TestConfigRequestSchema, type TestRun } from "@promptmint/contracts";
import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { LlmClient } from "../models/llm.ts";
import { generatePaidAnswer, type PaymentDeps, payForCall } from "./call-lifecycle.ts";
import type { ExecutionResult } from "./execution.ts";
import { type PromptDraft, preparePromptExecution } from "./prompt-call.ts";

type TestConfigRequest = z.output<typeof TestConfigRequestSchema>;

export interface PromptTestDeps extends PaymentDeps {
  db: Database;
  llm: LlmClient;
  secrets: SecretBox;
}

/** The editor's test request as a draft over the saved prompt (an unknown model is a 400 naming it). */
export function draftOf(body: TestConfigRequest, knownModels: ReadonlySet<string>): PromptDraft {
  if (body.model !== undefined && !knownModels.has(body.model))
    throw invalidFields({ model: "is not a known model" });
  return {
    model: body.model,
    temperature: body.temperature,
    maxTokens: body.max_tokens,
    topP: body.top_p,
    frequencyPenalty: body.frequency_penalty,
    presencePenalty: body.presence_penalty,
    systemPrompt: body.system_prompt,
    promptTemplate: body.prompt_template,
    inputSchema: body.input_schema ? IoSchemaSchema.parse(body.input_schema) : undefined,
  };
}

/**
 * Test Prompt runs the draft on the model as the owner's own call of their app: the same paid
 * path as the gateway (call-lifecycle.ts; no price, its model cost prepaid from the owner's
 * wallet: 402 when it cannot be, docs/decisions/062). A model that cannot answer
 * is reported in the run, not thrown, so the editor still shows the rendered template; like every
 * paid call that fails, it is recorded as a failed invocation (decision 048).
 */
export async function runPromptTest(
  deps: PromptTestDeps,
  request: FastifyRequest,
  {
    owner,
    application,
    draft,
    inputs,
  }: { owner: LocalUser; application: ApplicationRow; draft: PromptDraft; inputs: Record<string, unknown> },
): Promise<TestRun> {
  const { db, llm, secrets } = deps;
  const input = { inputs, response_mode: "blocking" as const, user: undefined };
  const started = performance.now();
  const failed = (error: AppError, invocationId: string | null, model: string | null): TestRun => ({
    invocation_id: invocationId,
    model,
    answered_by: null,
    sandbox: false,
    answer: null,
    error: error.message,
    input_tokens: 0,
    output_tokens: 0,
    latency_ms: Math.round(performance.now() - started),
    model_cost_micros: 0,
  });

  let execution: Awaited<ReturnType<typeof preparePromptExecution>>;
  try {
    execution = await preparePromptExecution(db, llm, {
      app: application,
      caller: owner,
      input,
      mode: "completion",
      secrets,
      draft,
    });
  } catch (error) {
    if (error instanceof AppError && error.status < 500) return failed(error, null, draft.model ?? null);
    throw error;
  }
  const paid = await payForCall(deps, {
    request,
    caller: owner,
    application,
    execution,
    mode: "completion",
    input,
  });
  let result: ExecutionResult;
  try {
    ({ result } = await generatePaidAnswer(request, paid, execution));
  } catch (error) {
    if (error instanceof AppError) return failed(error, paid.messageId, execution.model);
    throw error;
  }
  return {
    invocation_id: paid.messageId,
    model: execution.model,
    answered_by: result.answeredBy,
    sandbox: result.answeredBy === "sandbox",
    answer: result.answer,
    error: null,
    input_tokens: result.inputTokens,
    output_tokens: result.outputTokens,
    latency_ms: Math.round(performance.now() - paid.started),
    model_cost_micros: result.modelCostMicros ?? 0,
  };
}
