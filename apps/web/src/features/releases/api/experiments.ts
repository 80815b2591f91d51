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

export function experimentsQueryKey(promptId: string) {
  return ["prompts", promptId, "experiments"] as const;
}

const base = (promptId: string) => `/prompts/${encodeURIComponent(promptId)}/experiments/`;

/** `GET /prompts/{id}/experiments/`: newest first, and the running one. */
const experimentList = defineQuery({
  key: experimentsQueryKey,
  fetch: (promptId: string, signal) => apiRequest(base(promptId), { schema: ExperimentListSchema, signal }),
});
export const useExperiments = experimentList.useQuery;

/** `GET /prompts/{id}/experiments/{eid}`: figures per arm, significance and a series; refreshed while running. */
const experimentDetail = defineQuery({
  key: (promptId: string, experimentId: string) => [...experimentsQueryKey(promptId), experimentId] as const,
  fetch: (promptId: string, experimentId: string, signal) =>
    apiRequest(`${base(promptId)}${encodeURIComponent(experimentId)}`, {
      schema: ExperimentDetailSchema,
      signal,
    }),
});
export const experimentDetailOptions = experimentDetail.options;

export function useStartExperiment(promptId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: StartExperiment) =>
      apiRequest(base(promptId), { method: "POST", body, schema: ExperimentSchema }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: experimentsQueryKey(promptId) }),
  });
}

export type EndAction = { kind: "stop" } | { kind: "rollback" } | { kind: "promote"; version: number };

/** Stop, roll back or promote an arm: one click each; production's labels change with the last two. */
export function useEndExperiment(promptId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({
      experimentId,
      action,
    }: {
      experimentId: string;
      action: EndAction;
    }): Promise<ExperimentDetail> =>
      apiRequest(`${base(promptId)}${encodeURIComponent(experimentId)}/${action.kind}`, {
        method: "POST",
        body: action.kind === "promote" ? { version: action.version } : {},
        schema: ExperimentDetailSchema,
      }),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: experimentsQueryKey(promptId) }),
        queryClient.invalidateQueries({ queryKey: ["prompts", promptId] }),
      ]),
  });
}
