import { sql } from "drizzle-orm";
import { check, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { users } from "./auth.ts";
import { createdAt, reference, updatedAt } from "./columns.ts";

/**
 * A creator's own API key for one model provider (docs/decisions/026): prompt apps set to run on
 * the creator's keys call the vendor with it. AES-256-GCM sealed (lib/secrets.ts), like workflow
 * keys; responses show only `••••` and `last4`.
 */
export const creatorModelKeys = pgTable(
  "creator_model_keys",
  {
    userId: reference("user_id", () => users.id, "cascade"),
    provider: text("provider", { enum: ["openai", "anthropic", "google", "mistral"] }).notNull(),
    keyEncrypted: text("key_encrypted").notNull(),
    last4: text("last4").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: "creator_model_keys_pkey", columns: [t.userId, t.provider] }),
    check(
      "creator_model_keys_provider_check",
      sql`${t.provider} in ('openai', 'anthropic', 'google', 'mistral')`,
    ),
  ],
);
