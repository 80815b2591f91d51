-- The wallet statement (docs/decisions/029) reads a payer's charged calls by day, and an owner's
-- embedded widget's leases (payer = creator); these keep it from scanning every call.
CREATE INDEX IF NOT EXISTS "invocations_payer_charged_idx" ON "invocations" ("caller_user_id", "created_at") WHERE "hold_id" is not null and "charged_cents" > 0;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "holds_embedded_idx" ON "holds" ("payer_id", "created_at") WHERE "payer_id" = "creator_id";
