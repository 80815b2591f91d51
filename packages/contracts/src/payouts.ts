import { z } from "zod";

/** Creator payouts (issue 17 item 3, docs/decisions/027). Earnings figures are micro-dollars; payouts whole cents. */
export const PayoutStatusSchema = z.enum(["pending", "in_transit", "paid", "failed", "reversed"]);
export type PayoutStatus = z.infer<typeof PayoutStatusSchema>;

export const PayoutSchema = z.object({
  id: z.string(),
  amount_cents: z.number().int(),
  currency: z.string(),
  status: PayoutStatusSchema,
  automatic: z.boolean(),
  failure_code: z.string().nullable(),
  failure_reason: z.string().nullable(),
  created_at: z.string(),
  in_transit_at: z.string().nullable(),
  paid_at: z.string().nullable(),
  failed_at: z.string().nullable(),
});
export type Payout = z.infer<typeof PayoutSchema>;

export const PayoutAccountSchema = z.object({
  /** not_started → incomplete (onboarding begun) → enabled, or restricted (Stripe needs more). */
  state: z.enum(["not_started", "incomplete", "restricted", "enabled"]),
  details_submitted: z.boolean(),
  payouts_enabled: z.boolean(),
  disabled_reason: z.string().nullable(),
  requirements_due: z.array(z.string()),
});

export const EarningsSummarySchema = z.object({
  gateway: z.enum(["sandbox", "stripe"]),
  currency: z.literal("usd"),
  account: PayoutAccountSchema,
  /** Everything in the earnings account. */
  balance_micros: z.number().int(),
  available_micros: z.number().int(),
  /**
   * Matured earnings kept back while plans' included calls are still to come: their model cost is
   * taken when they are made (docs/decisions/062). Released as the calls are made or the periods end.
   */
  reserved_micros: z.number().int(),
  /** What Withdraw would pay now: the available amount floored to a cent. */
  withdrawable_cents: z.number().int(),
  pending: z.array(z.object({ amount_micros: z.number().int(), available_at: z.string() })),
  in_transit_cents: z.number().int(),
  paid_out_cents: z.number().int(),
  minimum_cents: z.number().int(),
  hold_days: z.number(),
  schedule: z.enum(["weekly", "daily", "manual"]),
  /** The payouts clock (moved ahead by the sandbox's test clock). */
  now: z.string(),
  payouts: z.array(PayoutSchema),
});
export type EarningsSummary = z.infer<typeof EarningsSummarySchema>;

export const WithdrawSchema = z.strictObject({
  /** Whole cents; everything available when left out. */
  amount_cents: z
    .number()
    .int("must be a whole number of cents")
    .positive("must be more than 0")
    .max(100_000_000, "must be at most 100000000 cents")
    .optional(),
});

export const OnboardingLinkSchema = z.object({ url: z.string(), gateway: z.enum(["sandbox", "stripe"]) });

export const AdvanceClockSchema = z.strictObject({
  /** Whole days, 1 to 30 a step; your clock goes at most 90 days ahead in all (decision 046). */
  advance_days: z
    .number()
    .int("must be a whole number of days from 1 to 30")
    .min(1, "must be a whole number of days from 1 to 30")
    .max(30, "must be a whole number of days from 1 to 30"),
});
/** Your own test clock: its time, how far ahead of the real time it is, and how far it may go. */
export const SandboxClockSchema = z.object({
  now: z.string(),
  offset_days: z.number(),
  max_offset_days: z.number().int(),
});
