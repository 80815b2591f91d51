-- Issue 40 (docs/decisions/070): an agent's payment, on any rail, is paid into its payer's balance
-- (an account-less wallet) and the call is then paid from it as any wallet call is.
CREATE TABLE "mpp_payments" (
  "id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
  "identity" text NOT NULL,
  "payer_user_id" uuid NOT NULL REFERENCES "users"("id") ON DELETE restrict,
  "application_id" uuid REFERENCES "applications"("id") ON DELETE set null,
  "amount_micros" bigint NOT NULL,
  "status" text DEFAULT 'settling' NOT NULL,
  "reference" text,
  "failure" text,
  "state" jsonb,
  "settle_attempts" integer DEFAULT 0 NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "mpp_payments_status" CHECK ("status" in ('settling', 'credited', 'failed')),
  CONSTRAINT "mpp_payments_amount_positive" CHECK ("amount_micros" > 0),
  CONSTRAINT "mpp_payments_credited_has_reference" CHECK ("status" <> 'credited' or "reference" is not null)
);
--> statement-breakpoint
CREATE UNIQUE INDEX "mpp_payments_identity_key" ON "mpp_payments" ("identity");
--> statement-breakpoint
CREATE INDEX "mpp_payments_payer_idx" ON "mpp_payments" ("payer_user_id", "created_at");
--> statement-breakpoint
CREATE INDEX "mpp_payments_open_idx" ON "mpp_payments" ("updated_at") WHERE "status" = 'settling';
--> statement-breakpoint
CREATE TABLE "agent_refunds" (
  "id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
  "payer_user_id" uuid NOT NULL REFERENCES "users"("id") ON DELETE restrict,
  "rail" text NOT NULL,
  "amount_micros" bigint NOT NULL,
  "status" text DEFAULT 'owed' NOT NULL,
  "reference" text,
  "reason" text,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "agent_refunds_status" CHECK ("status" in ('owed', 'refunded')),
  CONSTRAINT "agent_refunds_amount_positive" CHECK ("amount_micros" > 0),
  CONSTRAINT "agent_refunds_refunded_has_reference" CHECK ("status" <> 'refunded' or "reference" is not null)
);
--> statement-breakpoint
CREATE INDEX "agent_refunds_payer_idx" ON "agent_refunds" ("payer_user_id", "created_at");
--> statement-breakpoint
-- x402's payment-identifier extension (issue 40): a retry that names the same payment id is not paid again.
ALTER TABLE "x402_payments" ADD COLUMN "payment_identifier" text;
--> statement-breakpoint
CREATE UNIQUE INDEX "x402_payments_payment_identifier_key" ON "x402_payments" ("payer_user_id", "payment_identifier") WHERE "payment_identifier" IS NOT NULL AND "status" <> 'failed';
