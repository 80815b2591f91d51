/**
 * The ledger's unit. Prices are set in whole cents (SPEC); the ledger counts integer micro-dollars
 * so that a fee or a model cost below a cent is exact, and only display rounds (issue 17).
 * Pure arithmetic and formatting, usable from any module; the money rules (the fee) stay in
 * modules/billing/money.ts.
 */
export const MICROS_PER_CENT = 10_000;
export const MICROS_PER_DOLLAR = 1_000_000;

export function centsToMicros(cents: number): number {
  return cents * MICROS_PER_CENT;
}

/** Whole cents in an amount, rounded down: what can leave the platform (a payout, a refund). */
export function microsToCents(micros: number): number {
  return Math.floor(micros / MICROS_PER_CENT);
}

/** Dollars for people: two decimals, more when a non-zero amount is below a cent. */
export function formatMicros(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(micros);
  const decimals = abs > 0 && abs < MICROS_PER_CENT ? 6 : abs % MICROS_PER_CENT === 0 ? 2 : 4;
  const text = (abs / MICROS_PER_DOLLAR).toFixed(decimals);
  return `${sign}$${decimals === 6 ? text.replace(/0+$/, "") : text}`;
}

/** A price in cents as people read it: "$0.05". */
export const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;
