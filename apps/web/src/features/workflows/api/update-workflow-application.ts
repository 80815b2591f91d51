import {
  type Application,
  ApplicationSchema,
  type UpdateApplication,
  type UpdateWorkflowConfig,
  type WorkflowConfig,
  WorkflowConfigSchema,
} from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";
import { releaseQueryKey } from "../../../lib/releases/app-ref";

export interface WorkflowApplicationUpdate {
  application: UpdateApplication;
  workflow: UpdateWorkflowConfig;
}

export interface SavedWorkflowApplication {
  application: Application;
  workflow: WorkflowConfig;
}

/** Saves a workflow app: `PATCH /app/{slug}/`, then `PATCH /app/{slug}/workflow/`. */
export async function updateWorkflowApplication(
  slug: string,
  { application, workflow }: WorkflowApplicationUpdate,
): Promise<SavedWorkflowApplication> {
  const path = `/app/${encodeURIComponent(slug)}`;
  const updated = await apiRequest(`${path}/`, {
    method: "PATCH",
    body: application,
    schema: ApplicationSchema,
  });
  const config = await apiRequest(`${path}/workflow/`, {
    method: "PATCH",
    body: workflow,
    schema: WorkflowConfigSchema,
  });
  return { application: updated, workflow: config };
}

export function useUpdateWorkflowApplication(slug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (update: WorkflowApplicationUpdate) => updateWorkflowApplication(slug, update),
    // Also refreshes this app's workflow (under the application's key) and its versions and labels.
    onSettled: (saved) =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: applicationsQueryKey }),
        ...(saved
          ? [
              queryClient.invalidateQueries({
                queryKey: releaseQueryKey({ kind: "workflow", id: saved.workflow.id }),
              }),
            ]
          : []),
      ]),
  });
}
