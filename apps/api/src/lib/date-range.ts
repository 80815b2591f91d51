import { invalidFields } from "./errors.ts";

/**
 * The one reading of dates a request names (a period's `from`/`to`, a cursor's moment): a date
 * outside what the platform can have data for is a 400 naming the parameter, never a date handed to
 * the database (PostgreSQL has no year 0; `new Date("0000-01-01")` is valid JavaScript, and
 * `+275760` is not a date at all). Decision 046.
 */
export const EARLIEST_DATE = new Date("2000-01-01T00:00:00Z");
const DAY_MS = 86_400_000;
/** How far ahead a date may be: a year (a period ending "now" with some room for clocks and time zones). */
export const LATEST_AHEAD_MS = 366 * DAY_MS;

export const latestDate = (now = Date.now()) => new Date(now + LATEST_AHEAD_MS);

/** Whether a moment is one the platform can have data for (a cursor's, say). */
export function isDateInRange(at: Date): boolean {
  return !Number.isNaN(at.getTime()) && at >= EARLIEST_DATE && at <= latestDate();
}

/** One date parameter: an ISO date or date-time between 2000-01-01 and a year from now. */
export function parseDateParam(name: string, value: string): Date {
  const at = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/i.test(value) ? new Date(value) : undefined;
  if (!at || Number.isNaN(at.getTime()))
    throw invalidFields({ [name]: "must be an ISO 8601 date (YYYY-MM-DD) or date-time" });
  if (!isDateInRange(at))
    throw invalidFields({
      [name]: `must be between ${EARLIEST_DATE.toISOString().slice(0, 10)} and ${latestDate().toISOString().slice(0, 10)}`,
    });
  return at;
}

/**
 * A period from `from` to `to` (either left out: `to` is now, `from` is `defaultDays` before `to`),
 * `from` before `to`, at most `maxDays` long.
 */
export function parseDateRange(
  query: { from?: string | undefined; to?: string | undefined },
  options: { defaultDays: number; maxDays: number },
): { from: Date; to: Date } {
  const to = query.to !== undefined ? parseDateParam("to", query.to) : new Date();
  const from =
    query.from !== undefined
      ? parseDateParam("from", query.from)
      : new Date(Math.max(EARLIEST_DATE.getTime(), to.getTime() - options.defaultDays * DAY_MS));
  if (!(from < to)) throw invalidFields({ from: "must be before to" });
  if (to.getTime() - from.getTime() > options.maxDays * DAY_MS)
    throw invalidFields({ from: `must be at most ${options.maxDays} days before to` });
  return { from, to };
}
