import { ExploreAppListSchema, type ExploreQuery } from "@promptmint/contracts";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { exploreQueryKey } from "./explore-keys";

/** `GET /explore/apps`: the live public apps matching the search and filters (no sign-in needed). */
function fetchExploreApps(query: ExploreQuery, signal: AbortSignal) {
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

const exploreApps = defineQuery({
  key: (query: ExploreQuery) => [...exploreQueryKey, "list", query] as const,
  fetch: fetchExploreApps,
});

/** Keeps the last page on screen while the next search loads. */
export function useExploreApps(query: ExploreQuery) {
  return useQuery({ ...exploreApps.options(query), placeholderData: keepPreviousData });
}
