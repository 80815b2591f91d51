-- Decision 045: a refunded or disputed top-up reaches the money it paid for. Each reversal of a
-- wallet payment records where its money came from (or went back to): the payer (wallet or
-- payer's debt) or a creator who earned from the top-up's spending (their earnings or debt, and
-- the platform's fee and model cost on those calls). Append-only; the sum per payment equals
-- what `reversed_payments` says was taken back (reconcile checks it).
CREATE TABLE "chargeback_parts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"payment_id" uuid NOT NULL REFERENCES "payments"("id") ON DELETE RESTRICT,
	"reference" text NOT NULL,
	"party" text NOT NULL,
	"creator_id" uuid REFERENCES "users"("id") ON DELETE RESTRICT,
	"amount_micros" bigint NOT NULL,
	"earnings_micros" bigint DEFAULT 0 NOT NULL,
	"fee_micros" bigint DEFAULT 0 NOT NULL,
	"model_cost_micros" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chargeback_parts_party" CHECK ("party" in ('payer', 'creator')),
	CONSTRAINT "chargeback_parts_creator" CHECK (("party" = 'creator') = ("creator_id" is not null)),
	CONSTRAINT "chargeback_parts_split" CHECK ("party" = 'payer' or "amount_micros" = "earnings_micros" + "fee_micros" + "model_cost_micros")
);
--> statement-breakpoint
CREATE INDEX "chargeback_parts_payment_idx" ON "chargeback_parts" USING btree ("payment_id");
--> statement-breakpoint
CREATE INDEX "chargeback_parts_creator_idx" ON "chargeback_parts" USING btree ("creator_id") WHERE "creator_id" is not null;
--> statement-breakpoint
-- An existing database: what was already taken back from a wallet payment was taken from its
-- payer (decision 028), so it is recorded as the payer's part.
INSERT INTO "chargeback_parts" ("payment_id", "reference", "party", "amount_micros")
SELECT r."payment_id", 'upgrade:' || r."payment_id"::text, 'payer', r."reversed_cents" * 10000
FROM "reversed_payments" r JOIN "payments" p ON p."id" = r."payment_id"
WHERE r."reversed_cents" <> 0 AND p."consumed_kind" IS DISTINCT FROM 'subscription';
