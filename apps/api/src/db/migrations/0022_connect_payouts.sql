-- Creators are paid through Stripe Connect (Express) or the offline sandbox (issue 17 item 3,
-- docs/decisions/027): one connected account per creator, one row per payout, and the sandbox's
-- test clock (an offset every process reads, so availability and the schedule agree).
CREATE TABLE "connect_accounts" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"gateway" text NOT NULL,
	"external_id" text NOT NULL,
	"details_submitted" boolean DEFAULT false NOT NULL,
	"payouts_enabled" boolean DEFAULT false NOT NULL,
	"disabled_reason" text,
	"requirements_due" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"sandbox_bank" text,
	"onboarding_token_sha256" text,
	"onboarding_token_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "connect_accounts_gateway" CHECK ("connect_accounts"."gateway" in ('stripe', 'sandbox')),
	CONSTRAINT "connect_accounts_sandbox_bank" CHECK ("connect_accounts"."sandbox_bank" is null or "connect_accounts"."sandbox_bank" in ('succeeds', 'fails'))
);--> statement-breakpoint
ALTER TABLE "connect_accounts" ADD CONSTRAINT "connect_accounts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "connect_accounts_external_key" ON "connect_accounts" USING btree ("gateway","external_id");--> statement-breakpoint
CREATE TABLE "payouts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"creator_id" uuid NOT NULL,
	"gateway" text NOT NULL,
	"connect_account_id" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"currency" text DEFAULT 'usd' NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"automatic" boolean DEFAULT false NOT NULL,
	"idempotency_key" text NOT NULL,
	"requested_cents" bigint,
	"failure_code" text,
	"failure_reason" text,
	"transfer_id" text,
	"stripe_payout_id" text,
	"reversal_id" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"in_transit_at" timestamp with time zone,
	"paid_at" timestamp with time zone,
	"failed_at" timestamp with time zone,
	CONSTRAINT "payouts_amount_positive" CHECK ("payouts"."amount_cents" > 0),
	CONSTRAINT "payouts_status" CHECK ("payouts"."status" in ('pending', 'in_transit', 'paid', 'failed', 'reversed')),
	CONSTRAINT "payouts_gateway" CHECK ("payouts"."gateway" in ('stripe', 'sandbox'))
);--> statement-breakpoint
ALTER TABLE "payouts" ADD CONSTRAINT "payouts_creator_id_users_id_fk" FOREIGN KEY ("creator_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payouts_idempotency_key" ON "payouts" USING btree ("creator_id","idempotency_key");--> statement-breakpoint
CREATE UNIQUE INDEX "payouts_stripe_payout_key" ON "payouts" USING btree ("stripe_payout_id");--> statement-breakpoint
CREATE INDEX "payouts_creator_idx" ON "payouts" USING btree ("creator_id","created_at");--> statement-breakpoint
CREATE INDEX "payouts_open_idx" ON "payouts" USING btree ("status","updated_at");--> statement-breakpoint
CREATE TABLE "sandbox_clock" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"offset_ms" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sandbox_clock_one_row" CHECK ("sandbox_clock"."id" = 1),
	CONSTRAINT "sandbox_clock_forward" CHECK ("sandbox_clock"."offset_ms" >= 0)
);
