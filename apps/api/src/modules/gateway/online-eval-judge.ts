import type { FastifyBaseLogger, FastifyRequest } from "fastify";
import type { OnlineJudgeFor } from "../releases/online-evals.ts";
import { evalJudge } from "./eval-call.ts";
import type { PromptTestDeps } from "./prompt-test-run.ts";

/**
 * The rubric judge of online evals (docs/decisions/076): exactly an eval run's judge
 * (eval-call.ts `evalJudge`: the owner's own call of their app, its worst case held from the
 * creator's wallet, its actual cost taken; decision 062), with the daily cap's guard around it.
 * The job runs outside any request: the call is made without an API key, logged to the job's log.
 */
export function onlineEvalJudgeFor(deps: PromptTestDeps, log: FastifyBaseLogger): OnlineJudgeFor {
  const request = {
    log,
    apiKeyScope: undefined,
    apiKeyId: undefined,
    headers: {},
  } as unknown as FastifyRequest;
  return (application, owner, model, guard) => evalJudge(deps, request, owner, application, model, guard);
}
