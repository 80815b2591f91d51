// SPEC's display rules, kept in one place (docs/decisions/079), the only module that formats a
// unit for the web app:
// - money: dollars with two decimals; an amount with a part below a cent (a sub-cent price or
//   cost) gets as many decimals as it needs, up to six (`formatMicrosExact`, `formatPrice`); totals
//   read rounded (`formatMicros`) with the exact figure one hover away;
// - durations: one rule, `formatDuration`: under a second in ms, else seconds with one decimal,
//   minutes beyond 120 s;
// - counts with thousands separators (`formatNumber`), rates and percentages with one decimal;
// - dates and times: local (`formatDate`, `formatDateTime`) or relative (`formatRelativeTime`),
//   never a raw ISO string.

// Numbers are formatted by hand (en-US: "," every three digits) rather than with
// Intl.NumberFormat: a page's first Intl formatter costs 15-30 ms of main thread while ICU loads,
// inside the dashboard's start-up (docs/decisions/016). Same output: halves are rounded away from
// zero on the number's shortest decimal form, as Intl does (1.005 → 1.01, where toFixed gives 1.00).

/** A non-negative number with `decimals` decimals and thousands separators. */
function grouped(value: number, decimals: number): string {
  const text = String(value);
  if (!Number.isFinite(value) || text.includes("e+")) return value.toFixed(decimals);
  // Below 1e-6 (exponent form) the figure rounds to zero at these precisions.
  const [whole = "0", fraction = ""] = text.includes("e-") ? ["0", ""] : text.split(".");
  let digits = whole + fraction.slice(0, decimals).padEnd(decimals, "0");
  if ((fraction[decimals] ?? "0") >= "5") {
    digits = (BigInt(digits) + 1n).toString().padStart(digits.length, "0");
  }
  const integerPart = digits.slice(0, digits.length - decimals).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return decimals > 0 ? `${integerPart}.${digits.slice(digits.length - decimals)}` : integerPart;
}

/** An amount in dollars, e.g. revenue: `$1,234.50`. */
export function formatDollars(amount: number): string {
  const sign = amount < 0 ? "-" : "";
  return `${sign}$${grouped(Math.abs(amount), 2)}`;
}

/** An integer amount in cents shown in dollars: 150 → `$1.50`. */
export function formatCents(cents: number): string {
  return formatDollars(cents / 100);
}

/** Micro-dollars per cent: the ledger's unit (1 cent = 10,000 micros). */
export const MICROS_PER_CENT = 10_000;

/**
 * A ledger amount (integer micro-dollars) as people read money: dollars with two decimals, a
 * half cent rounded away from zero (`$83.565` reads `$83.57`), less than half a cent `<$0.01`. Where the exact figure matters it
 * is one hover away (`<Money>`'s title) and in the statements: `formatMicrosExact`.
 */
export function formatMicros(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(Math.trunc(micros));
  const cents = Math.floor((abs + MICROS_PER_CENT / 2) / MICROS_PER_CENT);
  // Something, though less than half a cent, never reads as nothing.
  if (cents === 0 && abs > 0) return `${sign}<$0.01`;
  return `${sign}$${grouped(Math.floor(cents / 100), 0)}.${String(cents % 100).padStart(2, "0")}`;
}

/**
 * A ledger amount exactly: two decimals, or as many as its part below a cent needs (a 10% fee on
 * a 5¢ call is `$0.005`), so no figure is rounded into another. Computed on integers.
 */
export function formatMicrosExact(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(Math.trunc(micros));
  const dollars = Math.floor(abs / 1_000_000);
  const fraction = String(abs % 1_000_000).padStart(6, "0");
  const shown =
    fraction.slice(2).replace(/0+$/, "") === ""
      ? fraction.slice(0, 2)
      : fraction.replace(/0+$/, "").padEnd(3, "0");
  return `${sign}$${grouped(dollars, 0)}.${shown}`;
}

/**
 * A price or a cost per call (integer micro-dollars): the exact rule, two decimals or as many as
 * the part below a cent needs, up to six: `$0.10`, `$0.0614`, `$0.000001`. One rule everywhere a
 * price, a model cost or an estimate is shown.
 */
export function formatPrice(micros: number): string {
  return formatMicrosExact(micros);
}

/**
 * An amount taken off another (a platform fee, a model cost), shown as a deduction: `-$0.06`,
 * `-$0.005` below a cent; nothing taken is `$0.00`.
 */
export function formatDeductionMicros(micros: number): string {
  return micros === 0 ? formatMicros(0) : formatMicros(-Math.abs(micros));
}

/** A ledger amount with its sign: `+$1.50`, `-$0.05`. */
export function formatSignedMicros(micros: number): string {
  return micros > 0 ? `+${formatMicros(micros)}` : formatMicros(micros);
}

/** A value already expressed in percent, with one decimal: 97.54 → `97.5%`. */
export function formatPercent(value: number): string {
  return `${value.toFixed(1)}%`;
}

/** A count with thousands separators: 12345 → `12,345`. */
export function formatNumber(value: number): string {
  const sign = value < 0 ? "-" : "";
  return `${sign}${grouped(Math.abs(value), 0)}`;
}

/** A rate between 0 and 1 as a percentage with one decimal: 0.9754 → `97.5%`; null → `–`. */
export function formatRate(rate: number | null | undefined): string {
  if (rate === null || rate === undefined || !Number.isFinite(rate)) return "–";
  return `${rate < 0 ? "-" : ""}${grouped(Math.abs(rate * 100), 1)}%`;
}

/** A difference of two rates in percentage points, one decimal: 0.052 → `5.2 pts`. */
export function formatPoints(difference: number, unit = true): string {
  const text = `${difference < 0 ? "-" : ""}${grouped(Math.abs(difference * 100), 1)}`;
  return unit ? `${text} pts` : text;
}

/** A p-value as a test reports it: `p < 0.001`, else three decimals. */
export function formatPValue(p: number): string {
  return p < 0.001 ? "p < 0.001" : `p = ${grouped(p, 3)}`;
}

/**
 * A duration, one rule everywhere: under a second in milliseconds (`850 ms`), else seconds with
 * one decimal (`1.5 s`, `119.9 s`), minutes with one decimal beyond 120 s (`2.5 min`). Missing
 * reads `–`.
 */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  const sign = ms < 0 ? "-" : "";
  const abs = Math.abs(ms);
  if (Math.round(abs) < 1000) return `${sign}${Math.round(abs)} ms`;
  if (abs <= 120_000) return `${sign}${grouped(abs / 1000, 1)} s`;
  return `${sign}${grouped(abs / 60_000, 1)} min`;
}

/** A duration given in seconds (analytics' response times), by the same rule: 1.234 → `1.2 s`. */
export function formatDurationSeconds(seconds: number | null | undefined): string {
  return seconds === null || seconds === undefined ? "–" : formatDuration(seconds * 1000);
}

/** @deprecated Durations follow one rule: use formatDurationSeconds (kept for chart ticks). */
export function formatSeconds(seconds: number, decimals = 2): string {
  return `${seconds.toFixed(decimals)}s`;
}

type DateInput = string | number | Date | null | undefined;

function toDate(value: DateInput): Date | null {
  if (value === null || value === undefined || value === "") return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** A local calendar date, or the fallback when the value is missing or not a date. */
export function formatDate(value: DateInput, fallback = "N/A"): string {
  return toDate(value)?.toLocaleDateString() ?? fallback;
}

/** A local date and time, or the fallback when the value is missing or not a date. */
export function formatDateTime(value: DateInput, fallback = "N/A"): string {
  return toDate(value)?.toLocaleString() ?? fallback;
}

/**
 * How long ago (or how soon) a moment is, for lists read at a glance: `just now`, `5 min ago`,
 * `3 h ago`, `in 20 min`, `2 days ago`; beyond a week the local date. The exact local time belongs
 * in the element's title (`formatDateTime`).
 */
export function formatRelativeTime(value: DateInput, now: Date = new Date(), fallback = "N/A"): string {
  const date = toDate(value);
  if (!date) return fallback;
  const seconds = Math.round((date.getTime() - now.getTime()) / 1000);
  const abs = Math.abs(seconds);
  const say = (amount: number, unit: string) =>
    seconds < 0 ? `${amount} ${unit} ago` : `in ${amount} ${unit}`;
  if (abs < 45) return "just now";
  if (abs < 3600) return say(Math.max(1, Math.round(abs / 60)), "min");
  if (abs < 86_400) return say(Math.round(abs / 3600), "h");
  const days = Math.round(abs / 86_400);
  if (days <= 7) return say(days, days === 1 ? "day" : "days");
  return date.toLocaleDateString();
}

/** A price with an announced increase (apps, plans): the contracts' `pending_price_*` fields. */
interface AnnouncedPrice {
  pending_price_cents: number | null;
  pending_price_at: string | null;
}

/**
 * An announced price increase, as callers and the creator read it: `Rises to $0.50 per call on
 * <date and time>` (what is charged until then is the price shown beside it), or null when none is
 * announced.
 */
export function formatPriceNotice(price: AnnouncedPrice, unit = ""): string | null {
  if (price.pending_price_cents === null || !price.pending_price_at) return null;
  return `Rises to ${formatCents(price.pending_price_cents)}${unit} on ${formatDateTime(price.pending_price_at)}`;
}

/** A plan's terms (decision 044): `$5.00 for 100 calls per 30 days`. */
export function formatPlanTerms(terms: {
  price_cents: number;
  included_calls: number;
  period_days: number;
}): string {
  const calls = `${formatNumber(terms.included_calls)} ${terms.included_calls === 1 ? "call" : "calls"}`;
  return `${formatCents(terms.price_cents)} for ${calls} per ${terms.period_days} days`;
}

/** The price a creator has set: the announced one if any (what their editors show and save again). */
export function scheduledPriceCents(price: AnnouncedPrice & { price_cents: number }): number {
  return price.pending_price_cents ?? price.price_cents;
}

/**
 * What a creator reads beside their price while an increase is announced: when it applies and what
 * callers pay until then (docs/decisions/021); null when none is announced.
 */
export function priceChangeHint(price: AnnouncedPrice & { price_cents: number }, unit = ""): string | null {
  const notice = formatPriceNotice(price, unit);
  return notice && `${notice}; callers pay ${formatCents(price.price_cents)} until then.`;
}

/** An average rating out of five stars, one decimal: 4.25 → `4.3`; none yet → `–`. */
export function formatRating(average: number | null | undefined): string {
  if (average === null || average === undefined || !Number.isFinite(average)) return "–";
  return grouped(average, 1);
}

/** How many reviews: `1 review`, `1,204 reviews`. */
export function formatReviewCount(count: number): string {
  return `${formatNumber(count)} ${count === 1 ? "review" : "reviews"}`;
}
