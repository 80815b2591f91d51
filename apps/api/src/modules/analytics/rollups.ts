import { sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { appDailyErrors, appDailyStats, appDailyUsers } from "../../db/schema/index.ts";

export const ROLLUP_SHARDS = 8;

export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/** Adds one invocation to its app's daily rollups (inside the transaction that records it). */
export async function addToRollups(
  db: Database,
  call: {
    applicationId: string;
    at: Date;
    status: "success" | "error";
    errorType: string | null;
    latencyMs: number;
    inputTokens: number;
    outputTokens: number;
    revenueCents: number;
    userKey: string;
  },
): Promise<void> {
  const day = utcDay(call.at);
  const success = call.status === "success" ? 1 : 0;
  const row = {
    applicationId: call.applicationId,
    day,
    shard: Math.floor(Math.random() * ROLLUP_SHARDS),
    invocations: 1,
    successes: success,
    errors: 1 - success,
    latencyMsSum: call.latencyMs,
    inputTokens: call.inputTokens,
    outputTokens: call.outputTokens,
    revenueCents: call.revenueCents,
    lastInvocationAt: call.at,
  };
  await db
    .insert(appDailyStats)
    .values(row)
    .onConflictDoUpdate({
      target: [appDailyStats.applicationId, appDailyStats.day, appDailyStats.shard],
      set: {
        invocations: sql`${appDailyStats.invocations} + 1`,
        successes: sql`${appDailyStats.successes} + ${success}`,
        errors: sql`${appDailyStats.errors} + ${1 - success}`,
        latencyMsSum: sql`${appDailyStats.latencyMsSum} + ${call.latencyMs}`,
        inputTokens: sql`${appDailyStats.inputTokens} + ${call.inputTokens}`,
        outputTokens: sql`${appDailyStats.outputTokens} + ${call.outputTokens}`,
        revenueCents: sql`${appDailyStats.revenueCents} + ${call.revenueCents}`,
        lastInvocationAt: sql`greatest(${appDailyStats.lastInvocationAt}, ${call.at.toISOString()}::timestamptz)`,
      },
    });
  await db
    .insert(appDailyUsers)
    .values({ applicationId: call.applicationId, day, endUser: call.userKey })
    .onConflictDoNothing();
  if (call.status === "error") {
    await db
      .insert(appDailyErrors)
      .values({ applicationId: call.applicationId, day, errorType: call.errorType ?? "", count: 1 })
      .onConflictDoUpdate({
        target: [appDailyErrors.applicationId, appDailyErrors.day, appDailyErrors.errorType],
        set: { count: sql`${appDailyErrors.count} + 1` },
      });
  }
}
