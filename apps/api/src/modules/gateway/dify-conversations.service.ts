import { isUuid } from "@promptmint/contracts";
import { and, asc, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import type { Database } from "../../db/client.ts";
import {
  type ApplicationRow,
  conversationMessages,
  conversations,
  messageFeedbacks,
} from "../../db/schema/index.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { findOwnCall } from "./access.ts";
import { conversationNotExists, DifyError, messageNotExists } from "./dify-errors.ts";

/**
 * The caller's own conversations and messages with a chat app, as Dify's conversation routes
 * read and change them (dify-conversations.routes.ts): a conversation is the account's plus the
 * Dify `user` it passes; each answers in Dify's shapes, timestamps in Unix seconds.
 */

type ConversationRow = typeof conversations.$inferSelect;

/** One of the caller's conversations with the app, or Dify's 404. */
export async function findOwnConversation(
  db: Database,
  application: ApplicationRow,
  caller: LocalUser,
  id: string,
  user?: string,
): Promise<ConversationRow> {
  const [found] = isUuid(id)
    ? await db
        .select()
        .from(conversations)
        .where(and(eq(conversations.id, id), ownedBy(application, caller, user)))
    : [];
  if (!found) throw conversationNotExists();
  return found;
}

/** A page of the caller's conversations in `sortBy` order, after the one `lastId` names. */
export async function listConversations(
  db: Database,
  options: {
    application: ApplicationRow;
    caller: LocalUser;
    user: string | undefined;
    limit: number;
    sortBy: "created_at" | "-created_at" | "updated_at" | "-updated_at";
    lastId: string | undefined;
  },
) {
  const { application, caller, user, limit, sortBy, lastId } = options;
  const column = sortBy.endsWith("created_at") ? conversations.createdAt : conversations.updatedAt;
  const descending = sortBy.startsWith("-");
  let after: SQL | undefined;
  if (lastId) {
    const last = await findOwnConversation(db, application, caller, lastId, user).catch(() => {
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
}

/** Renames a conversation, or names it from its first query with `autoGenerate`. */
export async function renameConversation(
  db: Database,
  conversation: ConversationRow,
  rename: { name: string | null | undefined; autoGenerate: boolean | null | undefined },
) {
  const inputs = await firstInputs(db, [conversation]);
  const [renamed] = await db
    .update(conversations)
    .set({
      name: rename.autoGenerate ? await generatedName(db, conversation) : (rename.name ?? "").trim(),
      updatedAt: new Date(),
    })
    .where(eq(conversations.id, conversation.id))
    .returning();
  return conversationBody(renamed ?? conversation, inputs.get(conversation.id));
}

/** Deletes a conversation, its messages and their ratings. */
export async function deleteConversation(db: Database, conversation: ConversationRow): Promise<void> {
  await db.transaction(async (tx) => {
    const messages = tx
      .select({ id: conversationMessages.id })
      .from(conversationMessages)
      .where(eq(conversationMessages.conversationId, conversation.id));
    await tx.delete(messageFeedbacks).where(inArray(messageFeedbacks.messageId, messages));
    await tx.delete(conversations).where(eq(conversations.id, conversation.id));
  });
}

/** A page of a conversation's messages, oldest first: the latest `limit`, or those before `firstId`. */
export async function listMessages(
  db: Database,
  conversation: ConversationRow,
  page: { firstId: string | undefined; limit: number },
) {
  const { firstId, limit } = page;
  const inConversation = eq(conversationMessages.conversationId, conversation.id);
  let before: SQL | undefined;
  if (firstId) {
    const [first] = isUuid(firstId)
      ? await db
          .select({ id: conversationMessages.id })
          .from(conversationMessages)
          .where(and(inConversation, eq(conversationMessages.id, firstId)))
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
}

/** Rates one of the caller's answers (like or dislike), or takes the rating back with null. */
export async function rateMessage(
  db: Database,
  options: {
    application: ApplicationRow;
    caller: LocalUser;
    messageId: string;
    user: string | undefined;
    rating: "like" | "dislike" | null;
    content: string | null | undefined;
  },
): Promise<void> {
  const { application, caller, user, rating, content } = options;
  const messageId = await findOwnMessage(db, application, caller, options.messageId, user);
  if (rating === null) {
    await db.delete(messageFeedbacks).where(eq(messageFeedbacks.messageId, messageId));
    return;
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
}

/** A page of every rating of the app's answers, newest first (for the app's creator). */
export async function listFeedbacks(
  db: Database,
  application: ApplicationRow,
  page: { page: number; limit: number },
) {
  const { limit } = page;
  const rows = await db
    .select({ feedback: messageFeedbacks, conversationId: conversationMessages.conversationId })
    .from(messageFeedbacks)
    .leftJoin(conversationMessages, eq(conversationMessages.id, messageFeedbacks.messageId))
    .where(eq(messageFeedbacks.applicationId, application.id))
    .orderBy(desc(messageFeedbacks.updatedAt), desc(messageFeedbacks.messageId))
    .limit(limit)
    .offset((page.page - 1) * limit);
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
}

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
export async function findOwnMessage(
  db: Database,
  application: ApplicationRow,
  caller: LocalUser,
  messageId: string,
  user: string | undefined,
): Promise<string> {
  const found = await findOwnCall(db, application, caller, messageId, { user });
  if (found) return found.id;
  const [message] = isUuid(messageId)
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
