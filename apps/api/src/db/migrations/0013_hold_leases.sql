ALTER TABLE "holds" ADD COLUMN "settled_cents" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "holds" ADD CONSTRAINT "holds_settled_within_amount" CHECK ("holds"."settled_cents" >= 0 and "holds"."settled_cents" <= "holds"."amount_cents");--> statement-breakpoint
-- A hold settled before leases paid for exactly one call: all of it was settled.
UPDATE "holds" SET "settled_cents" = "amount_cents" WHERE "status" = 'settled';
