import { type EmbedSettings, EmbedSettingsSchema, type UpdateEmbedSettings } from "@promptmint/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { embedSettingsQueryKey } from "./get-embed-settings";

/** `PUT /app/{slug}/embed`: replaces the allowed origins and/or the spending limits it names. */
export function updateEmbedSettings(slug: string, body: UpdateEmbedSettings): Promise<EmbedSettings> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/embed`, {
    method: "PUT",
    body,
    schema: EmbedSettingsSchema,
  });
}

export function useUpdateEmbedSettings(slug: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: UpdateEmbedSettings) => updateEmbedSettings(slug, body),
    onSuccess: (settings) => queryClient.setQueryData(embedSettingsQueryKey(slug), settings),
  });
}
