import {
  type EvalCase,
  type EvalCaseInput,
  type EvalCaseList,
  EvalCaseListSchema,
  EvalCaseSchema,
  EvalComparisonSchema,
  EvalEstimateSchema,
  type EvalRun,
  EvalRunListSchema,
  EvalRunSchema,
  type StartEvalRun,
} from "@promptmint/contracts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";

/** Everything of one prompt's evals sits under this key: a change refreshes cases, runs and comparisons. */
export function evalsQueryKey(promptId: string) {
  return ["prompts", promptId, "evals"] as const;
}

const base = (promptId: string) => `/prompts/${encodeURIComponent(promptId)}/evals`;

/** `GET /prompts/{id}/evals/cases`: the cases, and whether production needs a passing run. */
const evalCases = defineQuery({
  key: (promptId: string) => [...evalsQueryKey(promptId), "cases"] as const,
  fetch: (promptId, signal) => apiRequest(`${base(promptId)}/cases`, { schema: EvalCaseListSchema, signal }),
});
export function useEvalCases(promptId: string) {
  return useQuery({ ...evalCases.options(promptId), enabled: promptId !== "" });
}

/** `GET /prompts/{id}/evals/runs`: newest first. */
const evalRuns = defineQuery({
  key: (promptId: string) => [...evalsQueryKey(promptId), "runs"] as const,
  fetch: (promptId, signal) => apiRequest(`${base(promptId)}/runs`, { schema: EvalRunListSchema, signal }),
});
export function useEvalRuns(promptId: string) {
  return useQuery({ ...evalRuns.options(promptId), enabled: promptId !== "" });
}

/** `GET /prompts/{id}/evals/runs/{rid}`: one run with each case's result. */
const evalRun = defineQuery({
  key: (promptId: string, runId: string) => [...evalsQueryKey(promptId), "run", runId] as const,
  fetch: (promptId, runId, signal) =>
    apiRequest(`${base(promptId)}/runs/${encodeURIComponent(runId)}`, { schema: EvalRunSchema, signal }),
});
export function useEvalRun(promptId: string, runId: string | null) {
  return useQuery({ ...evalRun.options(promptId, runId ?? ""), enabled: promptId !== "" && !!runId });
}

/** `GET /prompts/{id}/evals/compare?a=&b=`: two runs case by case. */
const evalComparison = defineQuery({
  key: (promptId: string, a: string, b: string) => [...evalsQueryKey(promptId), "compare", a, b] as const,
  fetch: (promptId, a, b, signal) =>
    apiRequest(`${base(promptId)}/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`, {
      schema: EvalComparisonSchema,
      signal,
    }),
});
export function useEvalComparison(promptId: string, a: string, b: string) {
  return useQuery({ ...evalComparison.options(promptId, a, b), enabled: a !== "" && b !== "" && a !== b });
}

export function useSaveEvalCase(promptId: string) {
  return useInvalidatingMutation(
    ({ id, body }: { id: string | null; body: EvalCaseInput }): Promise<EvalCase> =>
      apiRequest(id ? `${base(promptId)}/cases/${encodeURIComponent(id)}` : `${base(promptId)}/cases`, {
        method: id ? "PATCH" : "POST",
        body,
        schema: EvalCaseSchema,
      }),
    evalsQueryKey(promptId),
  );
}

export function useDeleteEvalCase(promptId: string) {
  return useInvalidatingMutation(
    (id: string) => apiRequest(`${base(promptId)}/cases/${encodeURIComponent(id)}`, { method: "DELETE" }),
    evalsQueryKey(promptId),
  );
}

export function useEvalSettings(promptId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (required: boolean): Promise<EvalCaseList> =>
      apiRequest(`${base(promptId)}/settings`, {
        method: "PATCH",
        body: { require_passing_eval: required },
        schema: EvalCaseListSchema,
      }),
    onSuccess: (list) => queryClient.setQueryData([...evalsQueryKey(promptId), "cases"], list),
  });
}

/**
 * `GET /prompts/{id}/evals/estimate?version=&judge_model=`: what a run may cost at most, paid from
 * the wallet, and whether it must be confirmed (docs/decisions/062). Under the evals key: a change
 * of the cases refreshes it.
 */
const evalEstimate = defineQuery({
  key: (promptId: string, version: number, judge: string) =>
    [...evalsQueryKey(promptId), "estimate", version, judge] as const,
  fetch: (promptId, version, judge, signal) =>
    apiRequest(
      `${base(promptId)}/estimate?version=${version}${judge ? `&judge_model=${encodeURIComponent(judge)}` : ""}`,
      { schema: EvalEstimateSchema, signal },
    ),
});
export function useEvalEstimate(promptId: string, version: number, judge: string, enabled: boolean) {
  return useQuery({ ...evalEstimate.options(promptId, version, judge), enabled: enabled && promptId !== "" });
}

/** `POST /prompts/{id}/evals/runs`: answers once every case ran. */
export function useStartEvalRun(promptId: string) {
  return useInvalidatingMutation(
    (body: StartEvalRun): Promise<EvalRun> =>
      apiRequest(`${base(promptId)}/runs`, { method: "POST", body, schema: EvalRunSchema }),
    [...evalsQueryKey(promptId), "runs"],
  );
}
