-- Price increases wait out a notice period (docs/decisions/021): the increase is stored beside the
-- current price and applies from pending_price_at on. Existing rows have nothing pending.
ALTER TABLE "applications" ADD COLUMN "pending_price_cents" integer;--> statement-breakpoint
ALTER TABLE "applications" ADD COLUMN "pending_price_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "applications" ADD CONSTRAINT "applications_pending_price_increase" CHECK (("applications"."pending_price_cents" is null) = ("applications"."pending_price_at" is null) and ("applications"."pending_price_cents" is null or "applications"."pending_price_cents" > "applications"."price_cents"));--> statement-breakpoint
ALTER TABLE "packages" ADD COLUMN "pending_price_cents" integer;--> statement-breakpoint
ALTER TABLE "packages" ADD COLUMN "pending_price_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "packages" ADD CONSTRAINT "packages_pending_price_increase" CHECK (("packages"."pending_price_cents" is null) = ("packages"."pending_price_at" is null) and ("packages"."pending_price_cents" is null or "packages"."pending_price_cents" > "packages"."price_cents"));
