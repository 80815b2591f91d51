import { AppError } from "./errors.ts";

// SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, terminated
// connections), plus 53300 (too many connections): the database is away, not the request at fault.
const UNAVAILABLE_SQLSTATE = /^(08\d{3}|57P0[1-4]|53300)$/;
const UNAVAILABLE_SOCKET = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
]);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|connection error|timeout exceeded when trying to connect|Cannot use a pool after calling end|PGlite is closed|terminating connection/i;

/** Seconds a client should wait before retrying while the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * A 503 with Retry-After when `error` (or any error in its cause chain, where Drizzle puts the
 * driver's error) means the database could not be reached; undefined for any other error.
 */
export function databaseUnavailable(error: unknown): AppError | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    const unavailable =
      (typeof code === "string" && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_SOCKET.has(code))) ||
      (typeof message === "string" && UNAVAILABLE_MESSAGE.test(message));
    if (unavailable) {
      return new AppError("unavailable", "The service is temporarily unavailable; retry shortly", {
        headers: { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) },
      });
    }
    current = cause;
  }
  return undefined;
}

/**
 * The SQLSTATE and constraint of a database error (Drizzle wraps the driver's error in `cause`),
 * or undefined when `error` did not come from the database.
 */
export function databaseErrorOf(error: unknown): { code: string; constraint?: string } | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const { code, constraint, cause } = current as { code?: unknown; constraint?: unknown; cause?: unknown };
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code))
      return { code, ...(typeof constraint === "string" ? { constraint } : {}) };
    current = cause;
  }
  return undefined;
}

/** True when `error` is a unique violation (23505), of `constraint` when one is named. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const found = databaseErrorOf(error);
  return found?.code === "23505" && (constraint === undefined || found.constraint === constraint);
}

/**
 * A 409 for a write that lost a race the code did not foresee (a unique key taken meanwhile, a
 * serialization failure or deadlock): the client may retry; it is never a 500.
 */
export function concurrentConflict(error: unknown): AppError | undefined {
  const code = databaseErrorOf(error)?.code;
  if (code === "23505" || code === "40001" || code === "40P01")
    return new AppError("conflict", "This conflicts with a change made at the same time; reload and retry");
  return undefined;
}
