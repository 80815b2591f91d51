-- Decision 025: an answered call is charged exactly once, whatever happens to its plan or lease.
-- A plan that can cover calls again no longer expires the pair's open holds (migration 0014):
-- expiring a hold under calls in flight let those calls answer without being charged. Instead,
-- each call is matched to the plan when it is recorded (gateway/recorder.ts): an included call if
-- the plan has one, its price from the hold otherwise. Holds close only when their process is
-- done with them or, after a crash, when the sweeper finds them past their deadline.
DROP TRIGGER IF EXISTS "subscriptions_new_expires_holds" ON "subscriptions";--> statement-breakpoint
DROP TRIGGER IF EXISTS "subscriptions_usable_expires_holds" ON "subscriptions";--> statement-breakpoint
DROP FUNCTION IF EXISTS "pm_expire_holds_of_subscriber"();--> statement-breakpoint
-- The subscription (and which of its periods) whose included call covered an invocation: the
-- reconcile proves every included call is counted in exactly one period.
ALTER TABLE "invocations" ADD COLUMN "subscription_id" uuid;--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN "plan_period_start" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "invocations_subscription_idx" ON "invocations" USING btree ("subscription_id","plan_period_start") WHERE "subscription_id" is not null;
--> statement-breakpoint
-- Another process needs the money a lease holds (its payer's wallet cannot cover a price): the
-- lease's process notices the mark, takes no new call on it and closes it (decision 025).
ALTER TABLE "holds" ADD COLUMN "recalled_at" timestamp with time zone;
--> statement-breakpoint
-- An included call taken for a call in flight (decision 025): removed when the call is recorded
-- or gives it back; one a crashed process left behind is given back by the sweeper once its
-- deadline passed, so a crash never costs a subscriber an included call.
CREATE TABLE "included_calls" (
	"id" uuid PRIMARY KEY NOT NULL,
	"subscription_id" uuid NOT NULL,
	"period_start" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "included_calls_expiry_idx" ON "included_calls" USING btree ("expires_at");
