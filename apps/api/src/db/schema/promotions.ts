import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { users } from "./auth.ts";
import { bigNumber, createdAt, generatedId, reference, timestamptz } from "./columns.ts";

/**
 * Free trials and promotion codes (issue 42, migration 0058, docs/decisions/080): what a creator
 * sponsors for a consumer, spent by calls the creator pays for (billing/sponsored).
 */

/** An app's free trial: `trial_calls` calls per consumer (0: none offered). */
export const trialOffers = pgTable("trial_offers", {
  applicationId: uuid("application_id")
    .primaryKey()
    .references(() => applications.id, { onDelete: "cascade" }),
  trialCalls: integer("trial_calls").notNull(),
  updatedAt: timestamptz("updated_at").notNull().defaultNow(),
});

/** A creator's promotion code; `redemptions <= max_redemptions` is a CHECK. */
export const promotionCodes = pgTable(
  "promotion_codes",
  {
    id: generatedId(),
    creatorId: reference("creator_id", () => users.id, "cascade"),
    applicationId: uuid("application_id").references(() => applications.id, { onDelete: "cascade" }),
    code: text("code").notNull(),
    kind: text("kind", { enum: ["amount", "percent"] }).notNull(),
    amountMicros: bigNumber("amount_micros"),
    percent: integer("percent"),
    capMicros: bigNumber("cap_micros"),
    maxRedemptions: integer("max_redemptions").notNull(),
    redemptions: integer("redemptions").notNull().default(0),
    startsAt: timestamptz("starts_at").notNull().defaultNow(),
    expiresAt: timestamptz("expires_at"),
    endedAt: timestamptz("ended_at"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("promotion_codes_code_key").on(sql`lower(${t.code})`),
    index("promotion_codes_creator_idx").on(t.creatorId, t.createdAt),
    check(
      "promotion_codes_redemptions_check",
      sql`${t.redemptions} >= 0 AND ${t.redemptions} <= ${t.maxRedemptions}`,
    ),
  ],
);

/** A trial's calls or a redeemed code's credit, sponsored by `creator_id` for `consumer_id`. */
export const sponsoredGrants = pgTable(
  "sponsored_grants",
  {
    id: generatedId(),
    kind: text("kind", { enum: ["trial", "promotion"] }).notNull(),
    consumerId: reference("consumer_id", () => users.id, "cascade"),
    creatorId: reference("creator_id", () => users.id, "cascade"),
    applicationId: uuid("application_id").references(() => applications.id, { onDelete: "cascade" }),
    promotionCodeId: uuid("promotion_code_id").references(() => promotionCodes.id, { onDelete: "cascade" }),
    callsLeft: integer("calls_left"),
    creditLeftMicros: bigNumber("credit_left_micros"),
    bonusPercent: integer("bonus_percent"),
    bonusCapMicros: bigNumber("bonus_cap_micros"),
    bonusAppliedAt: timestamptz("bonus_applied_at"),
    expiresAt: timestamptz("expires_at"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("sponsored_grants_redemption_key")
      .on(t.promotionCodeId, t.consumerId)
      .where(sql`${t.promotionCodeId} IS NOT NULL`),
    index("sponsored_grants_consumer_idx").on(t.consumerId, t.creatorId),
  ],
);

/** Who took an app's trial: `account:`, `card:` or `payer:` identities, one trial each. */
export const trialClaims = pgTable(
  "trial_claims",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    identity: text("identity").notNull(),
    grantId: reference("grant_id", () => sponsoredGrants.id, "cascade"),
  },
  (t) => [primaryKey({ columns: [t.applicationId, t.identity] })],
);

/** A call a grant pays for: `reserved` while it runs, `spent` once recorded paid by its creator. */
export const sponsoredCalls = pgTable(
  "sponsored_calls",
  {
    callId: uuid("call_id").primaryKey(),
    grantId: reference("grant_id", () => sponsoredGrants.id, "cascade"),
    calls: integer("calls").notNull(),
    micros: bigNumber("micros").notNull(),
    state: text("state", { enum: ["reserved", "spent"] }).notNull(),
    expiresAt: timestamptz("expires_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("sponsored_calls_grant_idx").on(t.grantId),
    index("sponsored_calls_reserved_idx").on(t.expiresAt).where(sql`${t.state} = 'reserved'`),
  ],
);
