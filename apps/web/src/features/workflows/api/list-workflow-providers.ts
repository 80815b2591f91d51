import { WorkflowProviderListSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/** `GET /workflow-providers/`: the providers a workflow app can run on, with their config schemas. */
const workflowProviders = defineQuery({
  key: () => ["workflow-providers"] as const,
  fetch: (signal) => apiRequest("/workflow-providers/", { schema: WorkflowProviderListSchema, signal }),
  // Seeded by the server: they change with a deploy, not while someone edits.
  staleTime: 10 * 60_000,
});

export const useWorkflowProviders = workflowProviders.useQuery;
