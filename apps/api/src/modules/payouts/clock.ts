import { eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { sandboxClock } from "../../db/schema/index.ts";

/**
 * The payouts clock: the real time plus the sandbox's stored offset (zero unless a sandbox test
 * moved it). Stored in the database so that every process agrees on when money becomes available
 * and when the schedule is due (docs/decisions/027).
 */
export async function clockOffsetMs(db: Database): Promise<number> {
  const [row] = await db
    .select({ offsetMs: sandboxClock.offsetMs })
    .from(sandboxClock)
    .where(eq(sandboxClock.id, 1));
  return row?.offsetMs ?? 0;
}

export async function clockNow(db: Database): Promise<Date> {
  return new Date(Date.now() + (await clockOffsetMs(db)));
}

/** Moves the clock ahead (sandbox only; the routes refuse it in production and with Stripe). */
export async function advanceClock(db: Database, days: number): Promise<number> {
  const ms = Math.round(days * 86_400_000);
  const [row] = await db
    .insert(sandboxClock)
    .values({ id: 1, offsetMs: ms })
    .onConflictDoUpdate({
      target: sandboxClock.id,
      set: { offsetMs: sql`${sandboxClock.offsetMs} + ${ms}`, updatedAt: sql`now()` },
    })
    .returning({ offsetMs: sandboxClock.offsetMs });
  return row?.offsetMs ?? ms;
}
