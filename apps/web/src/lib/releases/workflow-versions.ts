import { WorkflowLabelsSchema, WorkflowVersionListSchema } from "@promptmint/contracts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../api-client";
import { applicationQueryKey } from "../applications-query";
import { defineQuery } from "../define-query";

/**
 * `GET /workflows/{id}/versions/`: every saved configuration, newest first, with the labels
 * pointing at it. Under the application's key, so a save or a label move refreshes it.
 */
const workflowVersions = defineQuery({
  key: (slug: string, workflowId: string) =>
    [...applicationQueryKey(slug), "workflow", "versions", workflowId] as const,
  fetch: (_slug, workflowId, signal) =>
    apiRequest(`/workflows/${encodeURIComponent(workflowId)}/versions/`, {
      schema: WorkflowVersionListSchema,
      signal,
    }),
});

export function useWorkflowVersions(slug: string, workflowId: string) {
  return useQuery(workflowVersions.options(slug, workflowId));
}

/**
 * `PUT /workflows/{id}/labels/production`: what callers get becomes `version` at once, a release
 * or a rollback, audited by the server. Refreshes the app's workflow and versions.
 */
export function useMoveWorkflowProduction(slug: string, workflowId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ version, reason }: { version: number; reason?: string }) =>
      apiRequest(`/workflows/${encodeURIComponent(workflowId)}/labels/production`, {
        method: "PUT",
        body: { version, ...(reason ? { reason } : {}) },
        schema: WorkflowLabelsSchema,
      }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: applicationQueryKey(slug) }),
  });
}
