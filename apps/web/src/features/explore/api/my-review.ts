import { MyReviewSchema, type Review, type ReviewInput, ReviewSchema } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { exploreQueryKey } from "./explore-keys";

const mine = (slug: string) => `/explore/apps/${encodeURIComponent(slug)}/reviews/mine`;

/** `GET /explore/apps/{slug}/reviews/mine`: the signed-in person's review and whether they may write one. */
const myReview = defineQuery({
  key: (slug: string) => [...exploreQueryKey, "my-review", slug] as const,
  fetch: (slug, signal) => apiRequest(mine(slug), { schema: MyReviewSchema, signal }),
});

/** Asked only for a signed-in person (visitors cannot review). */
export function useMyReview(slug: string, signedIn: boolean) {
  return useQuery({ ...myReview.options(slug), enabled: signedIn });
}

/**
 * `PUT …/reviews/mine` and `DELETE …/reviews/mine`: writing, rewriting or deleting the person's
 * review changes the app's reviews, its rating on Explore and the person's own review: every
 * Explore query is refetched.
 */
export function useSaveMyReview(slug: string) {
  return useInvalidatingMutation(
    (body: ReviewInput): Promise<Review> =>
      apiRequest(mine(slug), { method: "PUT", body, schema: ReviewSchema }),
    exploreQueryKey,
  );
}

export function useDeleteMyReview(slug: string) {
  return useInvalidatingMutation(
    (): Promise<unknown> => apiRequest(mine(slug), { method: "DELETE" }),
    exploreQueryKey,
  );
}

/** `PUT …/reviews/{id}/reply`: the app's creator answers a review, once. */
export function useReplyToReview(slug: string) {
  return useInvalidatingMutation(
    ({ reviewId, reply }: { reviewId: string; reply: string }): Promise<Review> =>
      apiRequest(`/explore/apps/${encodeURIComponent(slug)}/reviews/${encodeURIComponent(reviewId)}/reply`, {
        method: "PUT",
        body: { reply },
        schema: ReviewSchema,
      }),
    exploreQueryKey,
  );
}
