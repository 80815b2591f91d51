import { sql } from "drizzle-orm";
import { check, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, timestamptz } from "./columns.ts";

/**
 * The Ed25519 keys that sign call receipts (migration 0052, docs/decisions/073). The private JWK
 * is sealed with SECRET_KEY (lib/secrets.ts): a copy of the database alone cannot sign receipts.
 * The newest generation signs; every key not retired is published (the receipts' JWKS).
 */
export const receiptSigningKeys = pgTable(
  "receipt_signing_keys",
  {
    kid: text("kid").primaryKey(),
    generation: integer("generation").notNull(),
    publicJwk: jsonb("public_jwk").notNull(),
    sealedPrivateJwk: text("sealed_private_jwk").notNull(),
    createdAt: createdAt(),
    retiredAt: timestamptz("retired_at"),
  },
  (t) => [
    uniqueIndex("receipt_signing_keys_generation_key").on(t.generation),
    check("receipt_signing_keys_generation_positive", sql`${t.generation} > 0`),
  ],
);
