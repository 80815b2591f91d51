import { ExperimentSchema, type StartRollout } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { type ExperimentSubject, experimentsQueryKey } from "./experiments";

/**
 * Guarded rollouts (docs/decisions/077): `POST /{prompts|workflows}/{id}/rollouts` starts one and
 * `…/rollouts/current/stop` stops it. A rollout is read as the app's running experiment
 * (`experiment.rollout`), so both refresh the experiments query and the app's release queries.
 */
const base = (subject: Pick<ExperimentSubject, "kind" | "id">) =>
  `/${subject.kind}s/${encodeURIComponent(subject.id)}/rollouts`;

function useRolloutMutation<T>(subject: ExperimentSubject, path: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: T) =>
      apiRequest(`${base(subject)}${path}`, { method: "POST", body, schema: ExperimentSchema }),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: experimentsQueryKey(subject) }),
        ...subject.stale.map((queryKey) => queryClient.invalidateQueries({ queryKey })),
      ]),
  });
}

export const useStartRollout = (subject: ExperimentSubject) => useRolloutMutation<StartRollout>(subject, "");

export const useStopRollout = (subject: ExperimentSubject) =>
  useRolloutMutation<{ reason?: string }>(subject, "/current/stop");

/** `…/rollouts/current/advance`: the next step now, judged by the rollout's bounds (409 with too few calls). */
export const useAdvanceRollout = (subject: ExperimentSubject) =>
  useRolloutMutation<Record<string, never>>(subject, "/current/advance");
