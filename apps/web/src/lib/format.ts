// SPEC's display rules, kept in one place: money in dollars with 2 decimals, percentages with
// one decimal, thousands separators, durations in seconds and local dates.

const money = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** An amount in dollars, e.g. revenue: `$1,234.50`. */
export function formatDollars(amount: number): string {
  const sign = amount < 0 ? "-" : "";
  return `${sign}$${money.format(Math.abs(amount))}`;
}

/** An integer amount in cents shown in dollars: 150 → `$1.50`. */
export function formatCents(cents: number): string {
  return formatDollars(cents / 100);
}

/** A value already expressed in percent, with one decimal: 97.54 → `97.5%`. */
export function formatPercent(value: number): string {
  return `${value.toFixed(1)}%`;
}

/** A count with thousands separators: 12345 → `12,345`. */
export function formatNumber(value: number): string {
  return integer.format(value);
}

/** A duration in seconds with the given decimals and an `s` suffix: 1.5 → `1.50s`. */
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
