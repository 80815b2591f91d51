import { z } from "zod";

/** Money in the operator's view: integer micro-dollars (1 USD = 1,000,000) unless named _cents. */
const micros = z.number().int();

/** An ISO 8601 date or date-time with its offset; anything else is refused naming the forms accepted. */
const isoMoment = z.union([z.iso.datetime({ offset: true }), z.iso.date()], {
  error: "must be an ISO 8601 date (2026-01-31) or date-time with an offset (2026-01-31T12:00:00Z)",
});

/** Strict: a misspelt parameter (`form=`, `from[]=`) is a 400, not a silent 30-day default. */
export const AdminPeriodQuerySchema = z.strictObject({
  /** ISO date or date-time; default 30 days before `to`. */
  from: isoMoment.optional(),
  /** ISO date or date-time; default now. */
  to: isoMoment.optional(),
});

export const AdminOverviewSchema = z.object({
  period: z.object({ from: z.string(), to: z.string() }),
  /** What consumers paid for calls and plans in the period. */
  gross_micros: micros,
  /** The platform's fee income in the period (after refunds and disputes). */
  fee_income_micros: micros,
  /** What the model vendors were paid for the period's calls (sum of invocations' model cost). */
  model_cost_paid_micros: micros,
  /** What the creators' shares gave back of it (the model_cost account). */
  model_cost_recovered_micros: micros,
  /** Refunds and disputes taken back in the period, in cents of card money. */
  refunded_cents: z.number().int(),
  disputed_cents: z.number().int(),
  payouts: z.object({
    /** "payouts table" when helper B's payouts exist, else the ledger's payouts account. */
    source: z.enum(["payouts_table", "ledger"]),
    queued_micros: micros,
    in_transit_micros: micros,
    paid_micros: micros,
    failed_micros: micros,
  }),
  disputes: z.array(
    z.object({
      id: z.string(),
      payment_intent: z.string(),
      payer_email: z.string(),
      amount_cents: z.number().int(),
      status: z.string(),
      reason: z.string(),
      created_at: z.string(),
    }),
  ),
  debts: z.array(
    z.object({
      /** Null: the platform's own loss (a plan payment reversed after its payout hold). */
      user_id: z.string().nullable(),
      email: z.string(),
      owed_micros: micros,
    }),
  ),
  top_apps: z.array(
    z.object({
      id: z.string(),
      slug: z.string(),
      name: z.string(),
      owner_email: z.string(),
      gross_micros: micros,
      calls: z.number().int(),
      suspended: z.boolean(),
    }),
  ),
  top_creators: z.array(
    z.object({
      id: z.string(),
      email: z.string(),
      gross_micros: micros,
      suspended: z.boolean(),
    }),
  ),
  suspensions: z.array(
    z.object({
      target_kind: z.enum(["application", "user"]),
      target_id: z.string(),
      label: z.string(),
      reason: z.string(),
      created_at: z.string(),
    }),
  ),
});
export type AdminOverview = z.infer<typeof AdminOverviewSchema>;

/**
 * What refunds and disputes of card top-ups could still cost the platform (decision 045): earnings
 * paid by card money still inside the payout hold (taken back from the creator if disputed),
 * what creators and payers owe after chargebacks, the platform's own loss, and disputes open now.
 */
export const AdminExposureSchema = z.object({
  hold_days: z.number(),
  /** Creators' earnings from paid calls still inside PAYOUT_HOLD_DAYS (not yet payable). */
  card_earnings_pending_micros: micros,
  creator_debts: z.object({ count: z.number().int(), owed_micros: micros }),
  payer_debts: z.object({ count: z.number().int(), owed_micros: micros }),
  /** What the platform bore (its debt account): fees and model costs of reversed calls, late plan refunds. */
  platform_loss_micros: micros,
  open_disputes: z.object({ count: z.number().int(), amount_micros: micros }),
  /** Taken back from card payments so far, and of it what is still owed (debts) or lost (the platform's). */
  reversed_micros: micros,
  unrecovered_micros: micros,
});
export type AdminExposure = z.infer<typeof AdminExposureSchema>;

export const AuditEntrySchema = z.object({
  id: z.number().int(),
  actor_email: z.string(),
  action: z.string(),
  target_kind: z.string(),
  target_id: z.string(),
  reason: z.string(),
  details: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

export const SuspendSchema = z.strictObject({
  reason: z
    .string()
    .trim()
    .min(3, "must say why, in at least 3 characters")
    .max(500, "must be at most 500 characters"),
});

export const SandboxRefundSchema = z.strictObject({
  payment_intent_id: z.string().min(1).max(200),
  /** Cents; the whole unrefunded rest when omitted. */
  amount_cents: z.number().int().positive().max(100_000).optional(),
  reason: z.string().trim().max(500).default(""),
});

export const SandboxDisputeSchema = z.strictObject({
  payment_intent_id: z.string().min(1).max(200),
  amount_cents: z.number().int().positive().max(100_000).optional(),
  reason: z.string().trim().max(500).default("fraudulent"),
});

export const SandboxDisputeCloseSchema = z.strictObject({
  status: z.enum(["won", "lost"]),
});

export const ReversalResultSchema = z.object({
  id: z.string(),
  payment_id: z.string(),
  moved_cents: z.number().int(),
  status: z.string(),
});
