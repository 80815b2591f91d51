import { type MoveLabel, type PromptLabels, PromptLabelsSchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../api-client";
import { applicationsQueryKey } from "../applications-query";
import { defineQuery } from "../define-query";
import { type ReleaseApp, releaseBase, releaseQueryKey } from "./app-ref";

type AppId = Pick<ReleaseApp, "kind" | "id">;

export function labelsQueryKey(app: AppId) {
  return [...releaseQueryKey(app), "labels"] as const;
}

function labelsPath(app: AppId, name?: string) {
  const base = `${releaseBase(app)}/labels/`;
  return name === undefined ? base : `${base}${encodeURIComponent(name)}`;
}

/** `GET {base}/labels/`: where each label points and every move of one, newest first. */
const appLabels = defineQuery({
  key: labelsQueryKey,
  fetch: (app: AppId, signal) => apiRequest(labelsPath(app), { schema: PromptLabelsSchema, signal }),
});

export const useLabels = (app: AppId) => appLabels.useQuery({ kind: app.kind, id: app.id });

export interface LabelMoveRequest extends MoveLabel {
  name: string;
  /**
   * Moving `production` while an experiment runs: end it (outcome stopped) in the same step. Without
   * it the server refuses with 409 `experiment_running` (docs/decisions/075).
   */
  end_experiment?: boolean;
}

/**
 * A label move changes what callers get (production), the versions' chips, the audit list, the
 * serving state and the app's config (its production version): all of them are refetched.
 */
function useLabelMutation<Variables>(
  app: AppId,
  mutationFn: (variables: Variables) => Promise<PromptLabels>,
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: (labels) => {
      queryClient.setQueryData(labelsQueryKey(app), labels);
      return Promise.all([
        queryClient.invalidateQueries({ queryKey: releaseQueryKey(app) }),
        queryClient.invalidateQueries({ queryKey: applicationsQueryKey }),
      ]);
    },
  });
}

/** `PUT {base}/labels/{name}`: point a label at a version; `production` is a release or a rollback. */
export function useMoveLabel(app: AppId) {
  return useLabelMutation(app, ({ name, version, reason, end_experiment }: LabelMoveRequest) =>
    apiRequest(labelsPath(app, name), {
      method: "PUT",
      body: {
        version,
        ...(reason?.trim() ? { reason: reason.trim() } : {}),
        ...(end_experiment ? { end_experiment: true } : {}),
      },
      schema: PromptLabelsSchema,
    }),
  );
}

/** `DELETE {base}/labels/{name}`: remove one of the creator's own labels. */
export function useRemoveLabel(app: AppId) {
  return useLabelMutation(app, (name: string) =>
    apiRequest(labelsPath(app, name), { method: "DELETE", schema: PromptLabelsSchema }),
  );
}
