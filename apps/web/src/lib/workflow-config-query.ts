import { WorkflowConfigSchema } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { apiRequest } from "./api-client";
import { applicationQueryKey } from "./applications-query";
import { defineQuery } from "./define-query";

/**
 * `GET /app/{slug}/workflow/`: provider, its settings (secrets masked) and limits; prompt apps
 * answer 404. Under the application's key, so invalidating the application refreshes it too.
 */
const workflowConfig = defineQuery({
  key: (slug: string) => [...applicationQueryKey(slug), "workflow"] as const,
  fetch: (slug, signal) =>
    apiRequest(`/app/${encodeURIComponent(slug)}/workflow/`, { schema: WorkflowConfigSchema, signal }),
});

export function useWorkflowConfig(slug: string, options: { enabled?: boolean } = {}) {
  return useQuery({ ...workflowConfig.options(slug), enabled: (options.enabled ?? true) && slug !== "" });
}
