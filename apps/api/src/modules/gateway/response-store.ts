import { and, eq, gt, inArray, lt, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { applications, storedResponses } from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { OpenAiError } from "./openai-errors.ts";
import type { ResponsesRequest } from "./openai-request.ts";
import type { ResponseObject } from "./openai-responses.ts";

/**
 * The Responses API's state (docs/decisions/054): an answer made with `store` (default true, as
 * OpenAI's) is kept for its caller for RESPONSE_RETENTION_DAYS, then swept. Only the caller that
 * made it can read it, delete it, list its input items or continue it with `previous_response_id`;
 * for anyone else it does not exist (404, or previous_response_not_found). A chain stays with the
 * app that answered it. Each row holds the whole conversation it answered (earlier inputs and
 * outputs included), so a chain never needs an earlier row: deleting one response deletes that
 * response only. Customer content: never logged, gone with its caller or its app.
 */
export const RESPONSE_RETENTION_DAYS = 30;

/** An input item as kept: a message (role, content parts) or any other item the request held. */
export interface InputItem extends Record<string, unknown> {
  type?: string;
  id?: string;
  role?: string;
  content?: unknown;
}

/** A stored response as its caller finds it. */
export interface StoredResponse {
  id: string;
  applicationId: string;
  inputItems: InputItem[];
  response: ResponseObject;
}

/** Where a chained call starts: the conversation so far, as input items. */
export interface Continuation {
  items: InputItem[];
}

const notFound = (id: string) => new AppError("not_found", `Response with id '${id}' not found.`);

/** A message's text content as OpenAI's parts: `input_text`, or `output_text` for the assistant. */
function asParts(role: string | undefined, content: unknown): unknown {
  if (typeof content !== "string") return content;
  return [{ type: role === "assistant" ? "output_text" : "input_text", text: content }];
}

/**
 * A request's `input` as the items kept for it: a string is one user message; messages get their
 * content as parts and an id (`msg_<response>_<n>`) when they had none.
 */
export function inputItemsOf(input: ResponsesRequest["input"], responseId: string): InputItem[] {
  const items: InputItem[] =
    typeof input === "string" ? [{ type: "message", role: "user", content: input }] : (input as InputItem[]);
  const prefix = `msg_${responseId.slice("resp_".length)}_`;
  return items.map((item, i) => {
    const type = item.type ?? "message";
    if (type !== "message") return { id: `${prefix}${i}`, ...item };
    return {
      id: item.id ?? `${prefix}${i}`,
      ...item,
      type,
      content: asParts(item.role, item.content),
      status: "completed",
    };
  });
}

/** Keeps an answered response for its caller; an idempotent replay (the same id) is kept once. */
export async function keepResponse(
  db: Database,
  kept: { callerId: string; applicationId: string; inputItems: InputItem[]; response: ResponseObject },
): Promise<void> {
  await db
    .insert(storedResponses)
    .values({
      id: kept.response.id,
      callerUserId: kept.callerId,
      applicationId: kept.applicationId,
      inputItems: kept.inputItems,
      response: kept.response,
      expiresAt: sql`now() + make_interval(days => ${RESPONSE_RETENTION_DAYS})`,
    })
    .onConflictDoNothing();
}

/** The caller's own stored response, unexpired; another caller's does not exist (404). */
export async function findStoredResponse(
  db: Database,
  callerId: string,
  id: string,
): Promise<StoredResponse> {
  const [row] = await db
    .select({
      id: storedResponses.id,
      applicationId: storedResponses.applicationId,
      inputItems: storedResponses.inputItems,
      response: storedResponses.response,
    })
    .from(storedResponses)
    .where(
      and(
        eq(storedResponses.id, id),
        eq(storedResponses.callerUserId, callerId),
        gt(storedResponses.expiresAt, sql`now()`),
      ),
    );
  if (!row) throw notFound(id);
  return row as StoredResponse;
}

/** Deletes the caller's own stored response; 404 when there is none (another's included). */
export async function deleteStoredResponse(db: Database, callerId: string, id: string): Promise<void> {
  const deleted = await db
    .delete(storedResponses)
    .where(
      and(
        eq(storedResponses.id, id),
        eq(storedResponses.callerUserId, callerId),
        gt(storedResponses.expiresAt, sql`now()`),
      ),
    )
    .returning({ id: storedResponses.id });
  if (deleted.length === 0) throw notFound(id);
}

/**
 * The conversation `previous_response_id` continues: that response's input items then its output.
 * Unknown, expired, deleted or another caller's: OpenAI's 400 `previous_response_not_found`. One
 * made by another app (`model`), or an app that keeps no caller history (a workflow): a 400 saying so.
 */
export async function continuationOf(
  db: Database,
  callerId: string,
  previousId: string,
  model: string,
): Promise<Continuation> {
  const [row] = await db
    .select({
      inputItems: storedResponses.inputItems,
      response: storedResponses.response,
      slug: applications.slug,
      type: applications.type,
    })
    .from(storedResponses)
    .innerJoin(applications, eq(applications.id, storedResponses.applicationId))
    .where(
      and(
        eq(storedResponses.id, previousId),
        eq(storedResponses.callerUserId, callerId),
        gt(storedResponses.expiresAt, sql`now()`),
      ),
    );
  if (!row)
    throw new OpenAiError(
      "bad_request",
      "previous_response_not_found",
      `Previous response with id '${previousId}' not found.`,
      "previous_response_id",
    );
  if (row.slug !== model)
    throw invalidFields({
      previous_response_id: `was answered by another app (model '${row.slug}'): a chain of responses stays with one app`,
    });
  if (row.type !== "prompt")
    throw invalidFields({
      previous_response_id: "is not supported by this app: a workflow app keeps no caller history",
    });
  const response = row.response as ResponseObject;
  return {
    items: [...(row.inputItems as InputItem[]), ...(response.output as unknown as InputItem[])],
  };
}

/** Deletes responses past their retention, a batch at a time; answers how many went. */
export async function sweepExpiredResponses(db: Database, batch = 5000): Promise<number> {
  const expired = db
    .select({ id: storedResponses.id })
    .from(storedResponses)
    .where(lt(storedResponses.expiresAt, sql`now()`))
    .limit(batch);
  const deleted = await db
    .delete(storedResponses)
    .where(inArray(storedResponses.id, expired))
    .returning({ id: storedResponses.id });
  return deleted.length;
}

/** One page of a stored response's input items, as OpenAI lists them (newest first by default). */
export function pageOfInputItems(
  items: InputItem[],
  page: { limit: number; order: "asc" | "desc"; after?: string },
): { object: "list"; data: InputItem[]; first_id: string | null; last_id: string | null; has_more: boolean } {
  const ordered = page.order === "asc" ? items : [...items].reverse();
  let start = 0;
  if (page.after) {
    const at = ordered.findIndex((item) => item.id === page.after);
    if (at < 0) throw invalidFields({ after: `is not the id of an input item of this response` });
    start = at + 1;
  }
  const data = ordered.slice(start, start + page.limit);
  return {
    object: "list",
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + page.limit < ordered.length,
  };
}
