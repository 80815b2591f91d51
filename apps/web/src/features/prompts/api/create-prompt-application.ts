import {
  type Application,
  ApplicationSchema,
  type AppStatus,
  type CreateApplication,
  PromptConfigSchema,
  type UpdatePromptConfig,
} from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationsQueryKey } from "../../../lib/applications-query";

export interface NewPromptApplication {
  application: CreateApplication;
  status: AppStatus;
  prompt: UpdatePromptConfig;
}

/** The app was created but a later step failed: the builder continues on the edit screen. */
export class PromptSaveIncompleteError extends Error {
  readonly slug: string;
  constructor(slug: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : "The prompt could not be saved", { cause });
    this.name = "PromptSaveIncompleteError";
    this.slug = slug;
  }
}

/**
 * The builder's first save: `POST /app/` (with the chosen slug), the prompt
 * (`PATCH /app/{slug}/prompt/`), then the status if it is not the default draft
 * (`PATCH /app/{slug}/update_status/`).
 */
export async function createPromptApplication({
  application,
  status,
  prompt,
}: NewPromptApplication): Promise<Application> {
  const created = await apiRequest("/app/", { method: "POST", body: application, schema: ApplicationSchema });
  const path = `/app/${encodeURIComponent(created.slug)}`;
  try {
    // The prompt before the status: publishing is judged by the price guard against the prompt
    // the app will run (docs/decisions/026), not the starter prompt it was created with.
    await apiRequest(`${path}/prompt/`, { method: "PATCH", body: prompt, schema: PromptConfigSchema });
    let current = created;
    if (status !== created.status) {
      current = await apiRequest(`${path}/update_status/`, {
        method: "PATCH",
        body: { status },
        schema: ApplicationSchema,
      });
    }
    return current;
  } catch (error) {
    throw new PromptSaveIncompleteError(created.slug, error);
  }
}

export function useCreatePromptApplication() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createPromptApplication,
    onSettled: () => queryClient.invalidateQueries({ queryKey: applicationsQueryKey }),
  });
}
