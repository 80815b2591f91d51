import {
  type MyReview,
  type RatingSummary,
  REVIEWS_PAGE_SIZE,
  type Review,
  type ReviewInputSchema,
  type ReviewList,
} from "@promptmint/contracts";
import { and, desc, eq, sql } from "drizzle-orm";
import type { z } from "zod";
import { type Database, queryRows } from "../../db/client.ts";
import { type ApplicationRow, type AppReviewRow, appReviews, users } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";

/** Why a signed-in person may not review an app (docs/decisions/081). */
export const NOT_A_BUYER = "Only buyers who have paid for this app can review it";
export const OWN_APP = "Creators cannot review their own app";

const authorName = sql<string>`coalesce(nullif(${users.displayName}, ''), ${users.username})`;

function toReview(row: AppReviewRow, name: string): Review {
  return {
    id: row.id,
    rating: row.rating,
    body: row.body,
    author_name: name,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    reply: row.reply,
    replied_at: row.repliedAt?.toISOString() ?? null,
  };
}

/**
 * Whether a person paid for an app: a call charged from their wallet (one of their holds of the
 * app spent something; the owner's embedded widget pays from the owner's wallet and is not a
 * purchase), or a plan period of the app they paid for. Free calls, trials paid by the creator and
 * the owner's own calls pay nothing from the person's money.
 */
export async function hasPaidFor(db: Database, app: ApplicationRow, userId: string): Promise<boolean> {
  const [row] = await queryRows<{ paid: boolean }>(
    db,
    sql`select exists (
          select 1 from holds h
          where h.payer_id = ${userId}::uuid and h.application_id = ${app.id}::uuid
            and h.settled_micros > 0 and h.payer_id <> h.creator_id
        ) or exists (
          select 1 from subscriptions s join subscription_periods p on p.subscription_id = s.id
          where s.subscriber_id = ${userId}::uuid and s.application_id = ${app.id}::uuid
            and p.transaction_id is not null and coalesce(p.price_cents, 0) > 0
        ) as paid`,
  );
  return row?.paid === true;
}

/** Why `userId` may not review the app, or null when they may. */
export async function reviewRefusal(
  db: Database,
  app: ApplicationRow,
  userId: string,
): Promise<string | null> {
  if (app.ownerId === userId) return OWN_APP;
  return (await hasPaidFor(db, app, userId)) ? null : NOT_A_BUYER;
}

/** The plain average and count of an app's ratings. */
export async function ratingSummaries(
  db: Database,
  applicationIds: string[],
): Promise<Map<string, RatingSummary & { sum: number }>> {
  const found = new Map<string, RatingSummary & { sum: number }>();
  for (const id of applicationIds) found.set(id, { average: null, count: 0, sum: 0 });
  if (applicationIds.length === 0) return found;
  const rows = await queryRows<{ id: string; count: number; sum: number }>(
    db,
    sql`select application_id as id, count(*)::int as count, sum(rating)::int as sum from app_reviews
        where application_id = any(${`{${applicationIds.join(",")}}`}::uuid[]) group by 1`,
  );
  for (const row of rows)
    found.set(row.id, {
      average: Math.round((row.sum / row.count) * 100) / 100,
      count: row.count,
      sum: row.sum,
    });
  return found;
}

export async function listReviews(db: Database, app: ApplicationRow, page: number): Promise<ReviewList> {
  const offset = (page - 1) * REVIEWS_PAGE_SIZE;
  const [rows, ratings] = await Promise.all([
    db
      .select({ review: appReviews, name: authorName })
      .from(appReviews)
      .innerJoin(users, eq(users.id, appReviews.authorId))
      .where(eq(appReviews.applicationId, app.id))
      .orderBy(desc(appReviews.updatedAt), appReviews.id)
      .limit(REVIEWS_PAGE_SIZE)
      .offset(offset),
    ratingSummaries(db, [app.id]),
  ]);
  const { average, count } = ratings.get(app.id) ?? { average: null, count: 0 };
  return {
    data: rows.map((row) => toReview(row.review, row.name)),
    page,
    page_size: REVIEWS_PAGE_SIZE,
    total: count,
    has_more: offset + rows.length < count,
    rating: { average, count },
  };
}

async function findMine(db: Database, app: ApplicationRow, userId: string): Promise<Review | null> {
  const [row] = await db
    .select({ review: appReviews, name: authorName })
    .from(appReviews)
    .innerJoin(users, eq(users.id, appReviews.authorId))
    .where(and(eq(appReviews.applicationId, app.id), eq(appReviews.authorId, userId)))
    .limit(1);
  return row ? toReview(row.review, row.name) : null;
}

export async function getMyReview(db: Database, app: ApplicationRow, userId: string): Promise<MyReview> {
  const [review, reason] = await Promise.all([findMine(db, app, userId), reviewRefusal(db, app, userId)]);
  return { review, can_review: reason === null, reason, can_reply: app.ownerId === userId };
}

/** Writes or rewrites the person's one review of the app: 403 naming why when they may not. */
export async function putMyReview(
  db: Database,
  app: ApplicationRow,
  userId: string,
  input: z.output<typeof ReviewInputSchema>,
): Promise<Review> {
  const reason = await reviewRefusal(db, app, userId);
  if (reason) throw new AppError("forbidden", reason);
  await db
    .insert(appReviews)
    .values({ applicationId: app.id, authorId: userId, rating: input.rating, body: input.body })
    .onConflictDoUpdate({
      target: [appReviews.applicationId, appReviews.authorId],
      set: { rating: input.rating, body: input.body, updatedAt: sql`now()` },
    });
  const review = await findMine(db, app, userId);
  if (!review) throw notFound("Review");
  return review;
}

/** Deletes the person's review of the app; 404 when they have none. */
export async function deleteMyReview(db: Database, app: ApplicationRow, userId: string): Promise<void> {
  const deleted = await db
    .delete(appReviews)
    .where(and(eq(appReviews.applicationId, app.id), eq(appReviews.authorId, userId)))
    .returning({ id: appReviews.id });
  if (deleted.length === 0) throw new AppError("not_found", "You have not reviewed this app");
}

/**
 * The app's creator answers a review, once: anyone else gets 404 (as for any app they do not
 * own), a second answer 409.
 */
export async function replyToReview(
  db: Database,
  app: ApplicationRow,
  userId: string,
  reviewId: string,
  reply: string,
): Promise<Review> {
  if (app.ownerId !== userId) throw notFound("Review");
  const updated = await db
    .update(appReviews)
    .set({ reply, repliedAt: sql`now()` })
    .where(
      and(
        eq(appReviews.id, reviewId),
        eq(appReviews.applicationId, app.id),
        sql`${appReviews.reply} is null`,
      ),
    )
    .returning({ id: appReviews.id });
  const [row] = await db
    .select({ review: appReviews, name: authorName })
    .from(appReviews)
    .innerJoin(users, eq(users.id, appReviews.authorId))
    .where(and(eq(appReviews.id, reviewId), eq(appReviews.applicationId, app.id)))
    .limit(1);
  if (!row) throw notFound("Review");
  if (updated.length === 0) throw new AppError("conflict", "You have already replied to this review");
  return toReview(row.review, row.name);
}
