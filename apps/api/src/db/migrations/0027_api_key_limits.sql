-- Keys consumers can hand to software (docs/decisions/035): a spend limit per UTC period, an
-- expiry date and an allow-list of apps on each key; what a limited key spent per period, and the
-- prices reserved for its calls in flight (given back by the sweeper when their call was never charged).
ALTER TABLE "api_keys" ADD COLUMN "spend_limit_cents" bigint;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "limit_reset" text DEFAULT 'never' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "allowed_app_ids" uuid[];--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_spend_limit_positive" CHECK ("spend_limit_cents" is null or "spend_limit_cents" >= 1);--> statement-breakpoint
CREATE TABLE "api_key_spend" (
	"key_id" uuid NOT NULL REFERENCES "api_keys"("id") ON DELETE cascade,
	"period_start" timestamp with time zone NOT NULL,
	"spent_micros" bigint NOT NULL,
	CONSTRAINT "api_key_spend_key_id_period_start_pk" PRIMARY KEY("key_id","period_start"),
	CONSTRAINT "api_key_spend_not_negative" CHECK ("spent_micros" >= 0)
);--> statement-breakpoint
CREATE TABLE "api_key_reservations" (
	"call_id" uuid PRIMARY KEY NOT NULL,
	"key_id" uuid NOT NULL REFERENCES "api_keys"("id") ON DELETE cascade,
	"period_start" timestamp with time zone NOT NULL,
	"micros" bigint NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);--> statement-breakpoint
CREATE INDEX "api_key_reservations_expiry_idx" ON "api_key_reservations" USING btree ("expires_at");
