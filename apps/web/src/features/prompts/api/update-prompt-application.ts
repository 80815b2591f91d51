import {
  type SavedPromptApplication,
  SavedPromptApplicationSchema,
  type SavePromptApplication,
} from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";

export type PromptApplicationUpdate = SavePromptApplication;

/**
 * Saves an existing prompt app, its settings (status included) and its prompt, in one request
 * (`PATCH /app/{slug}/prompt-application/`): both are written or neither, so Save & Publish never
 * sets an app live with its old prompt, and the price guard judges the two together
 * (docs/decisions/036).
 */
export function updatePromptApplication(
  slug: string,
  update: PromptApplicationUpdate,
): Promise<SavedPromptApplication> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/prompt-application/`, {
    method: "PATCH",
    body: update,
    schema: SavedPromptApplicationSchema,
  });
}

export function useUpdatePromptApplication(slug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (update: PromptApplicationUpdate) => updatePromptApplication(slug, update),
    // Also refreshes this app's prompt and versions, which live under the application's key.
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: applicationsQueryKey }),
        queryClient.invalidateQueries({ queryKey: ["prompts"] }),
      ]),
  });
}
