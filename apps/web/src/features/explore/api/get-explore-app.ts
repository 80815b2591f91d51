import { ExploreAppDetailSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { exploreQueryKey } from "./explore-keys";

/** `GET /explore/apps/{slug}`: a live public app, its inputs and plans (404 for any other). */
const exploreApp = defineQuery({
  key: (slug: string) => [...exploreQueryKey, "detail", slug] as const,
  fetch: (slug, signal) =>
    apiRequest(`/explore/apps/${encodeURIComponent(slug)}`, {
      schema: ExploreAppDetailSchema,
      token: null,
      signal,
    }),
});

export const useExploreApp = exploreApp.useQuery;
