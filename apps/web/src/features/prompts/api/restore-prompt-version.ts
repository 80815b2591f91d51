import { type PromptConfig, PromptConfigSchema } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { promptConfigQueryKey } from "./get-prompt-config";
import { promptVersionsQueryKey } from "./list-prompt-versions";

/** `POST /prompts/{id}/versions/`: the version becomes a new active version. */
export function restorePromptVersion(promptId: string, versionId: string): Promise<PromptConfig> {
  return apiRequest(`/prompts/${encodeURIComponent(promptId)}/versions/`, {
    method: "POST",
    body: { version_id: versionId },
    schema: PromptConfigSchema,
  });
}

export function useRestorePromptVersion(promptId: string, slug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (versionId: string) => restorePromptVersion(promptId, versionId),
    onSuccess: (config) => {
      queryClient.setQueryData(promptConfigQueryKey(slug), config);
      return queryClient.invalidateQueries({ queryKey: promptVersionsQueryKey(promptId) });
    },
  });
}
