import {
  type Application,
  ApplicationSchema,
  type PromptConfig,
  PromptConfigSchema,
  type UpdateApplication,
  type UpdatePromptConfig,
} from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";

/** SPEC §9: the changelog of every save from the builder and the editor. */
export const UI_CHANGELOG = "Updated via UI";

export interface PromptApplicationUpdate {
  application: UpdateApplication;
  prompt: UpdatePromptConfig;
}

/** Saves an existing prompt app: `PATCH /app/{slug}/`, then `PATCH /app/{slug}/prompt/`. */
export async function updatePromptApplication(
  slug: string,
  { application, prompt }: PromptApplicationUpdate,
): Promise<{ application: Application; prompt: PromptConfig }> {
  const path = `/app/${encodeURIComponent(slug)}`;
  const updated = await apiRequest(`${path}/`, {
    method: "PATCH",
    body: application,
    schema: ApplicationSchema,
  });
  const config = await apiRequest(`${path}/prompt/`, {
    method: "PATCH",
    body: prompt,
    schema: PromptConfigSchema,
  });
  return { application: updated, prompt: config };
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
