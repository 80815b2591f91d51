import { type WorkflowProvider, WorkflowProviderListSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";

/** `GET /workflow-providers/`: the providers a workflow app can run on, with their config schemas. */
export function fetchWorkflowProviders(signal?: AbortSignal): Promise<WorkflowProvider[]> {
  return apiRequest("/workflow-providers/", { schema: WorkflowProviderListSchema, signal });
}

export function workflowProvidersQueryOptions() {
  return queryOptions({
    queryKey: ["workflow-providers"] as const,
    queryFn: ({ signal }) => fetchWorkflowProviders(signal),
    // Seeded by the server: they change with a deploy, not while someone edits.
    staleTime: 10 * 60_000,
  });
}

export function useWorkflowProviders() {
  return useQuery(workflowProvidersQueryOptions());
}
