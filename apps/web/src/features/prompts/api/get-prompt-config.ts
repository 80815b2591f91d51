import { type PromptConfig, PromptConfigSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationQueryKey } from "../../../lib/applications-query";

/** Under the application's key, so invalidating the application refreshes its prompt too. */
export function promptConfigQueryKey(slug: string) {
  return [...applicationQueryKey(slug), "prompt"] as const;
}

/** `GET /app/{slug}/prompt/`: model settings and the active version (workflow apps answer 404). */
export function fetchPromptConfig(slug: string, signal?: AbortSignal): Promise<PromptConfig> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/prompt/`, { schema: PromptConfigSchema, signal });
}

export function promptConfigQueryOptions(slug: string) {
  return queryOptions({
    queryKey: promptConfigQueryKey(slug),
    queryFn: ({ signal }) => fetchPromptConfig(slug, signal),
  });
}

export function usePromptConfig(slug: string, options: { enabled?: boolean } = {}) {
  return useQuery({ ...promptConfigQueryOptions(slug), enabled: (options.enabled ?? true) && slug !== "" });
}
