import {
  ApiErrorSchema,
  MyReviewSchema,
  ReviewInputSchema,
  ReviewListSchema,
  ReviewReplyInputSchema,
  ReviewSchema,
  ReviewsQuerySchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { findListedApp } from "./explore.service.ts";
import {
  deleteMyReview,
  getMyReview,
  listReviews,
  NOT_A_BUYER,
  putMyReview,
  replyToReview,
} from "./reviews.service.ts";

const tags = ["reviews"];
const security = [{ bearerAuth: [] }];
const SlugParams = z.object({ slug: z.string().max(100).meta({ example: "haiku-writer" }) });
const reviewExample = {
  id: "7d0b7c1e-3f5a-4c1e-9a59-2f1d1f6c2b10",
  rating: 5,
  body: "Fast and the haiku scan.",
  author_name: "Grace",
  created_at: "2026-11-01T12:00:00.000Z",
  updated_at: "2026-11-01T12:00:00.000Z",
  reply: null,
  replied_at: null,
};
const signedIn = { 401: ApiErrorSchema, 404: ApiErrorSchema };

/**
 * Ratings and reviews of listed apps (docs/decisions/081): anyone reads them; a person who paid
 * for the app writes, edits and deletes their one review; the app's creator replies once.
 */
export const reviewsRoutes: FastifyPluginAsyncZod<{ db: Database; guards: AuthGuards }> = async (
  app,
  { db, guards },
) => {
  app.get(
    "/explore/apps/:slug/reviews",
    {
      schema: {
        tags,
        summary: "An app's reviews, newest first, with its average rating (no sign-in needed)",
        params: SlugParams,
        querystring: ReviewsQuerySchema,
        response: {
          200: ReviewListSchema.meta({
            examples: [
              {
                data: [reviewExample],
                page: 1,
                page_size: 20,
                total: 1,
                has_more: false,
                rating: { average: 5, count: 1 },
              },
            ],
          }),
          400: ApiErrorSchema,
          404: ApiErrorSchema,
        },
      },
    },
    async (request) => {
      const { app: listed } = await findListedApp(db, request.params.slug);
      return listReviews(db, listed, request.query.page);
    },
  );

  app.get(
    "/explore/apps/:slug/reviews/mine",
    {
      schema: {
        tags,
        summary: "Your review of an app, and whether you may write one",
        description: `You may review an app you paid for (a charged call or a paid plan period) and do not own; otherwise \`reason\` says why not ("${NOT_A_BUYER}").`,
        security,
        params: SlugParams,
        response: {
          200: MyReviewSchema.meta({
            examples: [{ review: reviewExample, can_review: true, reason: null, can_reply: false }],
          }),
          ...signedIn,
        },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const { app: listed } = await findListedApp(db, request.params.slug);
      return getMyReview(db, listed, currentUser(request).id);
    },
  );

  app.put(
    "/explore/apps/:slug/reviews/mine",
    {
      schema: {
        tags,
        summary: "Rate and review an app you paid for (writes or rewrites your one review)",
        description: `403 "${NOT_A_BUYER}" for anyone who has not paid for it, and for its creator.`,
        security,
        params: SlugParams,
        body: ReviewInputSchema.meta({ examples: [{ rating: 5, body: "Fast and the haiku scan." }] }),
        response: {
          200: ReviewSchema.meta({ examples: [reviewExample] }),
          400: ApiErrorSchema,
          403: ApiErrorSchema,
          ...signedIn,
        },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const { app: listed } = await findListedApp(db, request.params.slug);
      return putMyReview(db, listed, currentUser(request).id, request.body);
    },
  );

  app.delete(
    "/explore/apps/:slug/reviews/mine",
    {
      schema: {
        tags,
        summary: "Delete your review of an app",
        security,
        params: SlugParams,
        response: { 204: z.null(), ...signedIn },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const { app: listed } = await findListedApp(db, request.params.slug);
      await deleteMyReview(db, listed, currentUser(request).id);
      return reply.status(204).send(null);
    },
  );

  app.put(
    "/explore/apps/:slug/reviews/:id/reply",
    {
      schema: {
        tags,
        summary: "Reply to a review of your app (once)",
        description: "Only the app's creator; anyone else gets 404. A second reply is a 409.",
        security,
        params: SlugParams.extend({ id: UuidSchema }),
        body: ReviewReplyInputSchema.meta({ examples: [{ reply: "Thank you!" }] }),
        response: {
          200: ReviewSchema.meta({
            examples: [{ ...reviewExample, reply: "Thank you!", replied_at: reviewExample.updated_at }],
          }),
          400: ApiErrorSchema,
          409: ApiErrorSchema,
          ...signedIn,
        },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const { app: listed } = await findListedApp(db, request.params.slug);
      return replyToReview(db, listed, currentUser(request).id, request.params.id, request.body.reply);
    },
  );
};
