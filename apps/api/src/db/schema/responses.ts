import { index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { users } from "./auth.ts";
import { createdAt, reference, timestamptz } from "./columns.ts";

/**
 * A Responses API answer kept for its caller (`store`, docs/decisions/054): `retrieve`, `delete`,
 * `input_items` and the next call's `previous_response_id`. Only its caller sees it; it is gone
 * at `expires_at` (swept by the `stored-response-sweep` job) or when deleted.
 */
export const storedResponses = pgTable(
  "stored_responses",
  {
    /** The Response's own id, `resp_…` (an idempotent replay has the same one: stored once). */
    id: text("id").primaryKey(),
    callerUserId: reference("caller_user_id", () => users.id, "cascade"),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    /** The whole conversation as input items: every earlier response's input and output, then this call's input. */
    inputItems: jsonb("input_items").notNull(),
    /** The Response object as it was answered (its `output` items, usage and cost). */
    response: jsonb("response").notNull(),
    createdAt: createdAt(),
    expiresAt: timestamptz("expires_at").notNull(),
  },
  (t) => [
    index("stored_responses_caller_idx").on(t.callerUserId),
    index("stored_responses_expires_idx").on(t.expiresAt),
  ],
);
