import {
  bigint,
  date,
  integer,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";

/**
 * Daily rollups, kept in the transaction that records each invocation. Stats are split over a few
 * shards per (app, day) so concurrent calls to one busy app update different rows; reads sum them.
 */
export const appDailyStats = pgTable(
  "app_daily_stats",
  {
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    day: date("day").notNull(),
    shard: smallint("shard").notNull(),
    invocations: integer("invocations").notNull().default(0),
    successes: integer("successes").notNull().default(0),
    errors: integer("errors").notNull().default(0),
    latencyMsSum: bigint("latency_ms_sum", { mode: "number" }).notNull().default(0),
    inputTokens: bigint("input_tokens", { mode: "number" }).notNull().default(0),
    outputTokens: bigint("output_tokens", { mode: "number" }).notNull().default(0),
    revenueCents: bigint("revenue_cents", { mode: "number" }).notNull().default(0),
    lastInvocationAt: timestamp("last_invocation_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.day, t.shard] })],
);

/** Who called an app on a day (the Dify `user`, else the calling account): distinct users per window. */
export const appDailyUsers = pgTable(
  "app_daily_users",
  {
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    day: date("day").notNull(),
    endUser: text("end_user").notNull(),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.day, t.endUser] })],
);

export const appDailyErrors = pgTable(
  "app_daily_errors",
  {
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "cascade" }),
    day: date("day").notNull(),
    errorType: text("error_type").notNull(),
    count: integer("count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.day, t.errorType] })],
);
