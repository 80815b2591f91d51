import { z } from "zod";

/** The longest review text (and creator reply), in characters. */
export const REVIEW_MAX_LENGTH = 2000;
export const REVIEWS_PAGE_SIZE = 20;

/** `PUT /explore/apps/{slug}/reviews/mine`: a buyer's rating, 1 to 5 stars, and optional text. */
export const ReviewInputSchema = z.strictObject({
  rating: z
    .number({ error: "must be a whole number from 1 to 5" })
    .int("must be a whole number from 1 to 5")
    .min(1, "must be at least 1")
    .max(5, "must be at most 5"),
  body: z
    .string({ error: "must be text" })
    .trim()
    .max(REVIEW_MAX_LENGTH, `must be at most ${REVIEW_MAX_LENGTH} characters`)
    .default(""),
});
export type ReviewInput = z.input<typeof ReviewInputSchema>;

/** A review as anyone may read it: the author's display name only, never their id or email. */
export const ReviewSchema = z.object({
  id: z.string(),
  rating: z.number().int(),
  body: z.string(),
  author_name: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  /** The app's creator's answer, if any. */
  reply: z.string().nullable(),
  replied_at: z.string().nullable(),
});
export type Review = z.infer<typeof ReviewSchema>;

/** An app's rating as Explore shows it: the plain average of its reviews (null when none). */
export const RatingSummarySchema = z.object({
  average: z.number().nullable(),
  count: z.number().int(),
});
export type RatingSummary = z.infer<typeof RatingSummarySchema>;

export const ReviewsQuerySchema = z.strictObject({
  page: z.coerce
    .number({ error: "must be a whole number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(10_000, "must be at most 10000")
    .default(1),
});

/** `GET /explore/apps/{slug}/reviews`: newest first, with the app's rating. */
export const ReviewListSchema = z.object({
  data: z.array(ReviewSchema),
  page: z.number().int(),
  page_size: z.number().int(),
  total: z.number().int(),
  has_more: z.boolean(),
  rating: RatingSummarySchema,
});
export type ReviewList = z.infer<typeof ReviewListSchema>;

/**
 * `GET /explore/apps/{slug}/reviews/mine`: the signed-in person's review of the app (null when
 * none), whether they may write or edit one (they paid for the app and do not own it) and, when
 * not, why; and whether they may reply to reviews (they created the app).
 */
export const MyReviewSchema = z.object({
  review: ReviewSchema.nullable(),
  can_review: z.boolean(),
  reason: z.string().nullable(),
  /** The signed-in person created the app: they may reply, once, to each review. */
  can_reply: z.boolean(),
});
export type MyReview = z.infer<typeof MyReviewSchema>;

/** `PUT /explore/apps/{slug}/reviews/{id}/reply`: the creator's one answer to a review. */
export const ReviewReplyInputSchema = z.strictObject({
  reply: z
    .string({ error: "must be text" })
    .trim()
    .min(1, "must not be empty")
    .max(REVIEW_MAX_LENGTH, `must be at most ${REVIEW_MAX_LENGTH} characters`),
});
