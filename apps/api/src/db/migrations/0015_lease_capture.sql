ALTER TABLE "invocations" ADD COLUMN "hold_id" uuid;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "fee_cents" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "calls" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "holds" ADD CONSTRAINT "holds_fee_within_settled" CHECK ("holds"."fee_cents" >= 0 and "holds"."fee_cents" <= "holds"."settled_cents");--> statement-breakpoint
-- Holds open at the upgrade were settled call by call by the previous version: what they spent is
-- already posted. Keep only their unspent rest as the hold, so closing one posts nothing twice
-- (docs/decisions/020). Stop the previous version's processes before this runs.
UPDATE "holds" SET "amount_cents" = "amount_cents" - "settled_cents", "settled_cents" = 0
WHERE "status" = 'held' AND "settled_cents" > 0;
