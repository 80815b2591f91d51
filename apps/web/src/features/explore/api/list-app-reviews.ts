import { ReviewListSchema } from "@promptmint/contracts";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { exploreQueryKey } from "./explore-keys";

/** `GET /explore/apps/{slug}/reviews`: newest first, with the app's average rating (no sign-in needed). */
const appReviews = defineQuery({
  key: (slug: string, page: number) => [...exploreQueryKey, "reviews", slug, page] as const,
  fetch: (slug, page, signal) =>
    apiRequest(`/explore/apps/${encodeURIComponent(slug)}/reviews${page > 1 ? `?page=${page}` : ""}`, {
      schema: ReviewListSchema,
      token: null,
      signal,
    }),
});

/** Keeps the last page on screen while the next loads. */
export function useAppReviews(slug: string, page: number) {
  return useQuery({ ...appReviews.options(slug, page), placeholderData: keepPreviousData });
}
