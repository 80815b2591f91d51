-- A call's model cost its price did not pay (a plan-covered call, the owner's own call, a call whose
-- cost passed its creator's share) is taken from the creator's earnings by a sweep (issue 17,
-- billing/model-costs.ts); this marks the calls it has taken.
ALTER TABLE "invocations" ADD COLUMN "model_cost_posted_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "invocations_model_cost_due_idx" ON "invocations" USING btree ("id") WHERE "model_cost_micros" > "model_cost_deducted_micros" AND "model_cost_posted_at" IS NULL;
