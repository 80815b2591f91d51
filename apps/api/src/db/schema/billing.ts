import { sql } from "drizzle-orm";
import {
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { users } from "./auth.ts";
import { bigNumber, createdAt, generatedId, reference, timestamptz } from "./columns.ts";

/**
 * Double-entry ledger in integer micro-dollars (1 cent = 10,000; billing/money.ts). Every
 * account's balance is the sum of its entries, kept in `balance_micros` for conditional updates;
 * only `clearing` (money from outside) may go negative, and a user's `debt` (what they owe, as a
 * negative balance: a refunded or disputed payment already spent).
 */
export const ledgerAccounts = pgTable(
  "ledger_accounts",
  {
    id: generatedId(),
    kind: text("kind", {
      enum: [
        "wallet",
        "held",
        "earnings",
        "debt",
        "platform_fee",
        "clearing",
        "x402_clearing",
        "model_cost",
        "payouts",
        "refunds_owed",
      ],
    }).notNull(),
    /** The user a wallet, held or earnings account belongs to; null for platform accounts. */
    ownerId: uuid("owner_id").references(() => users.id, { onDelete: "restrict" }),
    balanceMicros: bigNumber("balance_micros").notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("ledger_accounts_kind_owner_key").on(
      t.kind,
      sql`coalesce(${t.ownerId}, '00000000-0000-0000-0000-000000000000'::uuid)`,
    ),
    check(
      "ledger_accounts_nonnegative",
      sql`${t.kind} in ('clearing', 'x402_clearing') or (${t.kind} = 'debt' and ${t.balanceMicros} <= 0) or ${t.balanceMicros} >= 0`,
    ),
  ],
);

export const ledgerTransactions = pgTable(
  "ledger_transactions",
  {
    id: generatedId(),
    kind: text("kind", {
      enum: [
        "top_up",
        "hold",
        "settle",
        "release",
        "reversal",
        "subscription",
        "model_cost",
        "payout",
        "payout_paid",
        "payout_return",
        "x402_payment",
        "x402_credit",
        "mpp_credit",
        "agent_refund",
        "agent_refund_paid",
      ],
    }).notNull(),
    /** What caused it (payment intent id, hold id); unique per kind so a cause is applied once. */
    reference: text("reference").notNull(),
    description: text("description").notNull().default(""),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("ledger_transactions_kind_reference_key").on(t.kind, t.reference)],
);

export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    transactionId: reference("transaction_id", () => ledgerTransactions.id, "restrict"),
    accountId: reference("account_id", () => ledgerAccounts.id, "restrict"),
    amountMicros: bigNumber("amount_micros").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("ledger_entries_account_idx").on(t.accountId, t.id),
    index("ledger_entries_transaction_idx").on(t.transactionId),
  ],
);

/** Money set aside for a paid call in flight: settled, released, or released by the sweeper on expiry. */
/**
 * An included call taken for a call in flight (docs/decisions/025): deleted when the call is
 * recorded or gives it back; the sweeper gives back one a crashed process left, once expired.
 * Its id is the call's (the invocation's) id.
 */
export const includedCalls = pgTable(
  "included_calls",
  {
    id: uuid("id").primaryKey(),
    subscriptionId: uuid("subscription_id").notNull(),
    periodStart: timestamptz("period_start").notNull(),
    expiresAt: timestamptz("expires_at").notNull(),
  },
  (t) => [index("included_calls_expiry_idx").on(t.expiresAt)],
);

export const holds = pgTable(
  "holds",
  {
    id: generatedId(),
    payerId: reference("payer_id", () => users.id, "restrict"),
    applicationId: reference("application_id", () => applications.id, "restrict"),
    creatorId: reference("creator_id", () => users.id, "restrict"),
    /** What was set aside (micro-dollars): one call's price, or a lease covering several calls (docs/decisions/018). */
    amountMicros: bigNumber("amount_micros").notNull(),
    /**
     * How much of it paid calls so far (each call adds its price when it is recorded, durably,
     * before it answers). The ledger moves it when the hold closes: `settled_micros` to the
     * creator, the platform's fee and the model cost, the rest back to the wallet (decision 020).
     */
    settledMicros: bigNumber("settled_micros").notNull().default(0),
    /** The platform's share of `settled_micros`: the sum of each call's fee, exact. */
    feeMicros: bigNumber("fee_micros").notNull().default(0),
    /** The model cost its calls took from the creator's share (platform keys; issue 17). */
    modelCostMicros: bigNumber("model_cost_micros").notNull().default(0),
    /** How many calls paid from it. */
    calls: integer("calls").notNull().default(0),
    status: text("status", { enum: ["held", "settled", "released"] })
      .notNull()
      .default("held"),
    expiresAt: timestamptz("expires_at").notNull(),
    createdAt: createdAt(),
    closedAt: timestamptz("closed_at"),
    /** Another process asked for the money it holds back (decision 025): its process closes it. */
    recalledAt: timestamptz("recalled_at"),
  },
  (t) => [
    index("holds_open_idx").on(t.status, t.expiresAt),
    // An owner's embedded widget's leases (payer = creator), for their statement (migration 0024).
    index("holds_embedded_idx").on(t.payerId, t.createdAt).where(sql`${t.payerId} = ${t.creatorId}`),
    // Whether a person paid for an app from their wallet: may review it (migration 0059, decision 081).
    index("holds_payer_app_idx").on(t.payerId, t.applicationId),
    check("holds_amount_positive", sql`${t.amountMicros} > 0`),
    check(
      "holds_settled_within_amount",
      sql`${t.settledMicros} >= 0 and ${t.settledMicros} <= ${t.amountMicros}`,
    ),
    check(
      "holds_shares_within_settled",
      sql`${t.feeMicros} >= 0 and ${t.modelCostMicros} >= 0 and ${t.feeMicros} + ${t.modelCostMicros} <= ${t.settledMicros}`,
    ),
  ],
);

/**
 * A call no price pays for holds its worst-case model cost from its creator's wallet before the
 * vendor is called (issue 37, docs/decisions/062; billing/call-payment/model-cost-holds.ts). The
 * id is the call's (its invocation's) id: one hold per call. Its record posts what the call cost
 * (`spent_micros`) to the platform's model cost and releases the rest, in one transaction.
 */
export const modelCostHolds = pgTable(
  "model_cost_holds",
  {
    id: uuid("id").primaryKey(),
    creatorId: reference("creator_id", () => users.id, "restrict"),
    applicationId: reference("application_id", () => applications.id, "restrict"),
    /** The call's worst case: its input tokens × input price + max_tokens × output price. */
    amountMicros: bigNumber("amount_micros").notNull(),
    /** What the call cost at the vendor, posted to the platform's model cost (from the hold; beyond it, from the wallet). */
    spentMicros: bigNumber("spent_micros").notNull().default(0),
    /** What the vendor billed beyond the hold (it cannot if the worst case is right): the platform's loss. */
    overrunMicros: bigNumber("overrun_micros").notNull().default(0),
    status: text("status", { enum: ["held", "spent", "released"] })
      .notNull()
      .default("held"),
    expiresAt: timestamptz("expires_at").notNull(),
    createdAt: createdAt(),
    closedAt: timestamptz("closed_at"),
    /**
     * Released because the call's sponsor (its creator, decision 080) could not pay its price: the
     * caller paid instead, so the call's model cost never went through this hold.
     */
    supersededAt: timestamptz("superseded_at"),
  },
  (t) => [
    index("model_cost_holds_open_idx").on(t.expiresAt).where(sql`${t.status} = 'held'`),
    index("model_cost_holds_creator_idx").on(t.creatorId).where(sql`${t.status} = 'held'`),
    check("model_cost_holds_amount_positive", sql`${t.amountMicros} > 0`),
    check("model_cost_holds_spent_nonnegative", sql`${t.spentMicros} >= 0 and ${t.overrunMicros} >= 0`),
    check("model_cost_holds_status", sql`${t.status} in ('held', 'spent', 'released')`),
  ],
);

/** Wallet top-ups through a payment gateway (sandbox or Stripe), credited once per payment. */
export const payments = pgTable(
  "payments",
  {
    id: generatedId(),
    userId: reference("user_id", () => users.id, "restrict"),
    gateway: text("gateway", { enum: ["sandbox", "stripe"] }).notNull(),
    externalId: text("external_id").notNull(),
    amountCents: bigNumber("amount_cents").notNull(),
    currency: text("currency").notNull().default("usd"),
    status: text("status", {
      enum: ["requires_payment_method", "succeeded", "failed", "requires_action"],
    }).notNull(),
    /** What the money is for: the wallet, a plan's first period, or saving a card (amount 0). */
    purpose: text("purpose", { enum: ["top_up", "subscription", "setup"] })
      .notNull()
      .default("top_up"),
    packageId: uuid("package_id"),
    /**
     * What a succeeded payment ended in, set once, in the transaction that made it so: the
     * subscription it paid (`subscription`, the subscription's id), or a credit to the payer's
     * wallet (`wallet`, the top_up ledger transaction's id). Unique, so nothing is paid twice by
     * one payment nor one payment used twice (docs/decisions/023).
     */
    consumedKind: text("consumed_kind", { enum: ["subscription", "wallet", "refund"] }),
    consumedRef: text("consumed_ref"),
    consumedAt: timestamptz("consumed_at"),
    metadata: jsonb("metadata").notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("payments_external_key").on(t.gateway, t.externalId),
    uniqueIndex("payments_consumed_by_key").on(t.consumedKind, t.consumedRef),
    check(
      "payments_consumed_once",
      sql`(${t.consumedKind} is null) = (${t.consumedRef} is null) and (${t.consumedKind} is null) = (${t.consumedAt} is null) and (${t.consumedKind} is null or ${t.status} = 'succeeded')`,
    ),
  ],
);

/** A creator's plan for one app ("package" in SPEC's paths). */
export const packages = pgTable(
  "packages",
  {
    id: generatedId(),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    name: text("name").notNull(),
    priceCents: integer("price_cents").notNull(),
    /** A price increase waiting out its notice period, as on applications (billing/price-changes.ts). */
    pendingPriceCents: integer("pending_price_cents"),
    pendingPriceAt: timestamptz("pending_price_at"),
    currency: text("currency").notNull().default("usd"),
    description: text("description").notNull().default(""),
    features: jsonb("features").notNull().default({}),
    includedCalls: integer("included_calls").notNull(),
    isActive: boolean("is_active").notNull().default(true),
    /** The Stripe Product its card subscriptions are billed under, created on the first one. */
    stripeProductId: text("stripe_product_id"),
    createdAt: createdAt(),
  },
  (t) => [
    index("packages_application_idx").on(t.applicationId),
    check("packages_price_positive", sql`${t.priceCents} > 0`),
    check(
      "packages_pending_price_increase",
      sql`(${t.pendingPriceCents} is null) = (${t.pendingPriceAt} is null) and (${t.pendingPriceCents} is null or ${t.pendingPriceCents} > ${t.priceCents})`,
    ),
  ],
);
export type PackageRow = typeof packages.$inferSelect;

/**
 * A plan's terms, one immutable row per version (docs/decisions/044; a trigger refuses updates).
 * The terms in force at a moment are the newest version whose `effective_from` has come and that
 * no later version withdrew (billing/plan-terms.ts). A change that gives subscribers less takes
 * effect `PRICE_INCREASE_NOTICE_DAYS` after it was saved; one that gives them at least as much, at once.
 */
export const planTerms = pgTable(
  "plan_terms",
  {
    id: generatedId(),
    packageId: reference("package_id", () => packages.id, "cascade"),
    version: integer("version").notNull(),
    priceCents: integer("price_cents").notNull(),
    includedCalls: integer("included_calls").notNull(),
    periodDays: integer("period_days").notNull(),
    effectiveFrom: timestamptz("effective_from").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("plan_terms_package_version_key").on(t.packageId, t.version),
    check(
      "plan_terms_positive",
      sql`${t.priceCents} > 0 and ${t.includedCalls} >= 1 and ${t.periodDays} >= 1`,
    ),
    check("plan_terms_not_before_announced", sql`${t.effectiveFrom} >= ${t.createdAt}`),
  ],
);
export type PlanTermsRow = typeof planTerms.$inferSelect;

export const subscriptions = pgTable(
  "subscriptions",
  {
    id: generatedId(),
    packageId: reference("package_id", () => packages.id, "restrict"),
    applicationId: reference("application_id", () => applications.id, "restrict"),
    subscriberId: reference("subscriber_id", () => users.id, "restrict"),
    /** `incomplete`: a card subscription whose first invoice Stripe has not yet reported paid. */
    status: text("status", { enum: ["active", "canceled", "past_due", "incomplete"] })
      .notNull()
      .default("active"),
    /** Set when Stripe Billing renews it (card plans); then only Stripe's webhooks move it. */
    stripeSubscriptionId: text("stripe_subscription_id").unique(),
    cancelAtPeriodEnd: boolean("cancel_at_period_end").notNull().default(false),
    currentPeriodStart: timestamptz("current_period_start").notNull(),
    currentPeriodEnd: timestamptz("current_period_end").notNull(),
    callsUsed: integer("calls_used").notNull().default(0),
    callsIncluded: integer("calls_included").notNull(),
    /**
     * The terms the current period started under (null for periods from before migration 0033).
     * A card subscription keeps the terms it was subscribed at: Stripe charges their price.
     */
    termsId: uuid("terms_id").references(() => planTerms.id, { onDelete: "restrict" }),
    /**
     * The ledger transaction that paid the current period (null when none is known: a card
     * subscription awaiting its first invoice). An archived app refunds its unused part.
     */
    periodTransactionId: uuid("period_transaction_id").references(() => ledgerTransactions.id, {
      onDelete: "restrict",
    }),
    createdAt: createdAt(),
  },
  (t) => [
    index("subscriptions_lookup_idx").on(t.applicationId, t.subscriberId, t.status),
    // One live subscription per consumer and app, whatever the plan: concurrent subscribes
    // cannot both take the price (docs/decisions/023).
    uniqueIndex("subscriptions_one_live_per_app")
      .on(t.applicationId, t.subscriberId)
      .where(sql`${t.status} in ('active', 'incomplete')`),
    check(
      "subscriptions_calls_used_range",
      sql`${t.callsUsed} >= 0 and ${t.callsUsed} <= ${t.callsIncluded}`,
    ),
  ],
);
export type SubscriptionRow = typeof subscriptions.$inferSelect;

/**
 * Every period of a subscription and the terms it started under: what it allows
 * (`calls_included`) and what it was charged (`price_cents`, by `transaction_id`). The reconcile
 * judges each period by its own row, never by the plan's current terms (docs/decisions/044).
 */
export const subscriptionPeriods = pgTable(
  "subscription_periods",
  {
    subscriptionId: reference("subscription_id", () => subscriptions.id, "cascade"),
    periodStart: timestamptz("period_start").notNull(),
    periodEnd: timestamptz("period_end").notNull(),
    termsId: uuid("terms_id").references(() => planTerms.id, { onDelete: "restrict" }),
    callsIncluded: integer("calls_included").notNull(),
    /** What paid the period, in cents; null when not known (a card period awaiting its invoice). */
    priceCents: integer("price_cents"),
    transactionId: uuid("transaction_id").references(() => ledgerTransactions.id, { onDelete: "restrict" }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ name: "subscription_periods_pkey", columns: [t.subscriptionId, t.periodStart] })],
);

/** Saved cards: brand, last 4 and expiry only (Stripe keeps the card itself). */
export const paymentMethods = pgTable(
  "payment_methods",
  {
    id: generatedId(),
    userId: reference("user_id", () => users.id, "cascade"),
    gateway: text("gateway", { enum: ["sandbox", "stripe"] }).notNull(),
    externalId: text("external_id"),
    brand: text("brand").notNull(),
    last4: text("last4").notNull(),
    expMonth: integer("exp_month").notNull(),
    expYear: integer("exp_year").notNull(),
    billingAddress: jsonb("billing_address").notNull(),
    /** The card across accounts (Stripe's fingerprint; the sandbox's hash of the number), migration 0058. */
    fingerprint: text("fingerprint"),
    isDefault: boolean("is_default").notNull().default(false),
    createdAt: createdAt(),
    deletedAt: timestamptz("deleted_at"),
  },
  (t) => [
    index("payment_methods_user_idx").on(t.userId),
    index("payment_methods_fingerprint_idx").on(t.fingerprint).where(sql`${t.fingerprint} IS NOT NULL`),
  ],
);

/** A user's Stripe customer, created on their first Stripe payment. */
export const stripeCustomers = pgTable("stripe_customers", {
  userId: uuid("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  customerId: text("customer_id").notNull().unique(),
  createdAt: createdAt(),
});

/** Every Stripe webhook event applied, so a redelivered event is applied once. */
export const stripeEvents = pgTable("stripe_events", {
  id: text("id").primaryKey(),
  type: text("type").notNull(),
  receivedAt: timestamptz("received_at").notNull().defaultNow(),
});

/**
 * x402 payments (migration 0036, docs/decisions/052): one row per signed payment a call was
 * admitted with; (network, payer, nonce) is the payment's identity, so it pays at most once.
 */
export const x402Payments = pgTable(
  "x402_payments",
  {
    id: generatedId(),
    network: text("network").notNull(),
    /** The paying address, lower-cased. */
    payer: text("payer").notNull(),
    nonce: text("nonce").notNull(),
    scheme: text("scheme").notNull(),
    asset: text("asset").notNull(),
    payTo: text("pay_to").notNull(),
    /** The amount authorized, in the asset's atomic units: micro-dollars for a 6-decimal stablecoin. */
    amountMicros: bigNumber("amount_micros").notNull(),
    applicationId: reference("application_id", () => applications.id, "restrict"),
    /** The payer's account-less user (issuer `x402`): the invocations' caller. */
    payerUserId: reference("payer_user_id", () => users.id, "restrict"),
    invocationId: uuid("invocation_id"),
    /**
     * `credited` (migration 0048, decision 064): the money reached us for an answer never given,
     * kept for its payer (an `x402_credit` transaction into the payer's wallet).
     */
    status: text("status", { enum: ["verified", "settling", "settled", "credited", "failed", "unpaid"] })
      .notNull()
      .default("verified"),
    failure: text("failure"),
    txHash: text("tx_hash"),
    payload: jsonb("payload").notNull(),
    requirements: jsonb("requirements").notNull(),
    /** The answered call's record, kept while settling so that the sweep can record it after a crash. */
    callRecord: jsonb("call_record"),
    feePercent: numeric("fee_percent"),
    settleAttempts: integer("settle_attempts").notNull().default(0),
    /** x402's payment-identifier extension (issue 40): the payer's id for this payment, retried as one. */
    paymentIdentifier: text("payment_identifier"),
    createdAt: createdAt(),
    updatedAt: timestamptz("updated_at").notNull().defaultNow(),
    settledAt: timestamptz("settled_at"),
  },
  (t) => [
    uniqueIndex("x402_payments_identity_key").on(t.network, t.payer, t.nonce),
    uniqueIndex("x402_payments_payment_identifier_key")
      .on(t.payerUserId, t.paymentIdentifier)
      .where(sql`${t.paymentIdentifier} is not null and ${t.status} <> 'failed'`),
    uniqueIndex("x402_payments_invocation_key").on(t.invocationId),
    index("x402_payments_open_idx").on(t.updatedAt).where(sql`${t.status} in ('verified', 'settling')`),
    check(
      "x402_payments_status",
      sql`${t.status} in ('verified', 'settling', 'settled', 'credited', 'failed', 'unpaid')`,
    ),
    check("x402_payments_amount_positive", sql`${t.amountMicros} > 0`),
    check(
      "x402_payments_settled_has_call",
      sql`${t.status} <> 'settled' or (${t.invocationId} is not null and ${t.txHash} is not null)`,
    ),
    check(
      "x402_payments_credited_has_transaction",
      sql`${t.status} <> 'credited' or ${t.txHash} is not null`,
    ),
  ],
);

/**
 * MPP payments (issue 40, docs/decisions/070, 071): a credential paid once into its payer's balance
 * (an `mpp_credit` transaction), like an x402 payment (x402_payments). The identity is the
 * credential's own: one credential pays once, whatever the process.
 */
export const mppPayments = pgTable(
  "mpp_payments",
  {
    id: generatedId(),
    identity: text("identity").notNull(),
    /** The payer's account-less user (issuer `mpp`). */
    payerUserId: reference("payer_user_id", () => users.id, "restrict"),
    applicationId: uuid("application_id").references(() => applications.id, { onDelete: "set null" }),
    amountMicros: bigNumber("amount_micros").notNull(),
    status: text("status", { enum: ["settling", "credited", "failed"] })
      .notNull()
      .default("settling"),
    /** The rail's name for the money moved (a Stripe PaymentIntent). */
    reference: text("reference"),
    failure: text("failure"),
    /** The verified credential, kept while settling so that the sweep can settle it again (idempotent). */
    state: jsonb("state"),
    settleAttempts: integer("settle_attempts").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: timestamptz("updated_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("mpp_payments_identity_key").on(t.identity),
    index("mpp_payments_payer_idx").on(t.payerUserId, t.createdAt),
    index("mpp_payments_open_idx").on(t.updatedAt).where(sql`${t.status} = 'settling'`),
    check("mpp_payments_status", sql`${t.status} in ('settling', 'credited', 'failed')`),
    check("mpp_payments_amount_positive", sql`${t.amountMicros} > 0`),
    check(
      "mpp_payments_credited_has_reference",
      sql`${t.status} <> 'credited' or ${t.reference} is not null`,
    ),
  ],
);

/**
 * What an account-less payer asked back of its balance (issue 40): taken out of its wallet into
 * `refunds_owed` at once (`agent_refund`), then paid back on its rail (`agent_refund_paid`, status
 * `refunded`), or left `owed` where the rail cannot give money back by itself (x402).
 */
export const agentRefunds = pgTable(
  "agent_refunds",
  {
    id: generatedId(),
    payerUserId: reference("payer_user_id", () => users.id, "restrict"),
    rail: text("rail", { enum: ["x402", "mpp"] }).notNull(),
    amountMicros: bigNumber("amount_micros").notNull(),
    status: text("status", { enum: ["owed", "refunded"] })
      .notNull()
      .default("owed"),
    reference: text("reference"),
    reason: text("reason"),
    /**
     * The payment it goes back through (the rail's reference, a Stripe PaymentIntent); null when
     * none can carry it. The sweep asks an interrupted refund again through it, with the same key.
     */
    through: text("through"),
    createdAt: createdAt(),
    updatedAt: timestamptz("updated_at").notNull().defaultNow(),
  },
  (t) => [
    index("agent_refunds_payer_idx").on(t.payerUserId, t.createdAt),
    index("agent_refunds_owed_idx").on(t.updatedAt).where(sql`${t.status} = 'owed'`),
    check("agent_refunds_status", sql`${t.status} in ('owed', 'refunded')`),
    check("agent_refunds_amount_positive", sql`${t.amountMicros} > 0`),
    check(
      "agent_refunds_refunded_has_reference",
      sql`${t.status} <> 'refunded' or ${t.reference} is not null`,
    ),
  ],
);
