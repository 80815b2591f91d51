import { type PromptVersion, PromptVersionListSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";

export function promptVersionsQueryKey(promptId: string) {
  return ["prompts", promptId, "versions"] as const;
}

/** `GET /prompts/{id}/versions/`: newest first. */
export function fetchPromptVersions(promptId: string, signal?: AbortSignal): Promise<PromptVersion[]> {
  return apiRequest(`/prompts/${encodeURIComponent(promptId)}/versions/`, {
    schema: PromptVersionListSchema,
    signal,
  });
}

export function promptVersionsQueryOptions(promptId: string) {
  return queryOptions({
    queryKey: promptVersionsQueryKey(promptId),
    queryFn: ({ signal }) => fetchPromptVersions(promptId, signal),
  });
}

export function usePromptVersions(promptId: string) {
  return useQuery(promptVersionsQueryOptions(promptId));
}
