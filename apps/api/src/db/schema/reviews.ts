import { sql } from "drizzle-orm";
import { check, index, pgTable, smallint, text, uniqueIndex } from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { users } from "./auth.ts";
import { createdAt, generatedId, reference, timestamptz, updatedAt } from "./columns.ts";

/** The longest review or reply, in characters (the database refuses longer). */
export const REVIEW_TEXT_MAX = 2000;

/**
 * A buyer's rating (1–5) and review of an app (migration 0059, docs/decisions/081): one per buyer
 * and app, editable and deletable by its author; the app's creator may reply once.
 */
export const appReviews = pgTable(
  "app_reviews",
  {
    id: generatedId(),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    authorId: reference("author_id", () => users.id, "cascade"),
    rating: smallint("rating").notNull(),
    body: text("body").notNull().default(""),
    reply: text("reply"),
    repliedAt: timestamptz("replied_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("app_reviews_one_per_author").on(t.applicationId, t.authorId),
    index("app_reviews_app_updated_idx").on(t.applicationId, t.updatedAt.desc(), t.id),
    check("app_reviews_rating_range", sql`${t.rating} between 1 and 5`),
    check("app_reviews_body_length", sql`char_length(${t.body}) <= 2000`),
    check("app_reviews_reply_length", sql`${t.reply} is null or char_length(${t.reply}) <= 2000`),
  ],
);
export type AppReviewRow = typeof appReviews.$inferSelect;
