import { eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { sandboxClocks } from "../../db/schema/index.ts";
import { invalidFields } from "../../lib/errors.ts";

/**
 * The payouts clock of one creator: the real time plus that creator's sandbox offset (zero unless
 * they moved their own test clock). Stored in the database so that every process agrees on when
 * their money becomes available and when their schedule is due (docs/decisions/027, 046). Bounded
 * (forward only, at most MAX_CLOCK_OFFSET_DAYS, also a CHECK in the table), so no date computed from
 * it can leave the range JavaScript and PostgreSQL hold.
 */
export const DAY_MS = 86_400_000;
export const MAX_CLOCK_OFFSET_DAYS = 90;
export const MAX_CLOCK_STEP_DAYS = 30;

export async function clockOffsetMs(db: Database, userId: string): Promise<number> {
  const [row] = await db
    .select({ offsetMs: sandboxClocks.offsetMs })
    .from(sandboxClocks)
    .where(eq(sandboxClocks.userId, userId));
  return row?.offsetMs ?? 0;
}

export async function clockNow(db: Database, userId: string): Promise<Date> {
  return new Date(Date.now() + (await clockOffsetMs(db, userId)));
}

/**
 * Moves this creator's clock ahead by whole days (sandbox only; the routes refuse it in production
 * and with Stripe). One conditional statement, so concurrent steps cannot pass the bound together.
 */
export async function advanceClock(db: Database, userId: string, days: number): Promise<number> {
  if (!Number.isInteger(days) || days < 1 || days > MAX_CLOCK_STEP_DAYS)
    throw invalidFields({ advance_days: `must be a whole number of days from 1 to ${MAX_CLOCK_STEP_DAYS}` });
  const ms = days * DAY_MS;
  const limit = MAX_CLOCK_OFFSET_DAYS * DAY_MS;
  const [row] = await db
    .insert(sandboxClocks)
    .values({ userId, offsetMs: ms })
    .onConflictDoUpdate({
      target: sandboxClocks.userId,
      set: { offsetMs: sql`${sandboxClocks.offsetMs} + ${ms}`, updatedAt: sql`now()` },
      where: sql`${sandboxClocks.offsetMs} + ${ms} <= ${limit}`,
    })
    .returning({ offsetMs: sandboxClocks.offsetMs });
  if (row) return row.offsetMs;
  const now = await clockOffsetMs(db, userId);
  throw invalidFields({
    advance_days: `would move your test clock past ${MAX_CLOCK_OFFSET_DAYS} days ahead (it is ${Math.round(now / DAY_MS)} days ahead; at most ${Math.max(0, Math.floor((limit - now) / DAY_MS))} more)`,
  });
}
