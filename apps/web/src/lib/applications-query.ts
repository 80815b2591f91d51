import { type Application, ApplicationListSchema, ApplicationSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "./api-client";

// The caller's applications are read by several features (dashboard, prompts, API test console),
// so their fetchers and cache keys live here, like the profile's. Each feature keeps its own
// mutations and invalidates these keys.

/** Every application query starts with this key; invalidating it refreshes lists and details. */
export const applicationsQueryKey = ["applications"] as const;

export function applicationQueryKey(slug: string) {
  return [...applicationsQueryKey, slug] as const;
}

/** `GET /app/`: the caller's own applications. */
export function fetchApplications(signal?: AbortSignal): Promise<Application[]> {
  return apiRequest("/app/", { schema: ApplicationListSchema, signal });
}

/** `GET /app/{slug}/`: one of the caller's applications (another user's answers 404). */
export function fetchApplication(slug: string, signal?: AbortSignal): Promise<Application> {
  return apiRequest(`/app/${encodeURIComponent(slug)}/`, { schema: ApplicationSchema, signal });
}

export function applicationsQueryOptions() {
  return queryOptions({
    queryKey: [...applicationsQueryKey, "list"] as const,
    queryFn: ({ signal }) => fetchApplications(signal),
  });
}

export function applicationQueryOptions(slug: string) {
  return queryOptions({
    queryKey: [...applicationQueryKey(slug), "detail"] as const,
    queryFn: ({ signal }) => fetchApplication(slug, signal),
  });
}

export function useApplications(options: { enabled?: boolean } = {}) {
  return useQuery({ ...applicationsQueryOptions(), enabled: options.enabled ?? true });
}

export function useApplication(slug: string) {
  return useQuery({ ...applicationQueryOptions(slug), enabled: slug !== "" });
}
