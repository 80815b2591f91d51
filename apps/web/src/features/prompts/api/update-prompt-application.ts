import {
  type Application,
  ApplicationSchema,
  type PromptConfig,
  PromptConfigSchema,
  type UpdateApplication,
  type UpdatePromptConfig,
} from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ApiClientError, apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";

/** SPEC §9: the changelog of every save from the builder and the editor. */
export const UI_CHANGELOG = "Updated via UI";

export interface PromptApplicationUpdate {
  application: UpdateApplication;
  prompt: UpdatePromptConfig;
}

/**
 * Saves an existing prompt app: `PATCH /app/{slug}/`, then `PATCH /app/{slug}/prompt/`. The price
 * guard (docs/decisions/026) judges each request against what is stored, so lowering the price
 * together with max tokens is refused in that order: the app's change was not written, and the
 * prompt is saved first, then the app.
 */
export async function updatePromptApplication(
  slug: string,
  { application, prompt }: PromptApplicationUpdate,
): Promise<{ application: Application; prompt: PromptConfig }> {
  const path = `/app/${encodeURIComponent(slug)}`;
  const saveApp = () =>
    apiRequest(`${path}/`, { method: "PATCH", body: application, schema: ApplicationSchema });
  const savePrompt = () =>
    apiRequest(`${path}/prompt/`, { method: "PATCH", body: prompt, schema: PromptConfigSchema });
  let updated: Application;
  try {
    updated = await saveApp();
  } catch (error) {
    if (!(error instanceof ApiClientError) || !error.fields?.price_cents) throw error;
    const config = await savePrompt();
    return { application: await saveApp(), prompt: config };
  }
  return { application: updated, prompt: await savePrompt() };
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
