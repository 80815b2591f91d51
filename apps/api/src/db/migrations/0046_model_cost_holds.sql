-- Every model call is prepaid by someone (issue 37, docs/decisions/062): a call no price pays for
-- (the owner's own call, Test Prompt, an eval case or judge, an embedded call) holds its worst-case
-- model cost from its creator's wallet before the vendor is called. One row per call, its id the
-- call's (the invocation's) id; the record of the call posts what it cost (`spent_micros`) to the
-- platform's model_cost account and releases the rest, in the invocation's transaction.
-- `spent_micros` is all that was posted for the call (from the hold, and from the wallet if the
-- vendor billed beyond it); `overrun_micros` what nothing covered (the platform's loss, never debt).
CREATE TABLE "model_cost_holds" (
	"id" uuid PRIMARY KEY NOT NULL,
	"creator_id" uuid NOT NULL REFERENCES "users"("id") ON DELETE restrict,
	"application_id" uuid NOT NULL REFERENCES "applications"("id") ON DELETE restrict,
	"amount_micros" bigint NOT NULL,
	"spent_micros" bigint DEFAULT 0 NOT NULL,
	"overrun_micros" bigint DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'held' NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone,
	CONSTRAINT "model_cost_holds_amount_positive" CHECK ("amount_micros" > 0),
	CONSTRAINT "model_cost_holds_spent_nonnegative" CHECK ("spent_micros" >= 0 AND "overrun_micros" >= 0),
	CONSTRAINT "model_cost_holds_status" CHECK ("status" in ('held', 'spent', 'released'))
);
--> statement-breakpoint
CREATE INDEX "model_cost_holds_open_idx" ON "model_cost_holds" USING btree ("expires_at") WHERE "status" = 'held';
--> statement-breakpoint
CREATE INDEX "model_cost_holds_creator_idx" ON "model_cost_holds" USING btree ("creator_id") WHERE "status" = 'held';
