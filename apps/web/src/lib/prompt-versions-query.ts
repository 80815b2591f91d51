import { PromptVersionListSchema } from "@promptmint/contracts";
import { apiRequest } from "./api-client";
import { defineQuery } from "./define-query";

export function promptVersionsQueryKey(promptId: string) {
  return ["prompts", promptId, "versions"] as const;
}

/** `GET /prompts/{id}/versions/`: newest first. */
const promptVersions = defineQuery({
  key: promptVersionsQueryKey,
  fetch: (promptId, signal) =>
    apiRequest(`/prompts/${encodeURIComponent(promptId)}/versions/`, {
      schema: PromptVersionListSchema,
      signal,
    }),
});

export const usePromptVersions = promptVersions.useQuery;
