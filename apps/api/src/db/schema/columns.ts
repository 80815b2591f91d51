import { type AnyPgColumn, bigint, timestamp, uuid } from "drizzle-orm/pg-core";
import type { UpdateDeleteAction } from "drizzle-orm/pg-core/foreign-keys";

// The column groups most tables repeat, written once. Each call makes a new column with exactly
// the SQL the tables spelled out before, so drizzle-kit generates nothing new from them.

/** A random uuid primary key. */
export const generatedId = () => uuid("id").primaryKey().defaultRandom();

/** A moment with its time zone (timestamptz). */
export const timestamptz = (name: string) => timestamp(name, { withTimezone: true });

export const createdAt = () => timestamptz("created_at").notNull().defaultNow();
export const updatedAt = () => timestamptz("updated_at").notNull().defaultNow();

/** A 64-bit integer read as a JS number: micro-dollars, cents, sums of milliseconds or tokens. */
export const bigNumber = (name: string) => bigint(name, { mode: "number" });

/** A required uuid pointing at another table's row. */
export const reference = (name: string, target: () => AnyPgColumn, onDelete: UpdateDeleteAction) =>
  uuid(name).notNull().references(target, { onDelete });
