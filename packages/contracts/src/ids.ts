import { z } from "zod";

/**
 * A UUID as our ids are written: 8-4-4-4-12 hex digits, either case. PostgreSQL's uuid input also
 * reads 32 digits without dashes, braces and other groupings, and rejects the rest with an error
 * (a 500 when a looser check let "36 dashes" through, issue 37): only this one form is accepted,
 * so every id that reaches a query is one PostgreSQL reads, and reads as what the client wrote.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID_PATTERN.test(value);
}

/** Every id of a path, query or body: a 400 naming the field when it is not a UUID. */
export const UuidSchema = z.string().regex(UUID_PATTERN, "must be a UUID (8-4-4-4-12 hex digits)");
