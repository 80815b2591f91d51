-- Per-version figures (issue 31 part 4): each prompt version's calls, revenue, fee and model cost
-- per app and UTC day, kept by the same statement that keeps app_daily_stats (analytics/rollups.ts
-- ROLLUPS_FROM_CALLS, for the single record and the batch record alike) and sharded and folded the
-- same way (compactRollups), so an app's breakdown by version reads a few rows per version and day
-- however many calls there were. Only calls that name their version (invocations.app_version,
-- migration 0040) are kept here; the readers give what the app's rollup has beyond them (workflow
-- apps, calls from before versions, calls refused before a version was chosen) as "no version", so
-- the rows always add up to app_daily_stats exactly.
CREATE TABLE "app_version_daily_stats" (
	"application_id" uuid NOT NULL REFERENCES "applications"("id") ON DELETE CASCADE,
	"day" date NOT NULL,
	"version" integer NOT NULL,
	"shard" smallint NOT NULL,
	"invocations" integer DEFAULT 0 NOT NULL,
	"successes" integer DEFAULT 0 NOT NULL,
	"errors" integer DEFAULT 0 NOT NULL,
	"latency_ms_sum" bigint DEFAULT 0 NOT NULL,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	"revenue_cents" bigint DEFAULT 0 NOT NULL,
	"fee_micros" bigint DEFAULT 0 NOT NULL,
	"model_cost_micros" bigint DEFAULT 0 NOT NULL,
	"model_cost_deducted_micros" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "app_version_daily_stats_pk" PRIMARY KEY("application_id","day","version","shard")
);
--> statement-breakpoint
CREATE INDEX "app_version_daily_stats_unfolded_idx" ON "app_version_daily_stats" ("day") WHERE "shard" <> 0;
--> statement-breakpoint
-- The calls recorded since migration 0040 with their version, with the aggregates the recorder
-- keeps (a successful call's charge and fee; every call's model cost), into shard 0 (as folded).
INSERT INTO "app_version_daily_stats" (application_id, day, version, shard, invocations, successes,
  errors, latency_ms_sum, input_tokens, output_tokens, revenue_cents, fee_micros, model_cost_micros,
  model_cost_deducted_micros)
SELECT i.application_id, (i.created_at AT TIME ZONE 'UTC')::date, i.app_version, 0, count(*),
  count(*) FILTER (WHERE i.status = 'success'), count(*) FILTER (WHERE i.status <> 'success'),
  sum(i.latency_ms), sum(i.input_tokens), sum(i.output_tokens),
  coalesce(sum(i.charged_cents) FILTER (WHERE i.status = 'success'), 0),
  coalesce(sum(i.fee_micros) FILTER (WHERE i.status = 'success' AND i.charged_cents > 0), 0),
  sum(i.model_cost_micros), sum(i.model_cost_deducted_micros)
FROM invocations i JOIN applications a ON a.id = i.application_id
WHERE i.app_version IS NOT NULL
GROUP BY 1, 2, 3;
