-- x402 pay-per-call (issue 30, docs/decisions/052). One row per signed payment a call was admitted
-- with: the same payment (network, payer, nonce) can never pay twice, whatever the process. A
-- payment is verified before the call runs, settled only once the call was answered (`settling`
-- while the facilitator settles it, with the call's record kept for the sweep), `settled` with its
-- transaction, or `failed` (the call failed: never settled, nothing charged) / `unpaid` (the
-- facilitator refused to settle it).
CREATE TABLE "x402_payments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"network" text NOT NULL,
	"payer" text NOT NULL,
	"nonce" text NOT NULL,
	"scheme" text NOT NULL,
	"asset" text NOT NULL,
	"pay_to" text NOT NULL,
	"amount_micros" bigint NOT NULL,
	"application_id" uuid NOT NULL,
	"payer_user_id" uuid NOT NULL,
	"invocation_id" uuid,
	"status" text DEFAULT 'verified' NOT NULL,
	"failure" text,
	"tx_hash" text,
	"payload" jsonb NOT NULL,
	"requirements" jsonb NOT NULL,
	"call_record" jsonb,
	"fee_percent" numeric,
	"settle_attempts" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"settled_at" timestamp with time zone,
	CONSTRAINT "x402_payments_status" CHECK ("status" in ('verified', 'settling', 'settled', 'failed', 'unpaid')),
	CONSTRAINT "x402_payments_amount_positive" CHECK ("amount_micros" > 0),
	CONSTRAINT "x402_payments_settled_has_call" CHECK ("status" <> 'settled' or ("invocation_id" is not null and "tx_hash" is not null))
);--> statement-breakpoint
ALTER TABLE "x402_payments" ADD CONSTRAINT "x402_payments_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "x402_payments" ADD CONSTRAINT "x402_payments_payer_user_id_users_id_fk" FOREIGN KEY ("payer_user_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "x402_payments_identity_key" ON "x402_payments" USING btree ("network","payer","nonce");--> statement-breakpoint
CREATE UNIQUE INDEX "x402_payments_invocation_key" ON "x402_payments" USING btree ("invocation_id");--> statement-breakpoint
CREATE INDEX "x402_payments_open_idx" ON "x402_payments" USING btree ("updated_at") WHERE "status" in ('verified', 'settling');--> statement-breakpoint
-- The x402 clearing account, like `clearing`, goes below zero: money that arrived from outside (on chain).
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_nonnegative";--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_nonnegative" CHECK ("ledger_accounts"."kind" in ('clearing', 'x402_clearing') or ("ledger_accounts"."kind" = 'debt' and "ledger_accounts"."balance_micros" <= 0) or "ledger_accounts"."balance_micros" >= 0);
