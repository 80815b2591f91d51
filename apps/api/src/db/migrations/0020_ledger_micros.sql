-- The ledger counts micro-dollars (1 cent = 10,000) so that a fee or a model cost below a cent is
-- exact (issue 17, docs/decisions/006 and 025). Prices stay in cents. Existing amounts are
-- multiplied exactly; the append-only guard on entries is lifted for this one rewrite.
ALTER TABLE "ledger_entries" DISABLE TRIGGER "ledger_entries_no_update_delete";--> statement-breakpoint
ALTER TABLE "ledger_entries" RENAME COLUMN "amount_cents" TO "amount_micros";--> statement-breakpoint
UPDATE "ledger_entries" SET "amount_micros" = "amount_micros" * 10000;--> statement-breakpoint
ALTER TABLE "ledger_entries" ENABLE TRIGGER "ledger_entries_no_update_delete";--> statement-breakpoint
ALTER TABLE "ledger_accounts" DROP CONSTRAINT "ledger_accounts_nonnegative";--> statement-breakpoint
ALTER TABLE "ledger_accounts" RENAME COLUMN "balance_cents" TO "balance_micros";--> statement-breakpoint
UPDATE "ledger_accounts" SET "balance_micros" = "balance_micros" * 10000;--> statement-breakpoint
ALTER TABLE "ledger_accounts" ADD CONSTRAINT "ledger_accounts_nonnegative" CHECK ("ledger_accounts"."kind" = 'clearing' or ("ledger_accounts"."kind" = 'debt' and "ledger_accounts"."balance_micros" <= 0) or "ledger_accounts"."balance_micros" >= 0);--> statement-breakpoint
ALTER TABLE "holds" DROP CONSTRAINT "holds_amount_positive";--> statement-breakpoint
ALTER TABLE "holds" DROP CONSTRAINT "holds_settled_within_amount";--> statement-breakpoint
ALTER TABLE "holds" DROP CONSTRAINT "holds_fee_within_settled";--> statement-breakpoint
ALTER TABLE "holds" RENAME COLUMN "amount_cents" TO "amount_micros";--> statement-breakpoint
ALTER TABLE "holds" RENAME COLUMN "settled_cents" TO "settled_micros";--> statement-breakpoint
ALTER TABLE "holds" RENAME COLUMN "fee_cents" TO "fee_micros";--> statement-breakpoint
ALTER TABLE "holds" ADD COLUMN "model_cost_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE "holds" SET "amount_micros" = "amount_micros" * 10000, "settled_micros" = "settled_micros" * 10000, "fee_micros" = "fee_micros" * 10000;--> statement-breakpoint
ALTER TABLE "holds" ADD CONSTRAINT "holds_amount_positive" CHECK ("holds"."amount_micros" > 0);--> statement-breakpoint
ALTER TABLE "holds" ADD CONSTRAINT "holds_settled_within_amount" CHECK ("holds"."settled_micros" >= 0 and "holds"."settled_micros" <= "holds"."amount_micros");--> statement-breakpoint
ALTER TABLE "holds" ADD CONSTRAINT "holds_shares_within_settled" CHECK ("holds"."fee_micros" >= 0 and "holds"."model_cost_micros" >= 0 and "holds"."fee_micros" + "holds"."model_cost_micros" <= "holds"."settled_micros");--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN "fee_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN "model_cost_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN "model_cost_deducted_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- A call recorded before this migration: its share of its hold's fee, in proportion to its price,
-- the rounding remainder on the hold's first call, so a hold's calls add up to its fee exactly.
UPDATE "invocations" i SET "fee_micros" = x."fee" FROM (
  SELECT c."id", c."share" + CASE WHEN row_number() OVER (PARTITION BY c."hold_id" ORDER BY c."id") = 1
    THEN c."hold_fee" - sum(c."share") OVER (PARTITION BY c."hold_id") ELSE 0 END AS "fee"
  FROM (
    SELECT i."id", i."hold_id", h."fee_micros" AS "hold_fee",
      h."fee_micros" * i."charged_cents" * 10000 / h."settled_micros" AS "share"
    FROM "invocations" i JOIN "holds" h ON h."id" = i."hold_id" WHERE h."settled_micros" > 0
  ) c
) x WHERE x."id" = i."id";--> statement-breakpoint
ALTER TABLE "app_daily_stats" ADD COLUMN "fee_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "app_daily_stats" ADD COLUMN "model_cost_micros" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
INSERT INTO "app_daily_stats" AS s ("application_id", "day", "shard", "fee_micros", "last_invocation_at")
  SELECT i."application_id", (i."created_at" AT TIME ZONE 'UTC')::date, 0, sum(i."fee_micros"), max(i."created_at")
  FROM "invocations" i WHERE i."status" = 'success' AND i."fee_micros" > 0 GROUP BY 1, 2
  ON CONFLICT ("application_id", "day", "shard") DO UPDATE SET "fee_micros" = s."fee_micros" + excluded."fee_micros";
