import { EmbedSettingsSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { applicationQueryKey } from "../../../lib/applications-query";
import { defineQuery } from "../../../lib/define-query";

export function embedSettingsQueryKey(slug: string) {
  return [...applicationQueryKey(slug), "embed"] as const;
}

/** `GET /app/{slug}/embed`: the sites allowed to show the app's widget, and its snippet. */
const embedSettings = defineQuery({
  key: embedSettingsQueryKey,
  fetch: (slug, signal) =>
    apiRequest(`/app/${encodeURIComponent(slug)}/embed`, { schema: EmbedSettingsSchema, signal }),
});

export const useEmbedSettings = embedSettings.useQuery;
