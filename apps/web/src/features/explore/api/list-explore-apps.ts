import { type ExploreAppList, ExploreAppListSchema, type ExploreQuery } from "@promptmint/contracts";
import { keepPreviousData, queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { exploreQueryKey } from "./explore-keys";

/** `GET /explore/apps`: the live public apps matching the search and filters (no sign-in needed). */
export function fetchExploreApps(query: ExploreQuery, signal?: AbortSignal): Promise<ExploreAppList> {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== "") params.set(name, String(value));
  }
  const search = params.toString();
  return apiRequest(`/explore/apps${search ? `?${search}` : ""}`, {
    schema: ExploreAppListSchema,
    token: null,
    signal,
  });
}

export function exploreAppsQueryOptions(query: ExploreQuery) {
  return queryOptions({
    queryKey: [...exploreQueryKey, "list", query] as const,
    queryFn: ({ signal }) => fetchExploreApps(query, signal),
  });
}

/** Keeps the last page on screen while the next search loads. */
export function useExploreApps(query: ExploreQuery) {
  return useQuery({ ...exploreAppsQueryOptions(query), placeholderData: keepPreviousData });
}
