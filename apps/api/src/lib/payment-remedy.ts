import type { PaymentRemedy } from "@promptmint/contracts";
import { AppError } from "./errors.ts";

export type { PaymentRemedy } from "@promptmint/contracts";

/**
 * A 402's machine-readable remedy (issue 30, docs/decisions/052), built here once and carried on
 * the AppError (`error.remedy`), so every protocol answers the same object in its own shape:
 * Dify's and ours as `remedy` beside `{code, message, status}`, OpenAI's as `error.remedy`, MCP's
 * tool error as `_meta["promptmint/remedy"]` (modules/mcp/payment-remedy.ts, which adds only the
 * tool's price). Billing says what is missing and the figures; the gateway adds the links (the
 * wallet, the API keys page, the app's plans) and, when the platform takes x402 payments, the
 * x402 offer.
 */

/** The x402 part of a remedy: one call may be paid this way, without an account. */
export type X402Offer = NonNullable<PaymentRemedy["x402"]>;

/** The 402s that carry a remedy: every refusal of a paid call for want of money or a limit. */
const PAYMENT_CODES = new Set([
  "payment_required",
  "account_in_debt",
  "key_limit_reached",
  "member_budget_reached",
]);

/** What a refusal that came without a remedy is missing, by its code. */
const BARE_MISSING: Record<string, PaymentRemedy["missing"]> = {
  account_in_debt: "account_in_debt",
  key_limit_reached: "spend_limit_reached",
  member_budget_reached: "spend_limit_reached",
};

/** A 402 for want of money, with its remedy. */
export function paymentRefusal(
  code: "payment_required" | "account_in_debt" | "key_limit_reached" | "member_budget_reached",
  message: string,
  remedy: PaymentRemedy,
): AppError {
  return new AppError(code, message, { remedy });
}

/**
 * Adds what the gateway knows to a payment refusal: the page that fixes it (the wallet to top up,
 * or for a key's spend limit the API keys page), the app's page with its plans and the x402 offer.
 * Any other error is returned unchanged. A refusal without a remedy gets a bare one.
 */
export function withOffers(
  error: unknown,
  offers: { plansUrl?: string; topUpUrl?: string; keysUrl?: string } & Pick<PaymentRemedy, "x402" | "mpp">,
): unknown {
  if (!(error instanceof AppError) || !PAYMENT_CODES.has(error.code)) return error;
  const remedy: PaymentRemedy = error.remedy ?? { missing: BARE_MISSING[error.code] ?? "insufficient_funds" };
  if (offers.topUpUrl && remedy.missing !== "spend_limit_reached") remedy.top_up_url ??= offers.topUpUrl;
  // A key's limit is raised on the API keys page; a member's budget by an owner or admin (no link).
  if (offers.keysUrl && error.code === "key_limit_reached") remedy.keys_url ??= offers.keysUrl;
  if (offers.plansUrl) remedy.plans_url ??= offers.plansUrl;
  if (offers.x402) remedy.x402 ??= offers.x402;
  if (offers.mpp) remedy.mpp ??= offers.mpp;
  error.remedy = remedy;
  return error;
}

/** The remedy as extra fields of an error body (`{}` when it has none). */
export function remedyFields(error: unknown): { remedy?: PaymentRemedy } {
  return error instanceof AppError && error.remedy ? { remedy: error.remedy } : {};
}
