import { createHash } from "node:crypto";
import { and, eq, lt } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { idempotencyRecords } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";

const TTL_MS = 24 * 60 * 60 * 1000;

export type IdempotencyClaim =
  | { kind: "new"; complete(status: number, body: unknown): Promise<void>; abandon(): Promise<void> }
  | { kind: "replay"; status: number; body: unknown };

/**
 * `Idempotency-Key` on paid calls: the first request with a key runs, a retry within 24 h gets the
 * stored answer and is never charged again. The same key with another body is a 422; a retry while
 * the first is still running is a 409. A failed first attempt frees the key so it can be retried.
 */
export async function claimIdempotencyKey(
  db: Database,
  options: { callerKey: string; key: string; fingerprint: unknown },
): Promise<IdempotencyClaim> {
  const { callerKey, key } = options;
  if (key.length === 0 || key.length > 255) {
    throw new AppError("bad_request", "Idempotency-Key must be 1 to 255 characters", {
      fields: { "Idempotency-Key": "must be 1 to 255 characters" },
    });
  }
  const requestHash = createHash("sha256").update(JSON.stringify(options.fingerprint)).digest("hex");
  const where = and(eq(idempotencyRecords.callerKey, callerKey), eq(idempotencyRecords.key, key));
  await db
    .delete(idempotencyRecords)
    .where(and(where, lt(idempotencyRecords.createdAt, new Date(Date.now() - TTL_MS))));

  const [inserted] = await db
    .insert(idempotencyRecords)
    .values({ callerKey, key, requestHash, state: "in_progress" })
    .onConflictDoNothing()
    .returning({ key: idempotencyRecords.key });
  if (inserted) {
    return {
      kind: "new",
      async complete(status, body) {
        await db
          .update(idempotencyRecords)
          .set({ state: "done", responseStatus: status, responseBody: body })
          .where(where);
      },
      async abandon() {
        await db.delete(idempotencyRecords).where(where);
      },
    };
  }
  const [existing] = await db.select().from(idempotencyRecords).where(where).limit(1);
  if (!existing) return claimIdempotencyKey(db, options);
  if (existing.requestHash !== requestHash) {
    throw new AppError(
      "unprocessable",
      "This Idempotency-Key was already used with a different request; use a new key",
    );
  }
  if (existing.state !== "done") {
    throw new AppError(
      "conflict",
      "A request with this Idempotency-Key is still being processed; retry shortly",
      // The one 409 a retry can fix: it says when (lib/should-retry.ts).
      { headers: { "retry-after": "1" } },
    );
  }
  return { kind: "replay", status: existing.responseStatus ?? 200, body: existing.responseBody };
}
