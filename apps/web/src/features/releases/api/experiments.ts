import {
  type ExperimentDetail,
  ExperimentDetailSchema,
  ExperimentListSchema,
  ExperimentSchema,
  type StartExperiment,
} from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/**
 * Whose versions an experiment splits traffic between (docs/decisions/058): a prompt app's prompt
 * (`/prompts/{id}/experiments/`) or a workflow app's provider configuration
 * (`/workflows/{id}/experiments/`). The same routes, answers and screen for both.
 */
export interface ExperimentSubject {
  kind: "prompt" | "workflow";
  id: string;
  /** The queries a move of `production` makes stale (the app's labels and versions). */
  stale: readonly (readonly unknown[])[];
}

export function experimentsQueryKey(subject: Pick<ExperimentSubject, "kind" | "id">) {
  return [`${subject.kind}s`, subject.id, "experiments"] as const;
}

const base = (subject: Pick<ExperimentSubject, "kind" | "id">) =>
  `/${subject.kind}s/${encodeURIComponent(subject.id)}/experiments/`;

/** `GET /{prompts|workflows}/{id}/experiments/`: newest first, and the running one. */
const experimentList = defineQuery({
  key: experimentsQueryKey,
  fetch: (subject: Pick<ExperimentSubject, "kind" | "id">, signal) =>
    apiRequest(base(subject), { schema: ExperimentListSchema, signal }),
});
export const useExperiments = (subject: ExperimentSubject) =>
  experimentList.useQuery({ kind: subject.kind, id: subject.id });

/** `GET …/experiments/{eid}`: figures per arm, significance and a series; refreshed while running. */
const experimentDetail = defineQuery({
  key: (subject: Pick<ExperimentSubject, "kind" | "id">, experimentId: string) =>
    [...experimentsQueryKey(subject), experimentId] as const,
  fetch: (subject: Pick<ExperimentSubject, "kind" | "id">, experimentId: string, signal) =>
    apiRequest(`${base(subject)}${encodeURIComponent(experimentId)}`, {
      schema: ExperimentDetailSchema,
      signal,
    }),
});
export const experimentDetailOptions = (subject: ExperimentSubject, experimentId: string) =>
  experimentDetail.options({ kind: subject.kind, id: subject.id }, experimentId);

export function useStartExperiment(subject: ExperimentSubject) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: StartExperiment) =>
      apiRequest(base(subject), { method: "POST", body, schema: ExperimentSchema }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: experimentsQueryKey(subject) }),
  });
}

export type EndAction = { kind: "stop" } | { kind: "rollback" } | { kind: "promote"; version: number };

/** Stop, roll back or promote an arm: one click each; production's labels change with the last two. */
export function useEndExperiment(subject: ExperimentSubject) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({
      experimentId,
      action,
    }: {
      experimentId: string;
      action: EndAction;
    }): Promise<ExperimentDetail> =>
      apiRequest(`${base(subject)}${encodeURIComponent(experimentId)}/${action.kind}`, {
        method: "POST",
        body: action.kind === "promote" ? { version: action.version } : {},
        schema: ExperimentDetailSchema,
      }),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: experimentsQueryKey(subject) }),
        ...subject.stale.map((queryKey) => queryClient.invalidateQueries({ queryKey })),
      ]),
  });
}
