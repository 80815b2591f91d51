import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  check,
  index,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { applications, invocations } from "./applications.ts";
import { users } from "./auth.ts";

/**
 * Double-entry ledger (integer cents). Every account's balance is the sum of its entries, kept in
 * `balance_cents` for conditional updates; only `clearing` (money from outside) may go negative.
 */
export const ledgerAccounts = pgTable(
  "ledger_accounts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    kind: text("kind", { enum: ["wallet", "held", "earnings", "platform_fee", "clearing"] }).notNull(),
    /** The user a wallet, held or earnings account belongs to; null for platform accounts. */
    ownerId: uuid("owner_id").references(() => users.id, { onDelete: "restrict" }),
    balanceCents: bigint("balance_cents", { mode: "number" }).notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("ledger_accounts_kind_owner_key").on(
      t.kind,
      sql`coalesce(${t.ownerId}, '00000000-0000-0000-0000-000000000000'::uuid)`,
    ),
    check("ledger_accounts_nonnegative", sql`${t.kind} = 'clearing' or ${t.balanceCents} >= 0`),
  ],
);

export const ledgerTransactions = pgTable(
  "ledger_transactions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    kind: text("kind", { enum: ["top_up", "hold", "settle", "release", "reversal"] }).notNull(),
    /** What caused it (payment intent id, hold id); unique per kind so a cause is applied once. */
    reference: text("reference").notNull(),
    description: text("description").notNull().default(""),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("ledger_transactions_kind_reference_key").on(t.kind, t.reference)],
);

export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    transactionId: uuid("transaction_id")
      .notNull()
      .references(() => ledgerTransactions.id, { onDelete: "restrict" }),
    accountId: uuid("account_id")
      .notNull()
      .references(() => ledgerAccounts.id, { onDelete: "restrict" }),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("ledger_entries_account_idx").on(t.accountId, t.id),
    index("ledger_entries_transaction_idx").on(t.transactionId),
  ],
);

/** Money set aside for a paid call in flight: settled, released, or released by the sweeper on expiry. */
export const holds = pgTable(
  "holds",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    payerId: uuid("payer_id")
      .notNull()
      .references(() => users.id, { onDelete: "restrict" }),
    applicationId: uuid("application_id")
      .notNull()
      .references(() => applications.id, { onDelete: "restrict" }),
    creatorId: uuid("creator_id")
      .notNull()
      .references(() => users.id, { onDelete: "restrict" }),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    status: text("status", { enum: ["held", "settled", "released"] })
      .notNull()
      .default("held"),
    invocationId: uuid("invocation_id").references(() => invocations.id, { onDelete: "set null" }),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    closedAt: timestamp("closed_at", { withTimezone: true }),
  },
  (t) => [
    index("holds_open_idx").on(t.status, t.expiresAt),
    check("holds_amount_positive", sql`${t.amountCents} > 0`),
  ],
);

/** Wallet top-ups through a payment gateway (sandbox or Stripe), credited once per payment. */
export const payments = pgTable(
  "payments",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "restrict" }),
    gateway: text("gateway", { enum: ["sandbox", "stripe"] }).notNull(),
    externalId: text("external_id").notNull(),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    currency: text("currency").notNull().default("usd"),
    status: text("status", {
      enum: ["requires_payment_method", "succeeded", "failed", "requires_action"],
    }).notNull(),
    metadata: jsonb("metadata").notNull().default({}),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("payments_external_key").on(t.gateway, t.externalId)],
);
