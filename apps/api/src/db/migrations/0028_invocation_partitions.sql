-- Invocations partitioned by day of created_at (issue 20, docs/decisions/038): a day's raw calls are
-- one table, so recording and reading touch only recent, small indexes, and retention drops whole
-- days (no DELETE, no bloat). The rollups (app/owner daily stats) are never dropped.
-- The existing table is renamed, the partitioned one created with a partition for every day it has
-- calls (and the next 7), its rows copied, and the old table dropped.
ALTER TABLE "invocations" RENAME TO "invocations_unpartitioned";--> statement-breakpoint
ALTER INDEX "invocations_pkey" RENAME TO "invocations_unpartitioned_pkey";--> statement-breakpoint
ALTER INDEX "invocations_app_created_idx" RENAME TO "invocations_unpartitioned_app_created_idx";--> statement-breakpoint
ALTER INDEX "invocations_subscription_idx" RENAME TO "invocations_unpartitioned_subscription_idx";--> statement-breakpoint
ALTER INDEX "invocations_payer_charged_idx" RENAME TO "invocations_unpartitioned_payer_charged_idx";--> statement-breakpoint
ALTER INDEX "invocations_model_cost_due_idx" RENAME TO "invocations_unpartitioned_model_cost_due_idx";--> statement-breakpoint
CREATE TABLE "invocations" (
	"id" uuid DEFAULT gen_random_uuid() NOT NULL,
	"application_id" uuid NOT NULL,
	"caller_user_id" uuid,
	"api_key_id" uuid,
	"end_user" text,
	"conversation_id" uuid,
	"mode" text NOT NULL,
	"status" text NOT NULL,
	"error_type" text,
	"error_message" text,
	"model" text,
	"latency_ms" integer NOT NULL,
	"input_tokens" integer DEFAULT 0 NOT NULL,
	"output_tokens" integer DEFAULT 0 NOT NULL,
	"charged_cents" bigint DEFAULT 0 NOT NULL,
	"fee_micros" bigint DEFAULT 0 NOT NULL,
	"model_cost_micros" bigint DEFAULT 0 NOT NULL,
	"model_cost_deducted_micros" bigint DEFAULT 0 NOT NULL,
	"model_cost_posted_at" timestamp with time zone,
	"hold_id" uuid,
	"subscription_id" uuid,
	"plan_period_start" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "invocations_pkey" PRIMARY KEY ("id", "created_at")
) PARTITION BY RANGE ("created_at");--> statement-breakpoint
ALTER TABLE "invocations" ADD CONSTRAINT "invocations_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invocations" ADD CONSTRAINT "invocations_caller_user_id_users_id_fk" FOREIGN KEY ("caller_user_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invocations" ADD CONSTRAINT "invocations_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "invocations_app_created_idx" ON "invocations" USING btree ("application_id","created_at");--> statement-breakpoint
CREATE INDEX "invocations_subscription_idx" ON "invocations" USING btree ("subscription_id","plan_period_start") WHERE "subscription_id" is not null;--> statement-breakpoint
CREATE INDEX "invocations_payer_charged_idx" ON "invocations" USING btree ("caller_user_id","created_at") WHERE "hold_id" is not null and "charged_cents" > 0;--> statement-breakpoint
CREATE INDEX "invocations_model_cost_due_idx" ON "invocations" USING btree ("id") WHERE "model_cost_micros" > "model_cost_deducted_micros" AND "model_cost_posted_at" is null;--> statement-breakpoint
-- Calls of a day no partition exists for yet land here, so a call is never refused for want of
-- one; the maintenance moves them into their day's partition when it creates it.
CREATE TABLE "invocations_default" PARTITION OF "invocations" DEFAULT;--> statement-breakpoint
-- The partition of one UTC day, created if missing: a plain table attached to "invocations" (the
-- attach takes a lock that lets calls be recorded meanwhile), with the day's calls that the default
-- partition holds moved into it first. Answers whether it created one.
CREATE FUNCTION "pm_invocations_partition"("day" date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  part text := 'invocations_p' || to_char("day", 'YYYYMMDD');
  lo timestamptz := "day"::timestamp AT TIME ZONE 'UTC';
  hi timestamptz := ("day" + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
  IF to_regclass(part) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE "invocations" INCLUDING DEFAULTS)', part);
  EXECUTE format(
    'WITH moved AS (DELETE FROM "invocations_default" WHERE "created_at" >= %L AND "created_at" < %L RETURNING *) '
    'INSERT INTO %I SELECT * FROM moved', lo, hi, part);
  EXECUTE format('ALTER TABLE "invocations" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
  RETURN true;
END
$$;--> statement-breakpoint
SELECT "pm_invocations_partition"(d::date)
FROM generate_series(
  coalesce((SELECT min(("created_at" AT TIME ZONE 'UTC')::date) FROM "invocations_unpartitioned"), (now() AT TIME ZONE 'UTC')::date),
  (now() AT TIME ZONE 'UTC')::date + 7,
  interval '1 day') AS d;--> statement-breakpoint
INSERT INTO "invocations" ("id", "application_id", "caller_user_id", "api_key_id", "end_user", "conversation_id",
  "mode", "status", "error_type", "error_message", "model", "latency_ms", "input_tokens", "output_tokens",
  "charged_cents", "fee_micros", "model_cost_micros", "model_cost_deducted_micros", "model_cost_posted_at",
  "hold_id", "subscription_id", "plan_period_start", "created_at")
SELECT "id", "application_id", "caller_user_id", "api_key_id", "end_user", "conversation_id",
  "mode", "status", "error_type", "error_message", "model", "latency_ms", "input_tokens", "output_tokens",
  "charged_cents", "fee_micros", "model_cost_micros", "model_cost_deducted_micros", "model_cost_posted_at",
  "hold_id", "subscription_id", "plan_period_start", "created_at"
FROM "invocations_unpartitioned";--> statement-breakpoint
DROP TABLE "invocations_unpartitioned";--> statement-breakpoint
-- What money checks need of calls whose day was dropped (retention), folded in before the drop:
-- each hold's calls (reconcile), each payer's charged calls per app and day (wallet statement),
-- each plan period's successful covered calls (reconcile's plan checks).
CREATE TABLE "dropped_hold_calls" (
	"hold_id" uuid PRIMARY KEY NOT NULL,
	"calls" integer NOT NULL,
	"fee_micros" bigint NOT NULL,
	"model_cost_deducted_micros" bigint NOT NULL
);--> statement-breakpoint
CREATE TABLE "dropped_payer_calls" (
	"caller_user_id" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"day" date NOT NULL,
	"calls" integer NOT NULL,
	"charged_cents" bigint NOT NULL,
	"last_at" timestamp with time zone NOT NULL,
	CONSTRAINT "dropped_payer_calls_pkey" PRIMARY KEY ("caller_user_id", "application_id", "day")
);--> statement-breakpoint
CREATE TABLE "dropped_plan_calls" (
	"subscription_id" uuid NOT NULL,
	"plan_period_start" timestamp with time zone NOT NULL,
	"calls" integer NOT NULL,
	CONSTRAINT "dropped_plan_calls_pkey" PRIMARY KEY ("subscription_id", "plan_period_start")
);
