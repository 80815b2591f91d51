import { ApplicationListSchema, ApplicationSchema } from "@promptmint/contracts";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { apiRequest } from "./api-client";
import { defineQuery } from "./define-query";

// The caller's applications are read by several features (dashboard, prompts, API test console),
// so their fetchers and cache keys live here, like the profile's. Each feature keeps its own
// mutations and invalidates these keys.

/** Every application query starts with this key; invalidating it refreshes lists and details. */
export const applicationsQueryKey = ["applications"] as const;

export function applicationQueryKey(slug: string) {
  return [...applicationsQueryKey, slug] as const;
}

/** `GET /app/`: the caller's own applications. */
const applications = defineQuery({
  key: () => [...applicationsQueryKey, "list"] as const,
  fetch: (signal) => apiRequest("/app/", { schema: ApplicationListSchema, signal }),
});

/** `GET /app/{slug}/`: one of the caller's applications (another user's answers 404). */
const application = defineQuery({
  key: (slug: string) => [...applicationQueryKey(slug), "detail"] as const,
  fetch: (slug, signal) =>
    apiRequest(`/app/${encodeURIComponent(slug)}/`, { schema: ApplicationSchema, signal }),
});

export function useApplications(options: { enabled?: boolean } = {}) {
  return useQuery({ ...applications.options(), enabled: options.enabled ?? true });
}

export function useApplication(slug: string, options: { enabled?: boolean } = {}) {
  return useQuery({ ...application.options(slug), enabled: slug !== "" && (options.enabled ?? true) });
}

/**
 * Whether the signed-in person sells something: a creator with at least one application. Everyone
 * who signs up gets a creator record, so that alone would show a brand-new person Earnings they
 * cannot have; the nav's Earnings and the wallet's earnings wait for a first app (issue 32).
 */
export function useSellsApps(isCreator: boolean): boolean {
  // The nav joins the list's query when the profile arrives. If the page's own read of the list
  // has already failed, joining would fetch it again and put the page back to "Loading" until that
  // answer came (the error box flickered away): the nav waits for the next read instead.
  const failed = useQueryClient().getQueryState(applications.options().queryKey)?.status === "error";
  const apps = useApplications({ enabled: isCreator && !failed });
  return isCreator && (apps.data?.length ?? 0) > 0;
}
