-- Signed call receipts (docs/decisions/073): the Ed25519 keys that sign them. The private half is
-- sealed with SECRET_KEY (lib/secrets.ts), the public half is published as a JWKS at
-- /.well-known/promptmint-receipt-keys.json. A rotation adds a key of the next generation; the
-- newest signs, every one not retired is published so older receipts still verify.
CREATE TABLE "receipt_signing_keys" (
	"kid" text PRIMARY KEY NOT NULL,
	"generation" integer NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"sealed_private_jwk" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp with time zone,
	CONSTRAINT "receipt_signing_keys_generation_positive" CHECK ("generation" > 0)
);--> statement-breakpoint
CREATE UNIQUE INDEX "receipt_signing_keys_generation_key" ON "receipt_signing_keys" USING btree ("generation");
