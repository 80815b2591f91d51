import { z } from "zod";
import { UuidSchema } from "./ids.ts";

export const WalletTransactionSchema = z.object({
  id: z.string(),
  kind: z.enum([
    "top_up",
    "hold",
    "settle",
    "release",
    "reversal",
    "subscription",
    "model_cost",
    "earning",
    "payout",
    "payout_paid",
    "payout_return",
    "x402_credit",
    "mpp_credit",
    "agent_refund",
    "agent_refund_paid",
  ]),
  /** Signed change to the account the row is about (wallet or earnings), in micro-dollars (1 cent = 10,000). */
  amount_micros: z.number().int(),
  account: z.enum(["wallet", "earnings"]),
  description: z.string(),
  created_at: z.string(),
});
export type WalletTransaction = z.infer<typeof WalletTransactionSchema>;

export const WalletSchema = z.object({
  currency: z.literal("usd"),
  /** Micro-dollars (1 cent = 10,000): the ledger's unit, so sub-cent earnings are exact. */
  balance_micros: z.number().int(),
  held_micros: z.number().int(),
  earnings_micros: z.number().int(),
  /**
   * What the user owes (a card payment refunded or disputed after its money was spent): while above
   * zero their paid calls are refused with 402 account_in_debt; a top-up pays it first.
   */
  debt_micros: z.number().int().optional(),
  gateway: z.enum(["sandbox", "stripe"]),
  transactions: z.array(WalletTransactionSchema),
});
export type Wallet = z.infer<typeof WalletSchema>;

/**
 * One line of a wallet statement (docs/decisions/029): a paid app's calls of one UTC day ("Haiku
 * Writer — 12 calls"), or a movement of the wallet that is not a call (top-up, plan payment,
 * refund...). Never the money set aside for calls in flight and given back ("holds").
 * `kind`: `calls` (calls paid from the wallet), `embedded_calls` (an owner's embedded widget,
 * paid by the owner), or the ledger transaction's kind (`top_up`, `subscription`, `reversal`, ...).
 */
export const StatementLineSchema = z.object({
  id: z.string(),
  kind: z.string(),
  description: z.string(),
  /** The app whose calls the line counts (calls lines only). */
  application: z.object({ slug: z.string(), name: z.string() }).nullable(),
  /** How many calls (calls lines only). */
  calls: z.number().int().nullable(),
  /** The UTC day of the calls, YYYY-MM-DD (calls lines only). */
  day: z.string().nullable(),
  /** The signed change to the wallet, in micro-dollars (1 cent = 10,000). */
  amount_micros: z.number().int(),
  /** When it happened; for a calls line, the day's last call. */
  created_at: z.string(),
});
export type StatementLine = z.infer<typeof StatementLineSchema>;

export const WalletStatementSchema = z.object({
  /** Newest first. */
  lines: z.array(StatementLineSchema),
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  next_cursor: z.string().nullable(),
});
export type WalletStatement = z.infer<typeof WalletStatementSchema>;

export const WalletStatementQuerySchema = z.object({
  cursor: z.string().max(300).optional(),
  limit: z.coerce
    .number({ error: "must be a number from 1 to 100" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(100, "must be at most 100")
    .default(25),
});

/**
 * One line of a creator's earnings history: what their earnings account gained or lost on one UTC
 * day, one line per day and kind. `calls`: the day's paid calls ("Earned from 37 paid calls"),
 * with how many of them x402 paid; any other kind (a payout, a refund taken back...) as the
 * ledger names it.
 */
export const EarningsLineSchema = z.object({
  id: z.string(),
  /** `calls`, or the ledger transaction's kind (`payout`, `payout_return`, `reversal`, ...). */
  kind: z.string(),
  /** The UTC day, YYYY-MM-DD. */
  day: z.string(),
  description: z.string(),
  /** How many paid calls (calls lines only). */
  calls: z.number().int().nullable(),
  /** How many of them were paid by x402 (calls lines only). */
  x402_calls: z.number().int().nullable(),
  /** The signed change to the earnings, in micro-dollars (1 cent = 10,000). */
  amount_micros: z.number().int(),
  /** The day's last movement of this kind. */
  created_at: z.string(),
});
export type EarningsLine = z.infer<typeof EarningsLineSchema>;

export const EarningsHistorySchema = z.object({
  /** Newest day first; a page holds whole days. */
  lines: z.array(EarningsLineSchema),
  /** Pass as `cursor` for older days; null on the last page. */
  next_cursor: z.string().nullable(),
});
export type EarningsHistory = z.infer<typeof EarningsHistorySchema>;

export const EarningsHistoryQuerySchema = z.object({
  cursor: z.string().max(100).optional(),
  /** Days per page. */
  days: z.coerce
    .number({ error: "must be a number from 1 to 100" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(100, "must be at most 100")
    .default(30),
});

export const MIN_TOP_UP_CENTS = 100;
export const MAX_TOP_UP_CENTS = 100_000;

export const CreatePaymentIntentSchema = z.strictObject({
  /** Cents. 0 sets up a card without charging it. */
  amount: z
    .number()
    .int("must be a whole number of cents")
    .min(0)
    .max(MAX_TOP_UP_CENTS, "must be at most 100000 cents ($1,000)"),
  currency: z.literal("usd", { error: "only usd is supported" }).default("usd"),
  /** Set when the payment is a plan's first period (the amount must equal the plan's price). */
  package_id: UuidSchema.optional(),
});

export const PaymentIntentSchema = z.object({
  id: z.string(),
  client_secret: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  gateway: z.enum(["sandbox", "stripe"]),
});
export type PaymentIntent = z.infer<typeof PaymentIntentSchema>;

/** A test card typed in (`card`), or one saved earlier (`payment_method_id`): exactly one of them. */
/** SPEC §5's payment methods besides the card: paid through the device's wallet. */
export const DEVICE_WALLETS = ["apple_pay", "google_pay"] as const;
export type DeviceWallet = (typeof DEVICE_WALLETS)[number];

export const SandboxConfirmSchema = z.strictObject({
  client_secret: z.string().min(1).max(200),
  card: z
    .strictObject({
      number: z.string().regex(/^[0-9 ]{12,23}$/, "must be a card number"),
      exp_month: z.number().int().min(1, "must be 1 to 12").max(12, "must be 1 to 12"),
      exp_year: z.number().int().min(2000).max(2100),
      cvc: z.string().regex(/^[0-9]{3,4}$/, "must be 3 or 4 digits"),
    })
    .optional(),
  /** A saved card of the caller (`GET /wallet/payment-methods/`): it pays without being typed again. */
  payment_method_id: UuidSchema.optional(),
  /**
   * A device wallet instead of a card (SPEC §5: apple_pay, google_pay; decision 083). The sandbox
   * answers it as Stripe's test mode does: the wallet's test card, which succeeds.
   */
  wallet: z.enum(DEVICE_WALLETS).optional(),
});

export const PaymentResultSchema = z.object({
  status: z.enum(["succeeded", "failed", "requires_action"]),
  message: z.string(),
  amount: z.number().int(),
  /** The wallet after the payment, in micro-dollars. */
  balance_micros: z.number().int(),
});
export type PaymentResult = z.infer<typeof PaymentResultSchema>;

// Plans ("packages" in SPEC's paths) and subscriptions.

const features = z
  .record(z.string().max(100), z.string().max(200))
  .refine((f) => Object.keys(f).length <= 20, "at most 20 features");

/** One version of a plan's terms: what a period costs and allows. */
export const PlanTermsSchema = z.object({
  version: z.number().int(),
  price_cents: z.number().int(),
  included_calls: z.number().int(),
  period_days: z.number().int(),
  /** From when new subscriptions and renewals get these terms. */
  effective_from: z.string(),
});
export type PlanTerms = z.infer<typeof PlanTermsSchema>;

export const PackageSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** Dollars, as SPEC's plan cards show it. */
  price: z.number(),
  price_cents: z.number().int(),
  /** A raised price announced for the periods that start from `pending_price_at` on (null when none). */
  pending_price_cents: z.number().int().nullable(),
  pending_price_at: z.string().nullable(),
  currency: z.string(),
  description: z.string(),
  features: z.record(z.string(), z.string()),
  /** Calls per period covered by the plan now; calls beyond it are paid from the wallet. */
  included_calls: z.number().int(),
  /** Days in a period under the terms in force now. */
  period_days: z.number().int(),
  /** The version of the plan's terms in force now, and since when (docs/decisions/044). */
  terms_version: z.number().int(),
  terms_effective_from: z.string(),
  /**
   * An announced change that gives subscribers less (a higher price, fewer calls): new
   * subscriptions and renewals get it from `effective_from` on. Null when none is announced.
   */
  pending_terms: PlanTermsSchema.nullable(),
  is_active: z.boolean(),
});
export type Package = z.infer<typeof PackageSchema>;
export const PackageListSchema = z.array(PackageSchema);

export const CreatePackageSchema = z.strictObject({
  name: z.string().trim().min(1, "is required").max(100),
  price_cents: z
    .number()
    .int("must be a whole number of cents")
    .min(100, "must be at least 100 cents ($1.00)")
    .max(100_000),
  currency: z.literal("usd", { error: "only usd is supported" }).default("usd"),
  description: z.string().max(1000).default(""),
  features: features.default({}),
  included_calls: z.number().int().min(1, "must be at least 1").max(10_000_000),
  is_active: z.boolean().default(true),
});
export const UpdatePackageSchema = CreatePackageSchema.partial().strict();

export const SubscriptionSchema = z.object({
  id: z.string(),
  package_id: z.string(),
  package_name: z.string(),
  application_slug: z.string(),
  /** `incomplete`: paid by card through Stripe, waiting for Stripe to report the first invoice paid. */
  status: z.enum(["active", "canceled", "past_due", "incomplete"]),
  cancel_at_period_end: z.boolean(),
  /** What pays the next period: the saved card, through Stripe Billing, or the wallet. */
  renews_from: z.enum(["card", "wallet"]),
  current_period_start: z.string(),
  current_period_end: z.string(),
  days_remaining: z.number().int(),
  calls_used: z.number().int(),
  calls_included: z.number().int(),
  /** The plan's terms the current period started under: what it cost and allows (null before they were recorded). */
  terms: PlanTermsSchema.nullable(),
  /**
   * Different terms for a coming period (an announced change, or one already in force): they
   * apply from the renewal at `applies_from`. Null when the next periods keep the current terms.
   */
  next_terms: PlanTermsSchema.extend({ applies_from: z.string() }).nullable(),
});
export type Subscription = z.infer<typeof SubscriptionSchema>;
export const SubscriptionListSchema = z.array(SubscriptionSchema);
/** One of the caller's subscriptions in a list across apps (My subscriptions): with the app's name. */
export const AccountSubscriptionSchema = SubscriptionSchema.extend({ application_name: z.string() });
export type AccountSubscription = z.infer<typeof AccountSubscriptionSchema>;
export const AccountSubscriptionListSchema = z.array(AccountSubscriptionSchema);

export const CreateSubscriptionSchema = z.strictObject({
  package_id: UuidSchema,
  /** A succeeded payment intent created for this plan; without it the first period is paid from the wallet. */
  payment_intent_id: z.string().optional(),
  /** A saved card (Stripe only): it pays this and every following period through Stripe Billing. */
  payment_method_id: UuidSchema.optional(),
});
export const UpdateSubscriptionSchema = z.strictObject({ cancel_at_period_end: z.boolean() });

export const BILLING_COUNTRIES = ["US", "CA", "GB", "AU", "DE", "FR", "ES", "IT", "NL"] as const;
export const BillingAddressSchema = z.strictObject({
  name: z.string().trim().min(1, "is required").max(200),
  line1: z.string().trim().min(1, "is required").max(200),
  line2: z.string().max(200).optional(),
  city: z.string().trim().min(1, "is required").max(100),
  state: z.string().max(100).optional(),
  postal_code: z.string().trim().min(1, "is required").max(20),
  country: z.enum(BILLING_COUNTRIES, { error: "must be one of US, CA, GB, AU, DE, FR, ES, IT, NL" }),
});

export const PaymentMethodSchema = z.object({
  id: z.string(),
  card_brand: z.string(),
  card_last4: z.string(),
  card_exp_month: z.number().int(),
  card_exp_year: z.number().int(),
  is_default: z.boolean(),
});
export type PaymentMethod = z.infer<typeof PaymentMethodSchema>;
export const PaymentMethodListSchema = z.array(PaymentMethodSchema);

/** Sandbox: the card itself (the server keeps brand, last 4 and expiry only). Stripe: the PaymentMethod id from Elements. */
export const CreatePaymentMethodSchema = z.strictObject({
  billing_address: BillingAddressSchema,
  card: z
    .strictObject({
      number: z.string().regex(/^[0-9 ]{12,23}$/, "must be a card number"),
      exp_month: z.number().int().min(1, "must be 1 to 12").max(12, "must be 1 to 12"),
      exp_year: z.number().int().min(2000).max(2100),
      cvc: z.string().regex(/^[0-9]{3,4}$/, "must be 3 or 4 digits"),
    })
    .optional(),
  stripe_payment_method_id: z.string().max(200).optional(),
  set_default: z.boolean().default(false),
});
export const UpdatePaymentMethodSchema = z.strictObject({ is_default: z.literal(true) });
