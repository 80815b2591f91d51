import { AppError } from "../../../lib/errors.ts";
import { dollars, MICROS_PER_CENT } from "../money.ts";
import { currentPriceRule } from "../price-changes.ts";

/**
 * The money rules of a paid call, each written once: the TypeScript figure and the SQL fragment
 * every statement uses (record.ts's single and batch statements, holds.ts `spendFromHold`). The
 * property tests (rules.test.ts) run the fragments on PostgreSQL (PGlite) against the TypeScript
 * functions (`effectivePriceCents` in price-changes.ts, `feeMicros` in money.ts) for many random
 * inputs, so changing a rule is one edit here and a failing test wherever it disagrees.
 */

/**
 * The current price of an app row aliased `app`: the announced increase once its moment has come
 * (as of the statement's now()), else the price. `effectivePriceCents` in SQL (decision 021), the
 * one rule of price-changes.ts `currentPriceRule`.
 */
export function currentPriceSql(app: string): string {
  return currentPriceRule(String.raw, {
    priceCents: `${app}.price_cents`,
    pendingPriceCents: `${app}.pending_price_cents`,
    pendingPriceAt: `${app}.pending_price_at`,
  });
}

/**
 * What a call pays, in cents: the lower of the price it started at and the app's price now. A
 * decrease applies at once even where a process still held the old price (decision 025); an
 * increase never applies before its notice ran out (decision 021), so it is never the lower one early.
 */
export function chargedCentsSql(startedAtCents: string, currentCents: string): string {
  return `least(${startedAtCents}, ${currentCents})::bigint`;
}

/** Cents as micro-dollars, the ledger's unit (money.ts `centsToMicros`). */
export function microsSql(cents: string): string {
  return `(${cents} * ${MICROS_PER_CENT}::bigint)`;
}

/** The platform's fee of a price in micros: exactly `feePercent` of it (money.ts `feeMicros`). */
export function feeMicrosSql(priceMicros: string, feePercent: string): string {
  return `round(${priceMicros} * ${feePercent}::numeric / 100)::bigint`;
}

/** The model cost the creator's share pays: at most that share (issue 17). */
export function modelCostDeductedSql(modelCostMicros: string, priceMicros: string, fee: string): string {
  return `least(${modelCostMicros}, ${priceMicros} - ${fee})`;
}

/**
 * Refuses a call whose price is above the caller's maximum (412 `price_above_maximum`). Called
 * before the call is paid for and before the upstream is called, so a refused call costs nothing.
 */
export function refuseAboveMaximum(priceCents: number, maxPriceCents: number | undefined): void {
  if (maxPriceCents === undefined || priceCents <= maxPriceCents) return;
  throw new AppError(
    "price_above_maximum",
    `This call costs ${priceCents} cents (${dollars(priceCents)}), above your maximum of ${maxPriceCents} cents (${dollars(maxPriceCents)}); nothing was charged`,
  );
}
