import type { PaymentRemedy } from "@promptmint/contracts";
import { AppError } from "./errors.ts";

export type { PaymentRemedy } from "@promptmint/contracts";

/**
 * A 402's machine-readable remedy (issue 30, docs/decisions/052), built here once and carried on
 * the AppError (`error.remedy`), so every protocol answers it in its own shape: Dify's and ours
 * as `remedy` beside `{code, message, status}`, OpenAI's as `error.remedy`, MCP's tool error as
 * `_meta.remedy` (`mcpRemedyMeta`). Billing says what is missing and the figures; the gateway adds
 * the app's plans page and, when the platform takes x402 payments, the x402 offer.
 */

/** The x402 part of a remedy: one call may be paid this way, without an account. */
export type X402Offer = NonNullable<PaymentRemedy["x402"]>;

/** The 402s that carry a remedy: every refusal of a paid call for want of money or a limit. */
const PAYMENT_CODES = new Set(["payment_required", "account_in_debt", "key_limit_reached"]);

/** A 402 for want of money, with its remedy. */
export function paymentRefusal(
  code: "payment_required" | "account_in_debt" | "key_limit_reached",
  message: string,
  remedy: PaymentRemedy,
): AppError {
  return new AppError(code, message, { remedy });
}

/**
 * Adds what the gateway knows to a payment refusal: the app's page with its plans and the x402
 * offer. Any other error is returned unchanged. A refusal without a remedy gets a bare one.
 */
export function withOffers(
  error: unknown,
  offers: { plansUrl?: string; topUpUrl?: string; x402?: X402Offer },
): unknown {
  if (!(error instanceof AppError) || !PAYMENT_CODES.has(error.code)) return error;
  const remedy: PaymentRemedy = error.remedy ?? {
    missing: error.code === "key_limit_reached" ? "spend_limit_reached" : "insufficient_funds",
  };
  if (offers.topUpUrl && remedy.missing !== "spend_limit_reached") remedy.top_up_url ??= offers.topUpUrl;
  if (offers.plansUrl) remedy.plans_url ??= offers.plansUrl;
  if (offers.x402) remedy.x402 ??= offers.x402;
  error.remedy = remedy;
  return error;
}

/** The remedy as extra fields of an error body (`{}` when it has none). */
export function remedyFields(error: unknown): { remedy?: PaymentRemedy } {
  return error instanceof AppError && error.remedy ? { remedy: error.remedy } : {};
}

/**
 * For MCP's tool error (the mcp module's): the remedy as the result's `_meta`, and one line a
 * person or a model can act on (the link to follow, the x402 alternative).
 */
export function mcpRemedyMeta(error: unknown): { meta: { remedy: PaymentRemedy } | undefined; hint: string } {
  if (!(error instanceof AppError) || !error.remedy) return { meta: undefined, hint: "" };
  const remedy = error.remedy;
  const link = remedy.top_up_url ?? remedy.plans_url;
  const parts = [
    link ? `Top up or subscribe at ${link}.` : "",
    remedy.x402 ? "Or pay this one call with x402 (send the request without credentials)." : "",
  ];
  return { meta: { remedy }, hint: parts.filter(Boolean).join(" ") };
}
