import { PromptConfigSchema } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { apiRequest } from "./api-client";
import { applicationQueryKey } from "./applications-query";
import { defineQuery } from "./define-query";

/** Under the application's key, so invalidating the application refreshes its prompt too. */
export function promptConfigQueryKey(slug: string) {
  return [...applicationQueryKey(slug), "prompt"] as const;
}

/** `GET /app/{slug}/prompt/`: model settings and the active version (workflow apps answer 404). */
const promptConfig = defineQuery({
  key: promptConfigQueryKey,
  fetch: (slug, signal) =>
    apiRequest(`/app/${encodeURIComponent(slug)}/prompt/`, { schema: PromptConfigSchema, signal }),
});

export function usePromptConfig(slug: string, options: { enabled?: boolean } = {}) {
  return useQuery({ ...promptConfig.options(slug), enabled: (options.enabled ?? true) && slug !== "" });
}
