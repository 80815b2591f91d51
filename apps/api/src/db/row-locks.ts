import { eq } from "drizzle-orm";
import type { Database } from "./client.ts";
import { users } from "./schema/index.ts";

/**
 * Locks a user's row until the transaction ends: writes that check a per-user limit or invariant
 * before inserting (API keys under their cap, one default card) take it first, so concurrent
 * requests of one user run those checks one at a time and a limit cannot be passed by a race.
 */
export async function lockUserRow(tx: Database, userId: string): Promise<void> {
  await tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).for("update");
}
