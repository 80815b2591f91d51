import { type ExploreAppDetail, ExploreAppDetailSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { exploreQueryKey } from "./explore-keys";

/** `GET /explore/apps/{slug}`: a live public app, its inputs and plans (404 for any other). */
export function fetchExploreApp(slug: string, signal?: AbortSignal): Promise<ExploreAppDetail> {
  return apiRequest(`/explore/apps/${encodeURIComponent(slug)}`, {
    schema: ExploreAppDetailSchema,
    token: null,
    signal,
  });
}

export function exploreAppQueryOptions(slug: string) {
  return queryOptions({
    queryKey: [...exploreQueryKey, "detail", slug] as const,
    queryFn: ({ signal }) => fetchExploreApp(slug, signal),
  });
}

export function useExploreApp(slug: string) {
  return useQuery(exploreAppQueryOptions(slug));
}
