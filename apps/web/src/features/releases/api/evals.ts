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
import { type ReleaseAppId, releaseBase, releaseQueryKey } from "../../../lib/releases/app-ref";

/** Everything of one prompt's evals sits under this key: a change refreshes cases, runs and comparisons. */
export function evalsQueryKey(app: ReleaseAppId) {
  return [...releaseQueryKey(app), "evals"] as const;
}

const base = (app: ReleaseAppId) => `${releaseBase(app)}/evals`;

/** `GET {base}/evals/cases`: the cases, and whether production needs a passing run. */
const evalCases = defineQuery({
  key: (app: ReleaseAppId) => [...evalsQueryKey(app), "cases"] as const,
  fetch: (app, signal) => apiRequest(`${base(app)}/cases`, { schema: EvalCaseListSchema, signal }),
});
export function useEvalCases(app: ReleaseAppId) {
  return useQuery({ ...evalCases.options(app), enabled: app.id !== "" });
}

/** `GET {base}/evals/runs`: newest first. */
const evalRuns = defineQuery({
  key: (app: ReleaseAppId) => [...evalsQueryKey(app), "runs"] as const,
  fetch: (app, signal) => apiRequest(`${base(app)}/runs`, { schema: EvalRunListSchema, signal }),
});
export function useEvalRuns(app: ReleaseAppId) {
  return useQuery({ ...evalRuns.options(app), enabled: app.id !== "" });
}

/** `GET {base}/evals/runs/{rid}`: one run with each case's result. */
const evalRun = defineQuery({
  key: (app: ReleaseAppId, runId: string) => [...evalsQueryKey(app), "run", runId] as const,
  fetch: (app, runId, signal) =>
    apiRequest(`${base(app)}/runs/${encodeURIComponent(runId)}`, { schema: EvalRunSchema, signal }),
});
export function useEvalRun(app: ReleaseAppId, runId: string | null) {
  return useQuery({ ...evalRun.options(app, runId ?? ""), enabled: app.id !== "" && !!runId });
}

/** `GET {base}/evals/compare?a=&b=`: two runs case by case. */
const evalComparison = defineQuery({
  key: (app: ReleaseAppId, a: string, b: string) => [...evalsQueryKey(app), "compare", a, b] as const,
  fetch: (app, a, b, signal) =>
    apiRequest(`${base(app)}/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`, {
      schema: EvalComparisonSchema,
      signal,
    }),
});
export function useEvalComparison(app: ReleaseAppId, a: string, b: string) {
  return useQuery({ ...evalComparison.options(app, a, b), enabled: a !== "" && b !== "" && a !== b });
}

export function useSaveEvalCase(app: ReleaseAppId) {
  return useInvalidatingMutation(
    ({ id, body }: { id: string | null; body: EvalCaseInput }): Promise<EvalCase> =>
      apiRequest(id ? `${base(app)}/cases/${encodeURIComponent(id)}` : `${base(app)}/cases`, {
        method: id ? "PATCH" : "POST",
        body,
        schema: EvalCaseSchema,
      }),
    evalsQueryKey(app),
  );
}

export function useDeleteEvalCase(app: ReleaseAppId) {
  return useInvalidatingMutation(
    (id: string) => apiRequest(`${base(app)}/cases/${encodeURIComponent(id)}`, { method: "DELETE" }),
    evalsQueryKey(app),
  );
}

export function useEvalSettings(app: ReleaseAppId) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (required: boolean): Promise<EvalCaseList> =>
      apiRequest(`${base(app)}/settings`, {
        method: "PATCH",
        body: { require_passing_eval: required },
        schema: EvalCaseListSchema,
      }),
    onSuccess: (list) => queryClient.setQueryData([...evalsQueryKey(app), "cases"], list),
  });
}

/**
 * `GET {base}/evals/estimate?version=&judge_model=`: what a run may cost at most, paid from
 * the wallet, and whether it must be confirmed (docs/decisions/062). Under the evals key: a change
 * of the cases refreshes it.
 */
const evalEstimate = defineQuery({
  key: (app: ReleaseAppId, version: number, judge: string) =>
    [...evalsQueryKey(app), "estimate", version, judge] as const,
  fetch: (app, version, judge, signal) =>
    apiRequest(
      `${base(app)}/estimate?version=${version}${judge ? `&judge_model=${encodeURIComponent(judge)}` : ""}`,
      { schema: EvalEstimateSchema, signal },
    ),
});
export function useEvalEstimate(app: ReleaseAppId, version: number, judge: string, enabled: boolean) {
  return useQuery({ ...evalEstimate.options(app, version, judge), enabled: enabled && app.id !== "" });
}

/** `POST {base}/evals/runs`: answers once every case ran. */
export function useStartEvalRun(app: ReleaseAppId) {
  return useInvalidatingMutation(
    (body: StartEvalRun): Promise<EvalRun> =>
      apiRequest(`${base(app)}/runs`, { method: "POST", body, schema: EvalRunSchema }),
    [...evalsQueryKey(app), "runs"],
  );
}
