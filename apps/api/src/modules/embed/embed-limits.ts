import { EMBED_LIMIT_DEFAULTS, type UpdateEmbedSettings } from "@promptmint/contracts";
import { and, eq, lt, sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { embedDailySpend, embedLimits, embedVisitorCalls } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";

/**
 * What embedded traffic may cost an app's owner (docs/decisions/022-embed-spend-caps.md).
 * Invariant: the owner's embedded spend in one UTC day never exceeds the app's daily cap. Every
 * call adds its price to the (app, day) counter with a conditional update *before* it is paid
 * for, so concurrent calls on any number of API processes cannot pass the cap together; a call
 * that is not charged gives its price back.
 */
export interface EmbedLimits {
  dailyCapCents: number;
  visitorCallsPerHour: number;
  visitorCallsPerDay: number;
}

const DEFAULTS: EmbedLimits = {
  dailyCapCents: EMBED_LIMIT_DEFAULTS.daily_cap_cents,
  visitorCallsPerHour: EMBED_LIMIT_DEFAULTS.visitor_calls_per_hour,
  visitorCallsPerDay: EMBED_LIMIT_DEFAULTS.visitor_calls_per_day,
};

const utcToday = sql`(now() at time zone 'utc')::date`;

export async function getEmbedLimits(db: Database, applicationId: string): Promise<EmbedLimits> {
  const [row] = await db.select().from(embedLimits).where(eq(embedLimits.applicationId, applicationId));
  return row ?? DEFAULTS;
}

/** Saves the limits the update names; the others keep their current (or default) values. */
export async function updateEmbedLimits(db: Database, applicationId: string, update: UpdateEmbedSettings) {
  const current = await getEmbedLimits(db, applicationId);
  const next = {
    dailyCapCents: update.daily_cap_cents ?? current.dailyCapCents,
    visitorCallsPerHour: update.visitor_calls_per_hour ?? current.visitorCallsPerHour,
    visitorCallsPerDay: update.visitor_calls_per_day ?? current.visitorCallsPerDay,
  };
  await db
    .insert(embedLimits)
    .values({ applicationId, ...next })
    .onConflictDoUpdate({ target: embedLimits.applicationId, set: { ...next, updatedAt: sql`now()` } });
}

export async function spentTodayCents(db: Database, applicationId: string): Promise<number> {
  const [row] = await db
    .select({ spent: embedDailySpend.spentCents })
    .from(embedDailySpend)
    .where(and(eq(embedDailySpend.applicationId, applicationId), eq(embedDailySpend.day, utcToday)));
  return row?.spent ?? 0;
}

const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

/** Seconds until the next 00:00 UTC, when caps and daily visitor counts start again. */
function secondsUntilUtcMidnight(now = new Date()): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}

function secondsUntilNextHour(): number {
  return 3600 - (Math.floor(Date.now() / 1000) % 3600);
}

export interface EmbedSpend {
  /** Gives the price back to today's counter: for a call that was not charged. */
  giveBack(): Promise<void>;
}

/**
 * Adds one call's price to the app's spend today, or refuses (429 naming the cap) when that would
 * pass the cap. One statement: the row lock orders concurrent calls, each sees the last total.
 */
export async function reserveEmbedSpend(
  db: Database,
  options: { applicationId: string; priceCents: number; capCents: number },
): Promise<EmbedSpend> {
  const { applicationId, priceCents, capCents } = options;
  const [reserved] = await queryRows<{ day: string }>(
    db,
    sql`insert into embed_daily_spend (application_id, day, spent_cents)
        select ${applicationId}::uuid, ${utcToday}, ${priceCents}::int where ${priceCents}::int <= ${capCents}::int
        on conflict (application_id, day) do update
          set spent_cents = embed_daily_spend.spent_cents + excluded.spent_cents
          where embed_daily_spend.spent_cents + excluded.spent_cents <= ${capCents}::int
        returning day::text as day`,
  );
  if (!reserved) {
    const wait = secondsUntilUtcMidnight();
    throw new AppError(
      "rate_limited",
      `This app's daily spending cap for embedded use (${dollars(capCents)}) is reached; it resets at 00:00 UTC`,
      { headers: { "retry-after": String(wait) } },
    );
  }
  let givenBack = false;
  return {
    async giveBack() {
      if (givenBack || priceCents === 0) return;
      givenBack = true;
      await db
        .update(embedDailySpend)
        .set({ spentCents: sql`greatest(${embedDailySpend.spentCents} - ${priceCents}::int, 0)` })
        .where(and(eq(embedDailySpend.applicationId, applicationId), eq(embedDailySpend.day, reserved.day)));
    },
  };
}

/**
 * Counts a call against the visitor's hourly and daily allowance, once by the token's visitor id
 * (one widget load) and once by the client address as the server sees it (`request.ip`, which
 * follows X-Forwarded-For only from proxies TRUST_PROXY names): a new widget load does not reset
 * the address's count, and a forged X-Forwarded-For does not reset the widget load's. Refused
 * calls are not counted (the transaction rolls back).
 */
export async function countVisitorCall(
  db: Database,
  options: { applicationId: string; visitorId: string; ip: string; limits: EmbedLimits },
): Promise<void> {
  const { applicationId, limits } = options;
  const windows = [
    { window: "hour" as const, start: sql`date_trunc('hour', now())`, limit: limits.visitorCallsPerHour },
    {
      window: "day" as const,
      start: sql`(date_trunc('day', now() at time zone 'utc') at time zone 'utc')`,
      limit: limits.visitorCallsPerDay,
    },
  ];
  // Sorted keys: concurrent transactions lock the rows in one order and never deadlock.
  const visitors = [`id:${options.visitorId}`, `ip:${options.ip}`].sort();
  await db.transaction(async (tx) => {
    const counted = await tx
      .insert(embedVisitorCalls)
      .values(
        visitors.flatMap((visitor) =>
          windows.map(({ window, start }) => ({
            applicationId,
            visitor,
            window,
            windowStart: start,
            calls: 1,
          })),
        ),
      )
      .onConflictDoUpdate({
        target: [
          embedVisitorCalls.applicationId,
          embedVisitorCalls.visitor,
          embedVisitorCalls.window,
          embedVisitorCalls.windowStart,
        ],
        set: { calls: sql`${embedVisitorCalls.calls} + 1` },
      })
      .returning({ window: embedVisitorCalls.window, calls: embedVisitorCalls.calls });
    const over = windows.find(({ window, limit }) =>
      counted.some((row) => row.window === window && row.calls > limit),
    );
    if (over) {
      const per = over.window === "hour" ? "an hour" : "a day (UTC)";
      throw new AppError(
        "rate_limited",
        `Too many messages from this visitor: at most ${over.limit} ${per}; try again later`,
        {
          headers: {
            "retry-after": String(
              over.window === "hour" ? secondsUntilNextHour() : secondsUntilUtcMidnight(),
            ),
          },
        },
      );
    }
  });
}

/** Visitor counts of finished days are of no further use. */
export async function sweepEmbedVisitorCalls(db: Database): Promise<void> {
  await db.delete(embedVisitorCalls).where(lt(embedVisitorCalls.windowStart, sql`now() - interval '2 days'`));
}
