import type { CallCharge } from "./paid-call.ts";

/**
 * How an answer says what it cost (docs/decisions/029-cost-in-answers.md). The amount is what the
 * call took from the caller's wallet (`CallCharge`): its price when the wallet paid, 0 when a plan
 * covered it, for the owner's own call and for a free app.
 */

/** The response header of a blocking answer: the amount charged, e.g. `0.05 USD`. */
export const CHARGED_HEADER = "promptmint-charged";

/** The prompt version that answered a call, e.g. `v12` (docs/decisions/057). */
export const VERSION_HEADER = "promptmint-version";

/** A whole number of cents as dollars with `decimals` places (at least 2), exactly: 5 → "0.05". */
export function centsAsDollars(cents: number, decimals = 2): string {
  if (!Number.isSafeInteger(cents)) throw new RangeError("cents must be a whole number");
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  const fraction = String(abs % 100).padStart(2, "0") + "0".repeat(Math.max(0, decimals - 2));
  return `${sign}${Math.floor(abs / 100)}.${fraction}`;
}

/** The header's value: `0.05 USD`. */
export function chargedHeaderValue(charge: Pick<CallCharge, "chargedCents">): string {
  return `${centsAsDollars(charge.chargedCents)} USD`;
}

/**
 * Dify's price fields of `metadata.usage` (strings in dollars, 7 decimals, as Dify writes them).
 * Promptmint prices a call, not its tokens: the per-token prices are 0 and `total_price` is the
 * call's charge. `charged_cents` and `paid_by` are Promptmint's own (Dify's SDKs pass them through).
 */
export function difyPriceFields(charge: CallCharge) {
  const zero = centsAsDollars(0, 7);
  return {
    prompt_unit_price: "0",
    prompt_price_unit: "0.000001",
    prompt_price: zero,
    completion_unit_price: "0",
    completion_price_unit: "0.000001",
    completion_price: zero,
    total_price: centsAsDollars(charge.chargedCents, 7),
    currency: "USD" as const,
    charged_cents: charge.chargedCents,
    paid_by: charge.paidBy,
  };
}

/**
 * OpenAI-style `usage` additions: `cost` in dollars (a number, as OpenRouter reports it), and, as
 * on the Dify routes, the exact `charged_cents` and how it was paid.
 */
export function openAiCostFields(charge: CallCharge) {
  return {
    cost: charge.chargedCents / 100,
    charged_cents: charge.chargedCents,
    paid_by: charge.paidBy,
    // The signed receipt of a charged or plan-covered call (docs/decisions/073).
    ...(charge.receipt ? { receipt: charge.receipt } : {}),
  };
}

/** The header for a stored answer replayed under its Idempotency-Key: the charge it recorded, if it did. */
export function chargedHeaderOfStored(usage: unknown): string | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const { charged_cents } = usage as { charged_cents?: unknown };
  return typeof charged_cents === "number" && Number.isSafeInteger(charged_cents)
    ? chargedHeaderValue({ chargedCents: charged_cents })
    : undefined;
}

/** The receipt a stored answer's usage holds (an Idempotency-Key replay repeats it), if it does. */
export function receiptOfStored(usage: unknown): string | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const { receipt } = usage as { receipt?: unknown };
  return typeof receipt === "string" && receipt !== "" ? receipt : undefined;
}
