import { type SQL, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";

/**
 * Price changes with notice (docs/decisions/021-price-notice.md), for an app's price per call and
 * a plan's price per period alike.
 *
 * Invariant: a consumer is never charged more than a price they could see. An increase is stored
 * beside the current price with the moment it takes effect, at least the notice period after it
 * was announced; a decrease replaces the price at once. What a call or a renewal costs at a moment
 * is a pure function of the row, so every process that holds a copy of the row, however stale,
 * computes the same price for the same moment: an increase reaches them all at its announced
 * time, never earlier, without any cache being refreshed.
 */
export interface PriceColumns {
  priceCents: number;
  /** An increase waiting out its notice; null when none is announced. */
  pendingPriceCents: number | null;
  /** When `pendingPriceCents` becomes the price. */
  pendingPriceAt: Date | null;
}

/** What a price costs at `at`: the announced increase once its moment has come, else the price. */
export function effectivePriceCents(row: PriceColumns, at: Date | number = Date.now()): number {
  const due = row.pendingPriceAt !== null && row.pendingPriceAt.getTime() <= +at;
  return due && row.pendingPriceCents !== null ? row.pendingPriceCents : row.priceCents;
}

/** The announced increase still to come at `at`, if any. */
export function upcomingPrice(
  row: PriceColumns,
  at: Date | number = Date.now(),
): { cents: number; at: Date } | undefined {
  if (row.pendingPriceCents === null || row.pendingPriceAt === null) return undefined;
  if (row.pendingPriceAt.getTime() <= +at) return undefined;
  return { cents: row.pendingPriceCents, at: row.pendingPriceAt };
}

/** The price the creator has set: the announced increase if any, else the price. What editors show. */
export function scheduledPriceCents(row: PriceColumns): number {
  return row.pendingPriceCents ?? row.priceCents;
}

/**
 * The columns to write when the creator sets the price to `cents` at `now`:
 * - the price the creator has set again (an editor saving other fields): the row as it is;
 * - at most the current price: that price at once, and any announced increase is withdrawn;
 * - above it: announced for `now + notice`, except that an increase lowered to a price still
 *   above the current one keeps its announced moment (callers were told of a higher price then).
 * An increase already due stays where it is unless a new increase needs its columns: a renewal
 * processed late still finds the price its period ended at. With no notice (`noticeMs` 0: nobody
 * can have seen the price, see `noticeFor` in applications.service.ts) any price applies at once.
 */
export function setPrice(
  row: PriceColumns,
  cents: number,
  { now, noticeMs }: { now: Date; noticeMs: number },
): PriceColumns {
  const current = effectivePriceCents(row, now);
  const upcoming = upcomingPrice(row, now);
  const unchanged = {
    priceCents: row.priceCents,
    pendingPriceCents: row.pendingPriceCents,
    pendingPriceAt: row.pendingPriceAt,
  };
  if (cents === (upcoming?.cents ?? current)) return unchanged;
  if (cents <= current || noticeMs <= 0)
    return { priceCents: cents, pendingPriceCents: null, pendingPriceAt: null };
  const at = upcoming && cents < upcoming.cents ? upcoming.at : new Date(now.getTime() + noticeMs);
  return { priceCents: current, pendingPriceCents: cents, pendingPriceAt: at };
}

/** The price fields of the contracts (app, plan, `/info`), as of `at`. */
export function priceFields(row: PriceColumns, at: Date | number = Date.now()) {
  const upcoming = upcomingPrice(row, at);
  return {
    price_cents: effectivePriceCents(row, at),
    pending_price_cents: upcoming?.cents ?? null,
    pending_price_at: upcoming?.at.toISOString() ?? null,
  };
}

/**
 * `effectivePriceCents` in SQL (as of the statement's now()), written once for both forms it is
 * used in: `tag` is drizzle's `sql` (columns, `effectivePriceSql`) or `String.raw` (column names in
 * a prepared statement's text: billing/call-payment/rules.ts `currentPriceSql`). The call-payment
 * property tests check it against `effectivePriceCents`.
 */
export function currentPriceRule<T, R>(
  tag: (strings: TemplateStringsArray, ...values: T[]) => R,
  columns: { priceCents: T; pendingPriceCents: T; pendingPriceAt: T },
): R {
  const { priceCents, pendingPriceCents, pendingPriceAt } = columns;
  return tag`(case when ${pendingPriceAt} is not null and ${pendingPriceAt} <= now() then ${pendingPriceCents} else ${priceCents} end)`;
}

/** `effectivePriceCents` in SQL, for filtering and sorting by price (as of the statement's now()). */
export function effectivePriceSql(table: {
  priceCents: AnyPgColumn;
  pendingPriceCents: AnyPgColumn;
  pendingPriceAt: AnyPgColumn;
}): SQL<number> {
  return currentPriceRule<AnyPgColumn, SQL>(sql, table) as SQL<number>;
}
