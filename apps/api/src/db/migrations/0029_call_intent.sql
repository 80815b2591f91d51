-- Decision 037: a paid call's record in three steps (intent, completion, finish).
-- The price a pending call spent from its hold (micro-dollars), so a void can give it back.
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "spent_micros" bigint;--> statement-breakpoint
-- After this a pending call is voided by the sweeper, and a completed one it finishes (rollups).
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "void_after" timestamptz;--> statement-breakpoint
-- True from the intent until the finish has added the call to the rollups.
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "unfinished" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_unfinished_idx" ON "invocations" ("void_after") WHERE "unfinished";--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_pending_hold_idx" ON "invocations" ("hold_id") WHERE "status" = 'pending';
