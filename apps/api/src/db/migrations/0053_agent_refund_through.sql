-- Issue 40: an agent's refund names the payment it goes back through (the rail's reference, a
-- Stripe PaymentIntent), so that a refund whose outcome was lost (a crash, Stripe's answer lost)
-- is asked again with the same idempotency key by the sweep, never paid twice nor left owed
-- while the rail paid it.
ALTER TABLE "agent_refunds" ADD COLUMN "through" text;
--> statement-breakpoint
CREATE INDEX "agent_refunds_owed_idx" ON "agent_refunds" ("updated_at") WHERE "status" = 'owed';
