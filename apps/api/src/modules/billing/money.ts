// The ledger's unit and its formatting live in lib/money.ts (any module may use them); this file
// keeps billing's own rule, the fee, and re-exports the unit for billing's files.
export * from "../../lib/money.ts";

/**
 * The platform's fee of a price, in micros: exactly `feePercent` of it, rounded to the nearest
 * micro only when the percentage has more than two decimals. The SQL paths compute the same
 * figure (`round(price_micros * fee_percent / 100)`).
 */
export function feeMicros(priceMicros: number, feePercent: number): number {
  return Math.round((priceMicros * feePercent) / 100);
}

/** A plan payment's split (micros): the platform's fee, exactly `feePercent`, and the creator's net. */
export function splitFee(amountMicros: number, feePercent: number): { fee: number; net: number } {
  const fee = feeMicros(amountMicros, feePercent);
  return { fee, net: amountMicros - fee };
}
