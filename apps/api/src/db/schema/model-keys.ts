import { sql } from "drizzle-orm";
import { check, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { users } from "./auth.ts";

/**
 * A creator's own API key for one model provider (docs/decisions/026): prompt apps set to run on
 * the creator's keys call the vendor with it. AES-256-GCM sealed (lib/secrets.ts), like workflow
 * keys; responses show only `••••` and `last4`.
 */
export const creatorModelKeys = pgTable(
  "creator_model_keys",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    provider: text("provider", { enum: ["openai", "anthropic", "google", "mistral"] }).notNull(),
    keyEncrypted: text("key_encrypted").notNull(),
    last4: text("last4").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ name: "creator_model_keys_pkey", columns: [t.userId, t.provider] }),
    check(
      "creator_model_keys_provider_check",
      sql`${t.provider} in ('openai', 'anthropic', 'google', 'mistral')`,
    ),
  ],
);
