-- The issuer's signing keys are sealed with SECRET_KEY at start-up (SQL cannot know it): existing
-- keys stay in private_jwk until the first start of this version moves them to sealed_jwk
-- (identity/signing-keys.ts). A row holds exactly one of the two.
ALTER TABLE "oidc_signing_keys" ALTER COLUMN "private_jwk" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "oidc_signing_keys" ADD COLUMN "sealed_jwk" text;--> statement-breakpoint
ALTER TABLE "oidc_signing_keys" ADD CONSTRAINT "oidc_signing_keys_one_form" CHECK (("oidc_signing_keys"."private_jwk" is null) <> ("oidc_signing_keys"."sealed_jwk" is null));--> statement-breakpoint
CREATE INDEX "oidc_payloads_account_id_idx" ON "oidc_payloads" USING btree (("payload"->>'accountId'));--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "sessions_valid_after" timestamp with time zone;--> statement-breakpoint
CREATE TABLE "embed_limits" (
	"application_id" uuid PRIMARY KEY NOT NULL,
	"daily_cap_cents" integer DEFAULT 500 NOT NULL,
	"visitor_calls_per_hour" integer DEFAULT 20 NOT NULL,
	"visitor_calls_per_day" integer DEFAULT 100 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "embed_limits_cap_nonnegative" CHECK ("embed_limits"."daily_cap_cents" >= 0),
	CONSTRAINT "embed_limits_visitor_positive" CHECK ("embed_limits"."visitor_calls_per_hour" > 0 and "embed_limits"."visitor_calls_per_day" > 0)
);
--> statement-breakpoint
CREATE TABLE "embed_daily_spend" (
	"application_id" uuid NOT NULL,
	"day" date NOT NULL,
	"spent_cents" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "embed_daily_spend_application_id_day_pk" PRIMARY KEY("application_id","day"),
	CONSTRAINT "embed_daily_spend_nonnegative" CHECK ("embed_daily_spend"."spent_cents" >= 0)
);
--> statement-breakpoint
CREATE TABLE "embed_visitor_calls" (
	"application_id" uuid NOT NULL,
	"visitor" text NOT NULL,
	"window" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"calls" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "embed_visitor_calls_application_id_visitor_window_window_start_pk" PRIMARY KEY("application_id","visitor","window","window_start")
);
--> statement-breakpoint
ALTER TABLE "embed_limits" ADD CONSTRAINT "embed_limits_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "embed_daily_spend" ADD CONSTRAINT "embed_daily_spend_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "embed_visitor_calls" ADD CONSTRAINT "embed_visitor_calls_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "embed_visitor_calls_window_start_idx" ON "embed_visitor_calls" USING btree ("window_start");
