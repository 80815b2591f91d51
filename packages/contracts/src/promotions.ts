import { z } from "zod";

/**
 * Free trials and promotion codes (issue 42, docs/decisions/080): a creator sponsors calls of
 * their apps for consumers, paid from the creator's wallet like any call; the consumer is charged 0.
 */

export const MAX_TRIAL_CALLS = 1000;

/** The owner's setting: how many free calls each consumer may try (0: no trial). */
export const UpdateTrialOfferSchema = z.strictObject({
  trial_calls: z
    .number()
    .int("must be a whole number")
    .min(0, "must be at least 0")
    .max(MAX_TRIAL_CALLS, `must be at most ${MAX_TRIAL_CALLS}`),
});

/** An app's trial as its caller sees it; `trials_started` only for its owner. */
export const TrialOfferSchema = z.object({
  trial_calls: z.number().int(),
  /** Whether the caller took this app's trial already (by account, card or payer address). */
  used: z.boolean(),
  /** The caller's trial calls left (null when they have no trial of this app). */
  calls_left: z.number().int().nullable(),
  /** How many consumers started the trial (the owner's view; null for others). */
  trials_started: z.number().int().nullable(),
});
export type TrialOffer = z.infer<typeof TrialOfferSchema>;

const CODE_PATTERN = /^[A-Za-z0-9_-]+$/;

/**
 * A code's start or end: an ISO 8601 date-time from 2000 to 2099 whose offset is at most ±14:00,
 * what any clock in use can say (the fuzzer's year 4581 at -20:20 reached the database as a 500).
 */
const promotionMoment = z.iso.datetime({ offset: true }).refine((value) => {
  const at = Date.parse(value);
  const offset = /([+-])(\d{2}):?(\d{2})$/.exec(value);
  return (
    Number.isFinite(at) &&
    at >= Date.UTC(2000, 0, 1) &&
    at < Date.UTC(2100, 0, 1) &&
    (!offset || Number(offset[2]) * 60 + Number(offset[3]) <= 14 * 60)
  );
}, "must be a date-time from 2000 to 2099 with an offset of at most ±14:00");

export const CreatePromotionCodeSchema = z
  .strictObject({
    /** Letters, digits, `-` and `_`; unique across the platform whatever the case. */
    code: z
      .string()
      .trim()
      .min(4, "must be at least 4 characters")
      .max(32, "must be at most 32 characters")
      .regex(CODE_PATTERN, "may contain only letters, digits, - and _"),
    kind: z.enum(["amount", "percent"]),
    /** kind `amount`: the credit given, in cents. */
    amount_cents: z
      .number()
      .int()
      .min(1, "must be at least 1")
      .max(100_000, "must be at most 100000")
      .optional(),
    /** kind `percent`: the bonus credit in percent of the redeemer's next top-up… */
    percent: z.number().int().min(1, "must be at least 1").max(100, "must be at most 100").optional(),
    /** …at most this many cents. */
    cap_cents: z
      .number()
      .int()
      .min(1, "must be at least 1")
      .max(100_000, "must be at most 100000")
      .optional(),
    max_redemptions: z.number().int().min(1, "must be at least 1").max(1_000_000, "must be at most 1000000"),
    /** The one app it is good for (its slug); omitted: every app of the creator. */
    app: z.string().min(1).max(100).optional(),
    starts_at: promotionMoment.optional(),
    expires_at: promotionMoment.optional(),
  })
  .superRefine((body, ctx) => {
    const refuse = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (body.kind === "amount") {
      if (body.amount_cents === undefined) refuse("amount_cents", "is required for an amount code");
      if (body.percent !== undefined) refuse("percent", "is only for a percent code");
      if (body.cap_cents !== undefined) refuse("cap_cents", "is only for a percent code");
    } else {
      if (body.percent === undefined) refuse("percent", "is required for a percent code");
      if (body.cap_cents === undefined) refuse("cap_cents", "is required for a percent code");
      if (body.amount_cents !== undefined) refuse("amount_cents", "is only for an amount code");
    }
    if (
      body.expires_at &&
      Date.parse(body.expires_at) <= Date.parse(body.starts_at ?? new Date().toISOString())
    )
      refuse("expires_at", "must be after starts_at (or now)");
  });

export const PromotionCodeSchema = z.object({
  id: z.string(),
  code: z.string(),
  kind: z.enum(["amount", "percent"]),
  amount_micros: z.number().int().nullable(),
  percent: z.number().int().nullable(),
  cap_micros: z.number().int().nullable(),
  max_redemptions: z.number().int(),
  redemptions: z.number().int(),
  /** The one app it is good for; null: every app of its creator. */
  app: z.object({ slug: z.string(), name: z.string() }).nullable(),
  starts_at: z.string(),
  expires_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  /** active, scheduled (not started), expired, used_up or ended. */
  status: z.enum(["active", "scheduled", "expired", "used_up", "ended"]),
  created_at: z.string(),
});
export type PromotionCode = z.infer<typeof PromotionCodeSchema>;

export const PromotionCodeListSchema = z.object({ data: z.array(PromotionCodeSchema) });
export type PromotionCodeList = z.infer<typeof PromotionCodeListSchema>;

export const RedeemPromotionCodeSchema = z.strictObject({
  code: z.string().trim().min(1, "is required").max(64, "must be at most 64 characters"),
});

/** A trial or promotional credit of the caller's (the wallet's "Trials and promotional credit"). */
export const SponsoredCreditSchema = z.object({
  id: z.string(),
  kind: z.enum(["trial", "promotion"]),
  /** The app it is good for; null: every app of `creator`. */
  app: z.object({ slug: z.string(), name: z.string() }).nullable(),
  creator: z.string(),
  /** The promotion code redeemed (promotions). */
  code: z.string().nullable(),
  /** A trial's free calls left. */
  calls_left: z.number().int().nullable(),
  /** A promotion's credit left, in micro-dollars. */
  credit_left_micros: z.number().int().nullable(),
  /** A percent code waiting for the next top-up: its percent and cap (micros). */
  bonus: z.object({ percent: z.number().int(), cap_micros: z.number().int() }).nullable(),
  expires_at: z.string().nullable(),
  created_at: z.string(),
});
export type SponsoredCredit = z.infer<typeof SponsoredCreditSchema>;

export const SponsoredCreditListSchema = z.object({ data: z.array(SponsoredCreditSchema) });
export type SponsoredCreditList = z.infer<typeof SponsoredCreditListSchema>;
