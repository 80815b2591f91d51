import { type MoveLabel, type PromptLabels, PromptLabelsSchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";
import { defineQuery } from "../../../lib/define-query";

export function promptLabelsQueryKey(promptId: string) {
  return ["prompts", promptId, "labels"] as const;
}

function labelsPath(promptId: string, name?: string) {
  const base = `/prompts/${encodeURIComponent(promptId)}/labels/`;
  return name === undefined ? base : `${base}${encodeURIComponent(name)}`;
}

/** `GET /prompts/{id}/labels/`: where each label points and every move of one, newest first. */
const promptLabels = defineQuery({
  key: promptLabelsQueryKey,
  fetch: (promptId, signal) => apiRequest(labelsPath(promptId), { schema: PromptLabelsSchema, signal }),
});

export const usePromptLabels = promptLabels.useQuery;

export interface LabelMoveRequest extends MoveLabel {
  name: string;
}

/**
 * A label move changes what callers get (production), the versions' chips, the audit list and
 * the app's prompt config (its production version): all of them are refetched.
 */
function useLabelMutation<Variables>(
  promptId: string,
  mutationFn: (variables: Variables) => Promise<PromptLabels>,
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: (labels) => {
      queryClient.setQueryData(promptLabelsQueryKey(promptId), labels);
      return Promise.all([
        queryClient.invalidateQueries({ queryKey: ["prompts", promptId] }),
        queryClient.invalidateQueries({ queryKey: applicationsQueryKey }),
      ]);
    },
  });
}

/** `PUT /prompts/{id}/labels/{name}`: point a label at a version; `production` is a release or a rollback. */
export function useMoveLabel(promptId: string) {
  return useLabelMutation(promptId, ({ name, version, reason }: LabelMoveRequest) =>
    apiRequest(labelsPath(promptId, name), {
      method: "PUT",
      body: { version, ...(reason?.trim() ? { reason: reason.trim() } : {}) },
      schema: PromptLabelsSchema,
    }),
  );
}

/** `DELETE /prompts/{id}/labels/{name}`: remove one of the creator's own labels. */
export function useRemoveLabel(promptId: string) {
  return useLabelMutation(promptId, (name: string) =>
    apiRequest(labelsPath(promptId, name), { method: "DELETE", schema: PromptLabelsSchema }),
  );
}
