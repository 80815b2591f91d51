// Display rules only the analytics screens need; the shared ones (numbers, percentages,
// seconds, money, dates) come from lib/format.

/** Series dates are UTC calendar days ('YYYY-MM-DD'): shown as that day wherever the reader is. */
const shortDay = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
const longDay = new Intl.DateTimeFormat("en-US", {
  month: "short",
  day: "numeric",
  year: "numeric",
  timeZone: "UTC",
});
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

function parseDay(day: string): Date | null {
  const date = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** An axis tick: '2025-11-03' → 'Nov 3'. */
export function formatChartDay(day: string): string {
  const date = parseDay(day);
  return date ? shortDay.format(date) : day;
}

/** A tooltip heading: '2025-11-03' → 'Nov 3, 2025'. */
export function formatChartDayLong(day: string): string {
  const date = parseDay(day);
  return date ? longDay.format(date) : day;
}

/** An axis tick for counts: 1500 → '1.5K'. */
export function formatCompactNumber(value: number): string {
  return compact.format(value);
}

/** SPEC §9: an invocation is named by its first 8 characters. */
export function formatInvocationId(id: string): string {
  return id.length > 8 ? `${id.slice(0, 8)}…` : id;
}

/** SPEC §2: an error without a type is counted as 'Unknown Error'. */
export function formatErrorType(errorType: string | null): string {
  return errorType?.trim() ? errorType : "Unknown Error";
}
