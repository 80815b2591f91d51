CREATE TABLE "app_daily_errors" (
	"application_id" uuid NOT NULL,
	"day" date NOT NULL,
	"error_type" text NOT NULL,
	"count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "app_daily_errors_application_id_day_error_type_pk" PRIMARY KEY("application_id","day","error_type")
);
--> statement-breakpoint
CREATE TABLE "app_daily_stats" (
	"application_id" uuid NOT NULL,
	"day" date NOT NULL,
	"shard" smallint NOT NULL,
	"invocations" integer DEFAULT 0 NOT NULL,
	"successes" integer DEFAULT 0 NOT NULL,
	"errors" integer DEFAULT 0 NOT NULL,
	"latency_ms_sum" bigint DEFAULT 0 NOT NULL,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	"revenue_cents" bigint DEFAULT 0 NOT NULL,
	"last_invocation_at" timestamp with time zone NOT NULL,
	CONSTRAINT "app_daily_stats_application_id_day_shard_pk" PRIMARY KEY("application_id","day","shard")
);
--> statement-breakpoint
CREATE TABLE "app_daily_users" (
	"application_id" uuid NOT NULL,
	"day" date NOT NULL,
	"end_user" text NOT NULL,
	CONSTRAINT "app_daily_users_application_id_day_end_user_pk" PRIMARY KEY("application_id","day","end_user")
);
--> statement-breakpoint
ALTER TABLE "app_daily_errors" ADD CONSTRAINT "app_daily_errors_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app_daily_stats" ADD CONSTRAINT "app_daily_stats_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app_daily_users" ADD CONSTRAINT "app_daily_users_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;