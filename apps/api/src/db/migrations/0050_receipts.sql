-- Receipts (docs/decisions/069): one number per fact that happened (a wallet top-up, a plan
-- payment, a paid payout), given once and never changed. The number comes from a sequence; the
-- unique key on the fact means two processes numbering the same fact at once keep one number.
CREATE SEQUENCE "receipt_number_seq";--> statement-breakpoint
CREATE TABLE "receipts" (
	"number" bigint PRIMARY KEY DEFAULT nextval('receipt_number_seq') NOT NULL,
	"kind" text NOT NULL,
	"source_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "receipts_kind" CHECK ("kind" in ('top_up', 'plan_payment', 'payout'))
);--> statement-breakpoint
ALTER SEQUENCE "receipt_number_seq" OWNED BY "receipts"."number";--> statement-breakpoint
ALTER TABLE "receipts" ADD CONSTRAINT "receipts_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "receipts_fact_key" ON "receipts" USING btree ("kind","source_id");--> statement-breakpoint
CREATE INDEX "receipts_user_idx" ON "receipts" USING btree ("user_id","number");
