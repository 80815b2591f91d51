import { z } from "zod";

export const WalletTransactionSchema = z.object({
  id: z.string(),
  kind: z.enum(["top_up", "hold", "settle", "release", "reversal", "earning"]),
  /** Signed change to the account the row is about (wallet or earnings), in cents. */
  amount_cents: z.number().int(),
  account: z.enum(["wallet", "earnings"]),
  description: z.string(),
  created_at: z.string(),
});
export type WalletTransaction = z.infer<typeof WalletTransactionSchema>;

export const WalletSchema = z.object({
  currency: z.literal("usd"),
  balance_cents: z.number().int(),
  held_cents: z.number().int(),
  earnings_cents: z.number().int(),
  gateway: z.enum(["sandbox", "stripe"]),
  transactions: z.array(WalletTransactionSchema),
});
export type Wallet = z.infer<typeof WalletSchema>;

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
});

export const PaymentIntentSchema = z.object({
  id: z.string(),
  client_secret: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  gateway: z.enum(["sandbox", "stripe"]),
});
export type PaymentIntent = z.infer<typeof PaymentIntentSchema>;

export const SandboxConfirmSchema = z.strictObject({
  client_secret: z.string().min(1).max(200),
  card: z.strictObject({
    number: z.string().regex(/^[0-9 ]{12,23}$/, "must be a card number"),
    exp_month: z.number().int().min(1, "must be 1 to 12").max(12, "must be 1 to 12"),
    exp_year: z.number().int().min(2000).max(2100),
    cvc: z.string().regex(/^[0-9]{3,4}$/, "must be 3 or 4 digits"),
  }),
});

export const PaymentResultSchema = z.object({
  status: z.enum(["succeeded", "failed", "requires_action"]),
  message: z.string(),
  amount: z.number().int(),
  balance_cents: z.number().int(),
});
export type PaymentResult = z.infer<typeof PaymentResultSchema>;
