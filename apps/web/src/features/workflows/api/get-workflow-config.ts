import { type WorkflowConfig, WorkflowConfigSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationQueryKey } from "../../../lib/applications-query";

/** Under the application's key, so invalidating the application refreshes its workflow too. */
export function workflowConfigQueryKey(slug: string) {
  return [...applicationQueryKey(slug), "workflow"] as const;
}

/** `GET /app/{slug}/workflow/`: provider, its settings (secrets masked) and limits; prompt apps answer 404. */
export function fetchWorkflowConfig(slug: string, signal?: AbortSignal): Promise<WorkflowConfig> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/workflow/`, { schema: WorkflowConfigSchema, signal });
}

export function workflowConfigQueryOptions(slug: string) {
  return queryOptions({
    queryKey: workflowConfigQueryKey(slug),
    queryFn: ({ signal }) => fetchWorkflowConfig(slug, signal),
  });
}

export function useWorkflowConfig(slug: string, options: { enabled?: boolean } = {}) {
  return useQuery({ ...workflowConfigQueryOptions(slug), enabled: (options.enabled ?? true) && slug !== "" });
}
