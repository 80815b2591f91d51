import { sql } from "drizzle-orm";
import { check, date, index, integer, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { createdAt, reference, timestamptz, updatedAt } from "./columns.ts";

/** The sites (exact origins) allowed to show an embed app's widget and call it with an embed token. */
export const embedOrigins = pgTable(
  "embed_origins",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    origin: text("origin").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.origin] })],
);

/**
 * What the owner lets embedded traffic cost them (docs/decisions/022). An app without a row has
 * the defaults (EMBED_LIMIT_DEFAULTS in contracts, the same numbers as these column defaults).
 */
export const embedLimits = pgTable(
  "embed_limits",
  {
    applicationId: uuid("application_id")
      .primaryKey()
      .references(() => applications.id, { onDelete: "cascade" }),
    dailyCapCents: integer("daily_cap_cents").notNull().default(500),
    visitorCallsPerHour: integer("visitor_calls_per_hour").notNull().default(20),
    visitorCallsPerDay: integer("visitor_calls_per_day").notNull().default(100),
    updatedAt: updatedAt(),
  },
  (t) => [
    check("embed_limits_cap_nonnegative", sql`${t.dailyCapCents} >= 0`),
    check("embed_limits_visitor_positive", sql`${t.visitorCallsPerHour} > 0 and ${t.visitorCallsPerDay} > 0`),
  ],
);

/**
 * Embedded spend per app and UTC day: the price of every call in flight or charged. A call adds
 * its price here with a conditional update before it runs, so no two processes can pass the cap.
 */
export const embedDailySpend = pgTable(
  "embed_daily_spend",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    day: date("day").notNull(),
    spentCents: integer("spent_cents").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.applicationId, t.day] }),
    check("embed_daily_spend_nonnegative", sql`${t.spentCents} >= 0`),
  ],
);

/** Embedded calls per visitor (`id:<visitor id>` or `ip:<address>`) and window (hour or UTC day). */
export const embedVisitorCalls = pgTable(
  "embed_visitor_calls",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    visitor: text("visitor").notNull(),
    window: text("window", { enum: ["hour", "day"] }).notNull(),
    windowStart: timestamptz("window_start").notNull(),
    calls: integer("calls").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.applicationId, t.visitor, t.window, t.windowStart] }),
    index("embed_visitor_calls_window_start_idx").on(t.windowStart),
  ],
);
