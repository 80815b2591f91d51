import { and, asc, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import {
  type ApplicationRow,
  conversationMessages,
  conversations,
  messageFeedbacks,
} from "../../db/schema/index.ts";
import { invalidFields } from "../../lib/errors.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { currentUser } from "../auth/authenticate.ts";
import { findOwnCall } from "./access.ts";
import { conversationNotExists, DifyError, messageNotExists, notChatApp } from "./dify-errors.ts";
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
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

type ConversationRow = typeof conversations.$inferSelect;

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

  /** One of the caller's conversations with the app, or Dify's 404. */
  async function ownConversation(application: ApplicationRow, caller: LocalUser, id: string, user?: string) {
    const [found] = UUID.test(id)
      ? await db
          .select()
          .from(conversations)
          .where(and(eq(conversations.id, id), ownedBy(application, caller, user)))
      : [];
    if (!found) throw conversationNotExists();
    return found;
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
      const column = sort_by.endsWith("created_at") ? conversations.createdAt : conversations.updatedAt;
      const descending = sort_by.startsWith("-");
      const lastId = request.query.last_id || request.query.first_id;
      let after: SQL | undefined;
      if (lastId) {
        const last = await ownConversation(application, caller, lastId, user).catch(() => {
          throw new DifyError("not_found", "not_found", "Last Conversation Not Exists.");
        });
        after = beyondCursor(conversations, column, conversations.id, last.id, descending);
      }
      const order = descending ? desc : asc;
      const rows = await db
        .select()
        .from(conversations)
        .where(and(ownedBy(application, caller, user), after))
        .orderBy(order(column), order(conversations.id))
        .limit(limit + 1);
      const shown = rows.slice(0, limit);
      const inputs = await firstInputs(db, shown);
      return {
        limit,
        has_more: rows.length > limit,
        data: shown.map((row) => conversationBody(row, inputs.get(row.id))),
      };
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
      const conversation = await ownConversation(application, caller, request.params.conversation_id, user);
      const inputs = await firstInputs(db, [conversation]);
      const [renamed] = await db
        .update(conversations)
        .set({
          name: auto_generate ? await generatedName(db, conversation) : (name ?? "").trim(),
          updatedAt: new Date(),
        })
        .where(eq(conversations.id, conversation.id))
        .returning();
      return conversationBody(renamed ?? conversation, inputs.get(conversation.id));
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
      const conversation = await ownConversation(
        application,
        caller,
        request.params.conversation_id,
        request.body?.user,
      );
      await db.transaction(async (tx) => {
        const messages = tx
          .select({ id: conversationMessages.id })
          .from(conversationMessages)
          .where(eq(conversationMessages.conversationId, conversation.id));
        await tx.delete(messageFeedbacks).where(inArray(messageFeedbacks.messageId, messages));
        await tx.delete(conversations).where(eq(conversations.id, conversation.id));
      });
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
      await ownConversation(application, caller, request.params.conversation_id, request.query.user);
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
      const conversation = await ownConversation(application, caller, conversation_id, user);
      const inConversation = eq(conversationMessages.conversationId, conversation.id);
      let before: SQL | undefined;
      if (first_id) {
        const [first] = UUID.test(first_id)
          ? await db
              .select({ id: conversationMessages.id })
              .from(conversationMessages)
              .where(and(inConversation, eq(conversationMessages.id, first_id)))
          : [];
        if (!first) throw new DifyError("not_found", "not_found", "First Message Not Exists.");
        before = beyondCursor(
          conversationMessages,
          conversationMessages.createdAt,
          conversationMessages.id,
          first.id,
          true,
        );
      }
      const rows = await db
        .select({ message: conversationMessages, rating: messageFeedbacks.rating })
        .from(conversationMessages)
        .leftJoin(messageFeedbacks, eq(messageFeedbacks.messageId, conversationMessages.id))
        .where(and(inConversation, before))
        .orderBy(desc(conversationMessages.createdAt), desc(conversationMessages.id))
        .limit(limit + 1);
      return {
        limit,
        has_more: rows.length > limit,
        data: rows
          .slice(0, limit)
          .reverse()
          .map(({ message, rating }) => ({
            id: message.id,
            conversation_id: message.conversationId,
            parent_message_id: null,
            inputs: message.inputs as Record<string, unknown>,
            query: message.query,
            answer: message.answer,
            message_files: [],
            feedback: rating ? { rating } : null,
            retriever_resources: [],
            agent_thoughts: [],
            status: "normal",
            error: null,
            created_at: unixSeconds(message.createdAt),
          })),
      };
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
      const messageId = await ownMessage(db, application, caller, request.params.message_id, user);
      if (rating === null) {
        await db.delete(messageFeedbacks).where(eq(messageFeedbacks.messageId, messageId));
        return { result: "success" as const };
      }
      const feedback = { rating, content: content ?? null, updatedAt: new Date() };
      await db
        .insert(messageFeedbacks)
        .values({
          messageId,
          applicationId: application.id,
          callerUserId: caller.id,
          endUser: user ?? "",
          ...feedback,
        })
        .onConflictDoUpdate({ target: messageFeedbacks.messageId, set: feedback });
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
      const { page: pageNumber, limit } = request.query;
      const rows = await db
        .select({ feedback: messageFeedbacks, conversationId: conversationMessages.conversationId })
        .from(messageFeedbacks)
        .leftJoin(conversationMessages, eq(conversationMessages.id, messageFeedbacks.messageId))
        .where(eq(messageFeedbacks.applicationId, application.id))
        .orderBy(desc(messageFeedbacks.updatedAt), desc(messageFeedbacks.messageId))
        .limit(limit)
        .offset((pageNumber - 1) * limit);
      return {
        data: rows.map(({ feedback, conversationId }) => ({
          id: feedback.messageId,
          app_id: feedback.applicationId,
          conversation_id: conversationId,
          message_id: feedback.messageId,
          rating: feedback.rating,
          content: feedback.content,
          from_source: "user" as const,
          from_end_user_id: feedback.endUser || null,
          from_account_id: feedback.callerUserId,
          created_at: feedback.createdAt.toISOString(),
          updated_at: feedback.updatedAt.toISOString(),
        })),
      };
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
      await ownMessage(db, application, caller, request.params.message_id, request.query.user);
      throw new DifyError(
        "forbidden",
        "app_suggested_questions_after_answer_disabled",
        "Suggested questions after an answer are not enabled for this app",
      );
    },
  );
};

/**
 * The rows past a cursor row in (column, id) order, compared in the database: its timestamps
 * keep their microseconds, which a JavaScript Date would round away.
 */
function beyondCursor(
  table: PgTable,
  column: PgColumn,
  id: PgColumn,
  cursorId: string,
  descending: boolean,
): SQL {
  const operator = sql.raw(descending ? "<" : ">");
  return sql`(${column}, ${id}) ${operator} (select ${column}, ${id} from ${table} where ${id} = ${cursorId})`;
}

/** The conversations of the caller (account and Dify `user`) with the app. */
function ownedBy(application: ApplicationRow, caller: LocalUser, user: string | undefined) {
  return and(
    eq(conversations.applicationId, application.id),
    eq(conversations.callerUserId, caller.id),
    eq(conversations.endUser, user ?? ""),
  );
}

/**
 * A successful call of the caller's (account and Dify `user`) to the app: its id, or Dify's 404.
 * A chat turn outlives its invocation (dropped with its day past INVOCATION_RETENTION_DAYS,
 * decision 038) as its conversation's message, which has the same id.
 */
async function ownMessage(
  db: Database,
  application: ApplicationRow,
  caller: LocalUser,
  messageId: string,
  user: string | undefined,
): Promise<string> {
  const found = await findOwnCall(db, application, caller, messageId, { user });
  if (found) return found.id;
  const [message] = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(messageId)
    ? await db
        .select({ id: conversationMessages.id })
        .from(conversationMessages)
        .innerJoin(conversations, eq(conversations.id, conversationMessages.conversationId))
        .where(and(eq(conversationMessages.id, messageId), ownedBy(application, caller, user)))
    : [];
  if (!message) throw messageNotExists();
  return message.id;
}

/** Each conversation's inputs: those of its first message (what the conversation was started with). */
async function firstInputs(
  db: Database,
  rows: ConversationRow[],
): Promise<Map<string, Record<string, unknown>>> {
  if (rows.length === 0) return new Map();
  const firsts = await db
    .selectDistinctOn([conversationMessages.conversationId], {
      conversationId: conversationMessages.conversationId,
      inputs: conversationMessages.inputs,
    })
    .from(conversationMessages)
    .where(
      inArray(
        conversationMessages.conversationId,
        rows.map((row) => row.id),
      ),
    )
    .orderBy(conversationMessages.conversationId, asc(conversationMessages.createdAt));
  return new Map(firsts.map((first) => [first.conversationId, first.inputs as Record<string, unknown>]));
}

/** Dify generates a name with a model; a Promptmint conversation is named by its first query's start. */
async function generatedName(db: Database, conversation: ConversationRow): Promise<string> {
  const [first] = await db
    .select({ query: conversationMessages.query })
    .from(conversationMessages)
    .where(eq(conversationMessages.conversationId, conversation.id))
    .orderBy(asc(conversationMessages.createdAt))
    .limit(1);
  return first?.query.trim().slice(0, 60) || conversation.name;
}

function conversationBody(row: ConversationRow, inputs: Record<string, unknown> = {}) {
  return {
    id: row.id,
    name: row.name,
    inputs,
    status: "normal",
    introduction: "",
    created_at: unixSeconds(row.createdAt),
    updated_at: unixSeconds(row.updatedAt),
  };
}

const unixSeconds = (date: Date) => Math.floor(date.getTime() / 1000);
