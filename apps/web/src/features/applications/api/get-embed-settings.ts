import { type EmbedSettings, EmbedSettingsSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { applicationQueryKey } from "../../../lib/applications-query";

export function embedSettingsQueryKey(slug: string) {
  return [...applicationQueryKey(slug), "embed"] as const;
}

/** `GET /app/{slug}/embed`: the sites allowed to show the app's widget, and its snippet. */
export function fetchEmbedSettings(slug: string, signal?: AbortSignal): Promise<EmbedSettings> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/embed`, { schema: EmbedSettingsSchema, signal });
}

export function embedSettingsQueryOptions(slug: string) {
  return queryOptions({
    queryKey: embedSettingsQueryKey(slug),
    queryFn: ({ signal }) => fetchEmbedSettings(slug, signal),
  });
}

export function useEmbedSettings(slug: string) {
  return useQuery(embedSettingsQueryOptions(slug));
}
