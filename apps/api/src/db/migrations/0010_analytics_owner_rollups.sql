CREATE TABLE "app_users" (
	"application_id" uuid NOT NULL,
	"end_user" text NOT NULL,
	"last_day" date NOT NULL,
	CONSTRAINT "app_users_application_id_end_user_pk" PRIMARY KEY("application_id","end_user")
);
--> statement-breakpoint
CREATE TABLE "owner_daily_errors" (
	"owner_id" uuid NOT NULL,
	"day" date NOT NULL,
	"error_type" text NOT NULL,
	"shard" smallint NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "owner_daily_errors_owner_id_day_error_type_shard_pk" PRIMARY KEY("owner_id","day","error_type","shard")
);
--> statement-breakpoint
CREATE TABLE "owner_daily_stats" (
	"owner_id" uuid NOT NULL,
	"day" date NOT NULL,
	"shard" smallint NOT NULL,
	"invocations" integer DEFAULT 0 NOT NULL,
	"successes" integer DEFAULT 0 NOT NULL,
	"errors" integer DEFAULT 0 NOT NULL,
	"latency_ms_sum" bigint DEFAULT 0 NOT NULL,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "owner_daily_stats_owner_id_day_shard_pk" PRIMARY KEY("owner_id","day","shard")
);
--> statement-breakpoint
CREATE TABLE "owner_users" (
	"owner_id" uuid NOT NULL,
	"end_user" text NOT NULL,
	"last_day" date NOT NULL,
	CONSTRAINT "owner_users_owner_id_end_user_pk" PRIMARY KEY("owner_id","end_user")
);
--> statement-breakpoint
ALTER TABLE "app_users" ADD CONSTRAINT "app_users_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "owner_daily_errors" ADD CONSTRAINT "owner_daily_errors_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "owner_daily_stats" ADD CONSTRAINT "owner_daily_stats_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "owner_users" ADD CONSTRAINT "owner_users_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "app_users_app_last_day_idx" ON "app_users" USING btree ("application_id","last_day");--> statement-breakpoint
CREATE INDEX "owner_daily_errors_unfolded_idx" ON "owner_daily_errors" USING btree ("day") WHERE "owner_daily_errors"."shard" <> 0;--> statement-breakpoint
CREATE INDEX "owner_daily_stats_unfolded_idx" ON "owner_daily_stats" USING btree ("day") WHERE "owner_daily_stats"."shard" <> 0;--> statement-breakpoint
CREATE INDEX "owner_users_owner_last_day_idx" ON "owner_users" USING btree ("owner_id","last_day");--> statement-breakpoint
CREATE INDEX "app_daily_stats_unfolded_idx" ON "app_daily_stats" USING btree ("day") WHERE "app_daily_stats"."shard" <> 0;--> statement-breakpoint
-- Hand-written from here: fill the new rollups from the existing ones, then drop app_daily_users
-- (Drizzle generated its DROP before the copy; it was moved to the end).
-- Each user's latest day, per app and per owner.
INSERT INTO "app_users" ("application_id", "end_user", "last_day")
SELECT "application_id", "end_user", max("day") FROM "app_daily_users" GROUP BY 1, 2;--> statement-breakpoint
INSERT INTO "owner_users" ("owner_id", "end_user", "last_day")
SELECT a."owner_id", u."end_user", max(u."day")
FROM "app_daily_users" u JOIN "applications" a ON a."id" = u."application_id"
GROUP BY 1, 2;--> statement-breakpoint
-- The owner rollups start as the sum of their apps' rollups, in shard 0.
INSERT INTO "owner_daily_stats" ("owner_id", "day", "shard", "invocations", "successes", "errors",
  "latency_ms_sum", "input_tokens", "output_tokens")
SELECT a."owner_id", s."day", 0, sum(s."invocations"), sum(s."successes"), sum(s."errors"),
  sum(s."latency_ms_sum"), sum(s."input_tokens"), sum(s."output_tokens")
FROM "app_daily_stats" s JOIN "applications" a ON a."id" = s."application_id"
GROUP BY 1, 2;--> statement-breakpoint
INSERT INTO "owner_daily_errors" ("owner_id", "day", "error_type", "shard", "count")
SELECT a."owner_id", e."day", e."error_type", 0, sum(e."count")
FROM "app_daily_errors" e JOIN "applications" a ON a."id" = e."application_id"
GROUP BY 1, 2, 3;--> statement-breakpoint
DROP TABLE "app_daily_users" CASCADE;
