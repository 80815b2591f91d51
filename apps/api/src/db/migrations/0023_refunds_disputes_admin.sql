-- Issue 17 items 4 and 5 (docs/decisions/028): refunds and disputes of card payments, the
-- operator's suspensions, and an append-only audit log of every operator action.
--
-- What the operator did, to whom, and why. Append-only: rows are never updated or deleted.
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"actor_id" uuid REFERENCES "users"("id") ON DELETE RESTRICT,
	"actor_email" text NOT NULL,
	"action" text NOT NULL,
	"target_kind" text NOT NULL,
	"target_id" text NOT NULL,
	"reason" text DEFAULT '' NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_log_created_idx" ON "audit_log" USING btree ("created_at","id");
--> statement-breakpoint
CREATE FUNCTION "pm_audit_log_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "audit_log_append_only" BEFORE UPDATE OR DELETE ON "audit_log"
  FOR EACH ROW EXECUTE FUNCTION "pm_audit_log_append_only"();
--> statement-breakpoint
-- An app or a user the operator suspended: the app (or every app of the user) answers 404 to
-- callers, the user's API keys are refused, and the user is paid nothing out while it stands.
CREATE TABLE "suspensions" (
	"target_kind" text NOT NULL,
	"target_id" uuid NOT NULL,
	"reason" text NOT NULL,
	"actor_id" uuid REFERENCES "users"("id") ON DELETE RESTRICT,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "suspensions_pkey" PRIMARY KEY ("target_kind","target_id"),
	CONSTRAINT "suspensions_kind" CHECK ("target_kind" in ('application', 'user'))
);
--> statement-breakpoint
-- Each refund (its gateway id) and each dispute of a card payment, recorded once. A refund's
-- amount is what it added to the charge's refunded total; a dispute's is the disputed amount,
-- taken back while it is open or lost (an inquiry, status warning_*, takes nothing).
CREATE TABLE "payment_reversals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"payment_id" uuid NOT NULL REFERENCES "payments"("id") ON DELETE RESTRICT,
	"kind" text NOT NULL,
	"external_id" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"status" text NOT NULL,
	"reason" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payment_reversals_kind" CHECK ("kind" in ('refund', 'dispute')),
	CONSTRAINT "payment_reversals_amount" CHECK ("amount_cents" >= 0),
	CONSTRAINT "payment_reversals_status" CHECK (
		("kind" = 'refund' and "status" = 'succeeded')
		or ("kind" = 'dispute' and "status" in ('open', 'inquiry', 'won', 'lost', 'warning_closed')))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "payment_reversals_external_key" ON "payment_reversals" USING btree ("kind","external_id");
--> statement-breakpoint
CREATE INDEX "payment_reversals_payment_idx" ON "payment_reversals" USING btree ("payment_id");
--> statement-breakpoint
-- How much of each card payment the ledger has taken back so far (refunds plus open or lost
-- disputes, never more than the payment), so every event moves only the difference.
CREATE TABLE "reversed_payments" (
	"payment_id" uuid PRIMARY KEY NOT NULL REFERENCES "payments"("id") ON DELETE RESTRICT,
	"reversed_cents" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reversed_payments_nonnegative" CHECK ("reversed_cents" >= 0)
);
