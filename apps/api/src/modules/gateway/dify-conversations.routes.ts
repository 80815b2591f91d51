import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { invalidFields } from "../../lib/errors.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { currentUser } from "../auth/authenticate.ts";
import {
  deleteConversation,
  findOwnConversation,
  findOwnMessage,
  listConversations,
  listFeedbacks,
  listMessages,
  rateMessage,
  renameConversation,
} from "./dify-conversations.service.ts";
import { DifyError, notChatApp } from "./dify-errors.ts";
import {
  gatewayErrors as errors,
  ResultSchema,
  SlugParams,
  gatewaySecurity as security,
  gatewayTags as tags,
  UserBody,
  UserQuery,
} from "./dify-schemas.ts";
import { conversationsExample, messagesExample } from "./examples.ts";
import type { GatewayDeps } from "./gateway-call.ts";

const Limit = z.coerce.number().int().min(1).max(100).default(20);
const ConversationParams = SlugParams.extend({ conversation_id: z.string().max(100) });
const MessageParams = SlugParams.extend({ message_id: z.string().max(100) });

const ConversationSchema = z.object({
  id: z.string(),
  name: z.string(),
  inputs: z.record(z.string(), z.unknown()),
  status: z.string(),
  introduction: z.string(),
  created_at: z.number(),
  updated_at: z.number(),
});
const MessageSchema = z.object({
  id: z.string(),
  conversation_id: z.string(),
  parent_message_id: z.string().nullable(),
  inputs: z.record(z.string(), z.unknown()),
  query: z.string(),
  answer: z.string(),
  message_files: z.array(z.unknown()),
  feedback: z.object({ rating: z.enum(["like", "dislike"]) }).nullable(),
  retriever_resources: z.array(z.unknown()),
  agent_thoughts: z.array(z.unknown()),
  status: z.string(),
  error: z.string().nullable(),
  created_at: z.number(),
});
const page = <T extends z.ZodType>(item: T) =>
  z.object({ limit: z.number(), has_more: z.boolean(), data: z.array(item) });

/**
 * Dify's conversation and message routes for the caller's own conversations (the account plus
 * the Dify `user` it passes): list and page them, rename, delete, read a conversation's messages
 * and variables, rate an answer, and the suggestions Promptmint apps do not offer.
 */
export const difyConversationRoutes: FastifyPluginAsyncZod<GatewayDeps> = async (app, { db, guards }) => {
  /** A chat app the caller may call (Dify: `not_chat_app` for a completion app). */
  async function chatApp(slug: string, caller: LocalUser): Promise<ApplicationRow> {
    const application = await findCallableApp(db, slug, caller);
    if (application.type === "prompt" && application.interactionMode !== "chat") throw notChatApp();
    return application;
  }

  app.get(
    "/app/:slug/conversations",
    {
      schema: {
        tags,
        summary: "Your conversations with a chat app, newest first, paged by last_id (Dify compatible)",
        description:
          "`first_id` is read as `last_id` (dify-client sends that name). Promptmint has no pinned conversations: `pinned=true` lists none.",
        security,
        params: SlugParams,
        querystring: UserQuery.extend({
          last_id: z.string().max(100).optional(),
          first_id: z.string().max(100).optional(),
          limit: Limit,
          sort_by: z.enum(["created_at", "-created_at", "updated_at", "-updated_at"]).default("-updated_at"),
          pinned: z.enum(["true", "false"]).optional(),
        }),
        response: { 200: page(ConversationSchema).meta({ examples: [conversationsExample] }), ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await chatApp(request.params.slug, caller);
      const { user, limit, sort_by, pinned } = request.query;
      if (pinned === "true") return { limit, has_more: false, data: [] };
      return listConversations(db, {
        application,
        caller,
        user,
        limit,
        sortBy: sort_by,
        lastId: request.query.last_id || request.query.first_id,
      });
    },
  );

  app.post(
    "/app/:slug/conversations/:conversation_id/name",
    {
      schema: {
        tags,
        summary: "Rename a conversation, or name it from its first message (Dify compatible)",
        security,
        params: ConversationParams,
        body: z.strictObject({
          name: z.string().max(200).nullish(),
          auto_generate: z.boolean().nullish(),
          user: z.string().max(256).optional(),
        }),
        response: { 200: ConversationSchema, ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await chatApp(request.params.slug, caller);
      const { name, auto_generate, user } = request.body;
      if (!auto_generate && !name?.trim())
        throw invalidFields({ name: "is required when auto_generate is false" });
      const conversation = await findOwnConversation(
        db,
        application,
        caller,
        request.params.conversation_id,
        user,
      );
      return renameConversation(db, conversation, { name, autoGenerate: auto_generate });
    },
  );

  app.delete(
    "/app/:slug/conversations/:conversation_id",
    {
      schema: {
        tags,
        summary: "Delete a conversation and its messages (Dify compatible: 204)",
        security,
        params: ConversationParams,
        body: UserBody,
        response: { 204: z.null().describe("Deleted"), ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request, reply) => {
      const caller = currentUser(request);
      const application = await chatApp(request.params.slug, caller);
      const conversation = await findOwnConversation(
        db,
        application,
        caller,
        request.params.conversation_id,
        request.body?.user,
      );
      await deleteConversation(db, conversation);
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/app/:slug/conversations/:conversation_id/variables",
    {
      schema: {
        tags,
        summary: "A conversation's variables (Dify compatible; Promptmint apps keep none)",
        description:
          "Dify's conversation variables are a chatflow's state; Promptmint apps have none, so the list is empty. A conversation's inputs are in `inputs` on /conversations.",
        security,
        params: ConversationParams,
        querystring: UserQuery.extend({
          last_id: z.string().max(100).optional(),
          limit: Limit,
          variable_name: z.string().min(1).max(255).optional(),
        }),
        response: { 200: page(z.never()), ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await chatApp(request.params.slug, caller);
      await findOwnConversation(db, application, caller, request.params.conversation_id, request.query.user);
      return { limit: request.query.limit, has_more: false, data: [] };
    },
  );

  app.get(
    "/app/:slug/messages",
    {
      schema: {
        tags,
        summary: "A conversation's messages, oldest first, paged back by first_id (Dify compatible)",
        description:
          "The first page is the latest `limit` messages; pass the oldest one's id as `first_id` for the ones before it, until `has_more` is false.",
        security,
        params: SlugParams,
        querystring: UserQuery.extend({
          conversation_id: z.string().max(100).optional(),
          first_id: z.string().max(100).optional(),
          limit: Limit,
        }),
        response: { 200: page(MessageSchema).meta({ examples: [messagesExample] }), ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await chatApp(request.params.slug, caller);
      const { conversation_id, first_id, limit, user } = request.query;
      if (!conversation_id) throw invalidFields({ conversation_id: "is required" });
      const conversation = await findOwnConversation(db, application, caller, conversation_id, user);
      return listMessages(db, conversation, { firstId: first_id, limit });
    },
  );

  app.post(
    "/app/:slug/messages/:message_id/feedbacks",
    {
      schema: {
        tags,
        summary: "Rate an answer like or dislike, or take the rating back with null (Dify compatible)",
        security,
        params: MessageParams,
        body: z.strictObject({
          rating: z.enum(["like", "dislike"]).nullable(),
          user: z.string().max(256).optional(),
          content: z.string().max(10_000).nullish(),
        }),
        response: { 200: ResultSchema, ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await findCallableApp(db, request.params.slug, caller);
      const { rating, user, content } = request.body;
      await rateMessage(db, {
        application,
        caller,
        messageId: request.params.message_id,
        user,
        rating,
        content,
      });
      return { result: "success" as const };
    },
  );

  app.get(
    "/app/:slug/app/feedbacks",
    {
      schema: {
        tags,
        summary: "Every rating of the app's answers, newest first (Dify compatible; the app's creator only)",
        security,
        params: SlugParams,
        querystring: z.object({
          page: z.coerce.number().int().min(1).max(10_000).default(1),
          limit: z.coerce.number().int().min(1).max(101).default(20),
        }),
        response: {
          200: z.object({
            data: z.array(
              z.object({
                id: z.string(),
                app_id: z.string(),
                conversation_id: z.string().nullable(),
                message_id: z.string(),
                rating: z.string(),
                content: z.string().nullable(),
                from_source: z.literal("user"),
                from_end_user_id: z.string().nullable(),
                from_account_id: z.string().nullable(),
                created_at: z.string(),
                updated_at: z.string(),
              }),
            ),
          }),
          403: errors[400],
          ...errors,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await findCallableApp(db, request.params.slug, caller);
      if (application.ownerId !== caller.id)
        throw new DifyError("forbidden", "forbidden", "Only the app's creator may read its feedbacks");
      return listFeedbacks(db, application, request.query);
    },
  );

  app.get(
    "/app/:slug/messages/:message_id/suggested",
    {
      schema: {
        tags,
        summary: "Suggested next questions (Dify compatible; Promptmint apps do not offer them)",
        description:
          "Answers 403 `app_suggested_questions_after_answer_disabled`, as Dify does for an app with the feature off (`/parameters` says `suggested_questions_after_answer: {enabled: false}`).",
        security,
        params: MessageParams,
        querystring: UserQuery,
        response: { 200: ResultSchema.extend({ data: z.array(z.string()) }), 403: errors[400], ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const caller = currentUser(request);
      const application = await chatApp(request.params.slug, caller);
      await findOwnMessage(db, application, caller, request.params.message_id, request.query.user);
      throw new DifyError(
        "forbidden",
        "app_suggested_questions_after_answer_disabled",
        "Suggested questions after an answer are not enabled for this app",
      );
    },
  );
};
