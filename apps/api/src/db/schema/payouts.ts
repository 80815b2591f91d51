import { sql } from "drizzle-orm";
import { boolean, check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { users } from "./auth.ts";
import { bigNumber, createdAt, generatedId, reference, timestamptz, updatedAt } from "./columns.ts";

/**
 * A creator's connected account for payouts (docs/decisions/027): a Stripe Connect Express account,
 * or the offline sandbox's. The flags follow Stripe's `account.updated` (the sandbox sets them
 * itself when its onboarding page is completed).
 */
export const connectAccounts = pgTable(
  "connect_accounts",
  {
    userId: uuid("user_id")
      .primaryKey()
      .references(() => users.id, { onDelete: "restrict" }),
    gateway: text("gateway", { enum: ["stripe", "sandbox"] }).notNull(),
    /** `acct_…` (Stripe) or `acct_sbx_…` (sandbox). */
    externalId: text("external_id").notNull(),
    detailsSubmitted: boolean("details_submitted").notNull().default(false),
    payoutsEnabled: boolean("payouts_enabled").notNull().default(false),
    /** Stripe's `requirements.disabled_reason`, when the account cannot be paid. */
    disabledReason: text("disabled_reason"),
    /** Stripe's `requirements.currently_due`. */
    requirementsDue: jsonb("requirements_due").$type<string[]>().notNull().default([]),
    /** The sandbox's test bank account: payouts to it succeed or fail. */
    sandboxBank: text("sandbox_bank", { enum: ["succeeds", "fails"] }),
    /** The sandbox onboarding link's secret (SHA-256) and expiry; single use, like an account link. */
    onboardingTokenSha256: text("onboarding_token_sha256"),
    onboardingTokenExpiresAt: timestamptz("onboarding_token_expires_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("connect_accounts_external_key").on(t.gateway, t.externalId),
    check("connect_accounts_gateway", sql`${t.gateway} in ('stripe', 'sandbox')`),
    check(
      "connect_accounts_sandbox_bank",
      sql`${t.sandboxBank} is null or ${t.sandboxBank} in ('succeeds', 'fails')`,
    ),
  ],
);

export type PayoutStatus = "pending" | "in_transit" | "paid" | "failed" | "reversed";

/**
 * One payout of a creator's available earnings (whole cents). `pending`: the ledger moved the money
 * to the platform's `payouts` account, Stripe has not been told yet (a retrier finishes it with the
 * same idempotency keys); `in_transit`: transferred and paid out to the bank; then `paid`, or
 * `failed` / `reversed` with the money back in the creator's earnings.
 */
export const payouts = pgTable(
  "payouts",
  {
    id: generatedId(),
    creatorId: reference("creator_id", () => users.id, "restrict"),
    gateway: text("gateway", { enum: ["stripe", "sandbox"] }).notNull(),
    connectAccountId: text("connect_account_id").notNull(),
    amountCents: bigNumber("amount_cents").notNull(),
    currency: text("currency").notNull().default("usd"),
    status: text("status", { enum: ["pending", "in_transit", "paid", "failed", "reversed"] })
      .notNull()
      .default("pending"),
    /** Made by the schedule (PAYOUT_SCHEDULE), not by the creator's Withdraw. */
    automatic: boolean("automatic").notNull().default(false),
    /** `manual:<Idempotency-Key>` or `auto:<period>`: unique per creator, so a request pays once. */
    idempotencyKey: text("idempotency_key").notNull(),
    /** The amount the request asked for (null: everything available), to refuse a reused key. */
    requestedCents: bigNumber("requested_cents"),
    failureCode: text("failure_code"),
    failureReason: text("failure_reason"),
    transferId: text("transfer_id"),
    stripePayoutId: text("stripe_payout_id"),
    reversalId: text("reversal_id"),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    inTransitAt: timestamptz("in_transit_at"),
    paidAt: timestamptz("paid_at"),
    failedAt: timestamptz("failed_at"),
  },
  (t) => [
    uniqueIndex("payouts_idempotency_key").on(t.creatorId, t.idempotencyKey),
    uniqueIndex("payouts_stripe_payout_key").on(t.stripePayoutId),
    index("payouts_creator_idx").on(t.creatorId, t.createdAt),
    index("payouts_open_idx").on(t.status, t.updatedAt),
    check("payouts_amount_positive", sql`${t.amountCents} > 0`),
    check("payouts_status", sql`${t.status} in ('pending', 'in_transit', 'paid', 'failed', 'reversed')`),
    check("payouts_gateway", sql`${t.gateway} in ('stripe', 'sandbox')`),
  ],
);

/**
 * The sandbox's test clock, per creator: how far that creator's payouts "now" is moved ahead
 * (forward only, at most MAX_CLOCK_OFFSET_DAYS; docs/decisions/046). No row: the real time.
 */
export const sandboxClocks = pgTable(
  "sandbox_clocks",
  {
    userId: uuid("user_id")
      .primaryKey()
      .references(() => users.id, { onDelete: "cascade" }),
    offsetMs: bigNumber("offset_ms").notNull().default(0),
    updatedAt: updatedAt(),
  },
  (t) => [check("sandbox_clocks_bounded", sql`${t.offsetMs} >= 0 AND ${t.offsetMs} <= 7776000000`)],
);
