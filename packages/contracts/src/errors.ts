import { z } from "zod";

/**
 * What a 402 asks for, machine-readable (issue 30; docs/decisions/052): what is missing, where to
 * get it (absolute URLs), the figures or the limit that refused the call and, when the platform
 * takes x402 payments, that one call may be paid that way without an account. Added to every
 * protocol's own error shape (Dify and ours: `remedy`; OpenAI: `error.remedy`; MCP: the tool
 * error's `_meta["promptmint/remedy"]`, with the tool's price beside it). The links: `top_up_url`
 * (the wallet) for money, `keys_url` (the API keys page) for a key's spend limit, `plans_url` (the
 * app's page, its plans).
 */
export const PaymentRemedySchema = z.object({
  missing: z.enum(["insufficient_funds", "account_in_debt", "spend_limit_reached", "no_plan", "payment"]),
  top_up_url: z.string().optional(),
  plans_url: z.string().optional(),
  /** On `spend_limit_reached`: the API keys page, where the key's limit is raised. */
  keys_url: z.string().optional(),
  price_cents: z.number().int().optional(),
  balance_micros: z.number().int().optional(),
  owed_micros: z.number().int().optional(),
  limit: z
    .object({
      /** A key's spend limit (decision 035), or a member's monthly budget in an organization (decision 084). */
      kind: z.enum(["key_spend_limit", "member_budget"]),
      limit_cents: z.number().int(),
      spent_micros: z.number().int(),
      period: z.string(),
      resets_at: z.string().nullable(),
    })
    .optional(),
  x402: z
    .object({
      accepted: z.literal(true),
      x402_version: z.literal(2),
      scheme: z.string(),
      network: z.string(),
      asset: z.string(),
      amount: z.string().optional(),
      pay_to: z.string(),
      how: z.string(),
    })
    .optional(),
  /** When the platform takes MPP payments (issue 40): the rail's offer (`WWW-Authenticate: Payment`). */
  mpp: z
    .object({
      accepted: z.literal(true),
      intent: z.string(),
      method: z.string(),
      amount: z.string().optional(),
      currency: z.string(),
      how: z.string(),
    })
    .optional(),
});
export type PaymentRemedy = z.infer<typeof PaymentRemedySchema>;

/** Every error the API returns, management and gateway alike (Dify's shape). */
export const ApiErrorSchema = z.object({
  code: z.string(),
  message: z.string(),
  status: z.number().int(),
  fields: z.record(z.string(), z.string()).optional(),
  /** On a 402: what would let the call through (PaymentRemedySchema). */
  remedy: PaymentRemedySchema.optional(),
});
export type ApiError = z.infer<typeof ApiErrorSchema>;
