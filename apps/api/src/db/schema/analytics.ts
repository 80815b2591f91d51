import { sql } from "drizzle-orm";
import { date, index, integer, pgTable, primaryKey, smallint, text } from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { users } from "./auth.ts";
import { bigNumber, reference, timestamptz } from "./columns.ts";

/** What an app's and an owner's daily rollup rows count of their calls. */
const dailyCallCounts = () => ({
  invocations: integer("invocations").notNull().default(0),
  successes: integer("successes").notNull().default(0),
  errors: integer("errors").notNull().default(0),
  latencyMsSum: bigNumber("latency_ms_sum").notNull().default(0),
  inputTokens: bigNumber("input_tokens").notNull().default(0),
  outputTokens: bigNumber("output_tokens").notNull().default(0),
});

/**
 * Daily rollups, kept in the transaction that records each invocation. Stats are split over a few
 * shards per (app, day) so concurrent calls to one busy app update different rows; reads sum them,
 * and compactRollups() folds the shards of finished days into shard 0.
 */
export const appDailyStats = pgTable(
  "app_daily_stats",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    day: date("day").notNull(),
    shard: smallint("shard").notNull(),
    ...dailyCallCounts(),
    /** Gross: what the app's successful calls were charged (whole cents: prices are). */
    revenueCents: bigNumber("revenue_cents").notNull().default(0),
    /** The platform's fee of those calls, exact in micro-dollars (issue 17). */
    feeMicros: bigNumber("fee_micros").notNull().default(0),
    /** What those calls cost at the model vendor (platform keys), in micro-dollars. */
    modelCostMicros: bigNumber("model_cost_micros").notNull().default(0),
    lastInvocationAt: timestamptz("last_invocation_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.applicationId, t.day, t.shard] }),
    // Finds the shards compactRollups() folds without scanning every app's history.
    index("app_daily_stats_unfolded_idx").on(t.day).where(sql`${t.shard} <> 0`),
  ],
);

/**
 * An app's daily rollup per prompt version (issue 31 part 4): the calls that named the version that
 * answered them (`invocations.app_version`), kept by the same statement as app_daily_stats and
 * sharded and folded the same way. What the app's rollup has beyond these rows (workflow apps,
 * calls from before versions) is read as "no version", so the rows add up to it exactly.
 */
export const appVersionDailyStats = pgTable(
  "app_version_daily_stats",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    day: date("day").notNull(),
    version: integer("version").notNull(),
    shard: smallint("shard").notNull(),
    ...dailyCallCounts(),
    revenueCents: bigNumber("revenue_cents").notNull().default(0),
    feeMicros: bigNumber("fee_micros").notNull().default(0),
    /** What the calls cost at the model vendor (as app_daily_stats keeps it). */
    modelCostMicros: bigNumber("model_cost_micros").notNull().default(0),
    /** Of that, what the creator's share paid when the calls were charged (issue 17). */
    modelCostDeductedMicros: bigNumber("model_cost_deducted_micros").notNull().default(0),
  },
  (t) => [
    primaryKey({ name: "app_version_daily_stats_pk", columns: [t.applicationId, t.day, t.version, t.shard] }),
    index("app_version_daily_stats_unfolded_idx").on(t.day).where(sql`${t.shard} <> 0`),
  ],
);

/**
 * Each end user's latest day of calls to an app (the Dify `user`, else the calling account). Since
 * every window ends today, an app's distinct users over a window are exactly the rows whose
 * last_day is inside it: an index range count bounded by the users in the window.
 */
export const appUsers = pgTable(
  "app_users",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    endUser: text("end_user").notNull(),
    lastDay: date("last_day").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.applicationId, t.endUser] }),
    index("app_users_app_last_day_idx").on(t.applicationId, t.lastDay),
  ],
);

/**
 * The same across all of one owner's apps, for the dashboard's distinct users (a user of two of
 * the owner's apps counts once). Rebuilt from app_users when one of the owner's apps is deleted.
 */
export const ownerUsers = pgTable(
  "owner_users",
  {
    ownerId: reference("owner_id", () => users.id, "cascade"),
    endUser: text("end_user").notNull(),
    lastDay: date("last_day").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.ownerId, t.endUser] }),
    index("owner_users_owner_last_day_idx").on(t.ownerId, t.lastDay),
  ],
);

export const appDailyErrors = pgTable(
  "app_daily_errors",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    day: date("day").notNull(),
    errorType: text("error_type").notNull(),
    count: integer("count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.day, t.errorType] })],
);

/**
 * The dashboard's daily series across all of one owner's apps (≤ 90 rows per window once folded),
 * sharded like app_daily_stats. Deleting an app subtracts its days (forgetApplication()).
 */
export const ownerDailyStats = pgTable(
  "owner_daily_stats",
  {
    ownerId: reference("owner_id", () => users.id, "cascade"),
    day: date("day").notNull(),
    shard: smallint("shard").notNull(),
    ...dailyCallCounts(),
  },
  (t) => [
    primaryKey({ columns: [t.ownerId, t.day, t.shard] }),
    index("owner_daily_stats_unfolded_idx").on(t.day).where(sql`${t.shard} <> 0`),
  ],
);

/** The dashboard's error types across one owner's apps, sharded the same way. */
export const ownerDailyErrors = pgTable(
  "owner_daily_errors",
  {
    ownerId: reference("owner_id", () => users.id, "cascade"),
    day: date("day").notNull(),
    errorType: text("error_type").notNull(),
    shard: smallint("shard").notNull(),
    count: integer("count").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.ownerId, t.day, t.errorType, t.shard] }),
    index("owner_daily_errors_unfolded_idx").on(t.day).where(sql`${t.shard} <> 0`),
  ],
);

/**
 * The latency histogram of an app's answered calls per day (migration 0059, docs/decisions/081):
 * `latency_ms` is the bucket, the latency floored to three significant digits (exact below a
 * second). Kept by the statement that keeps app_daily_stats, sharded and folded the same way; the
 * Explore health figures read their median from it.
 */
export const appDailyLatency = pgTable(
  "app_daily_latency",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    day: date("day").notNull(),
    latencyMs: integer("latency_ms").notNull(),
    shard: smallint("shard").notNull(),
    calls: integer("calls").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.applicationId, t.day, t.latencyMs, t.shard] }),
    index("app_daily_latency_unfolded_idx").on(t.day).where(sql`${t.shard} <> 0`),
  ],
);
