-- Subscriptions, payments and app deletion keep their money (docs/decisions/023).
ALTER TABLE "applications" ADD COLUMN "archived_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "consumed_kind" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "consumed_ref" text;--> statement-breakpoint
ALTER TABLE "subscriptions" ADD COLUMN "period_transaction_id" uuid;--> statement-breakpoint
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_period_transaction_id_ledger_transactions_id_fk" FOREIGN KEY ("period_transaction_id") REFERENCES "public"."ledger_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
-- No delete may cascade away subscriptions or charged calls.
ALTER TABLE "subscriptions" DROP CONSTRAINT "subscriptions_application_id_applications_id_fk";--> statement-breakpoint
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscriptions" DROP CONSTRAINT "subscriptions_subscriber_id_users_id_fk";--> statement-breakpoint
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_subscriber_id_users_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."users"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invocations" DROP CONSTRAINT "invocations_application_id_applications_id_fk";--> statement-breakpoint
ALTER TABLE "invocations" ADD CONSTRAINT "invocations_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "public"."applications"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
-- The transaction that paid each subscription's current period: a renewal names it
-- ('<id>:<period start>'), a first period was posted in the transaction that created the row (same
-- now()) from the subscriber's wallet or from a payment of theirs. A card period paid by a Stripe
-- invoice is not linked; an archive refunds it from the plan's price (docs/decisions/023).
UPDATE "subscriptions" s SET "period_transaction_id" = t."id"
FROM "ledger_transactions" t
WHERE t."kind" = 'subscription'
  AND t."reference" = s."id"::text || ':' || to_char(s."current_period_start" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');--> statement-breakpoint
UPDATE "subscriptions" s SET "period_transaction_id" = (
  SELECT t."id" FROM "ledger_transactions" t
  WHERE t."kind" = 'subscription' AND t."created_at" = s."created_at"
    AND (EXISTS (SELECT 1 FROM "ledger_entries" e JOIN "ledger_accounts" a ON a."id" = e."account_id"
                 WHERE e."transaction_id" = t."id" AND a."kind" = 'wallet' AND a."owner_id" = s."subscriber_id")
         OR EXISTS (SELECT 1 FROM "payments" p WHERE p."id"::text = t."reference" AND p."user_id" = s."subscriber_id"))
  ORDER BY t."id" LIMIT 1)
WHERE s."period_transaction_id" IS NULL AND s."stripe_subscription_id" IS NULL;--> statement-breakpoint
-- Payments already used by a subscription name it (the subscribe posted the plan's payment with
-- the payment's id as reference, in the transaction that created the row).
UPDATE "payments" p SET "consumed_kind" = 'subscription', "consumed_ref" = coalesce(
  (SELECT s."id"::text FROM "subscriptions" s JOIN "ledger_transactions" t
     ON t."kind" = 'subscription' AND t."reference" = p."id"::text AND t."created_at" = s."created_at"
   WHERE s."subscriber_id" = p."user_id" ORDER BY s."id" LIMIT 1),
  'payment:' || p."id"::text)
WHERE p."consumed_at" IS NOT NULL;--> statement-breakpoint
-- Money this migration moves: refunds of duplicate subscriptions and stranded plan payments.
CREATE TEMPORARY TABLE "pm_postings" ("kind" text, "reference" text, "description" text, "account_id" uuid, "delta" bigint);--> statement-breakpoint
-- Concurrent subscribes created several live subscriptions per consumer and app. The newest
-- (active before incomplete) stays; the others end, and the payment of their current period is
-- given back to the subscriber's wallet, out of what it paid the creator and the platform, when
-- the creator's earnings still cover it.
CREATE TEMPORARY TABLE "pm_duplicates" AS
SELECT s."id", s."subscriber_id", s."period_transaction_id", ap."owner_id" AS "creator_id"
FROM (SELECT "id", row_number() OVER (PARTITION BY "application_id", "subscriber_id"
        ORDER BY ("status" = 'active') DESC, "created_at" DESC, "id" DESC) AS n
      FROM "subscriptions" WHERE "status" IN ('active', 'incomplete')) r
JOIN "subscriptions" s ON s."id" = r."id"
JOIN "applications" ap ON ap."id" = s."application_id"
WHERE r.n > 1;--> statement-breakpoint
UPDATE "subscriptions" SET "status" = 'canceled', "cancel_at_period_end" = true
WHERE "id" IN (SELECT "id" FROM "pm_duplicates");--> statement-breakpoint
INSERT INTO "ledger_accounts" ("kind", "owner_id")
SELECT DISTINCT 'wallet', "subscriber_id" FROM "pm_duplicates" WHERE "period_transaction_id" IS NOT NULL
UNION SELECT DISTINCT 'wallet', "user_id" FROM "payments" WHERE "status" = 'succeeded'
UNION SELECT 'clearing', NULL
ON CONFLICT DO NOTHING;--> statement-breakpoint
INSERT INTO "pm_postings"
WITH paid AS (
  SELECT d."id", d."subscriber_id", d."creator_id", e."account_id", e."amount_cents", a."kind"
  FROM "pm_duplicates" d
  JOIN "ledger_entries" e ON e."transaction_id" = d."period_transaction_id"
  JOIN "ledger_accounts" a ON a."id" = e."account_id" AND a."kind" IN ('earnings', 'platform_fee')
  WHERE e."amount_cents" > 0
), covered AS (
  SELECT p."creator_id" FROM paid p JOIN "ledger_accounts" a ON a."id" = p."account_id" AND a."kind" = 'earnings'
  GROUP BY p."creator_id", a."balance_cents" HAVING sum(p."amount_cents") <= a."balance_cents"
)
SELECT 'reversal', 'duplicate-subscription:' || p."id"::text, 'Refund: a duplicate subscription ended',
  p."account_id", -p."amount_cents"
FROM paid p WHERE p."creator_id" IN (SELECT "creator_id" FROM covered)
UNION ALL
SELECT 'reversal', 'duplicate-subscription:' || p."id"::text, 'Refund: a duplicate subscription ended',
  w."id", sum(p."amount_cents")
FROM paid p JOIN "ledger_accounts" w ON w."kind" = 'wallet' AND w."owner_id" = p."subscriber_id"
WHERE p."creator_id" IN (SELECT "creator_id" FROM covered)
GROUP BY p."id", w."id";--> statement-breakpoint
-- A plan payment that no subscription used and no subscription can use any more (the plan was
-- withdrawn or its price changed) goes to the payer's wallet.
INSERT INTO "pm_postings"
SELECT 'top_up', p."id"::text, 'Plan payment credited to your wallet (the plan changed)', m."account_id", m."delta"
FROM "payments" p
LEFT JOIN "packages" k ON k."id" = p."package_id"
JOIN "ledger_accounts" w ON w."kind" = 'wallet' AND w."owner_id" = p."user_id"
JOIN "ledger_accounts" c ON c."kind" = 'clearing' AND c."owner_id" IS NULL
CROSS JOIN LATERAL (VALUES (c."id", -p."amount_cents"), (w."id", p."amount_cents")) AS m("account_id", "delta")
WHERE p."status" = 'succeeded' AND p."purpose" = 'subscription' AND p."consumed_at" IS NULL AND p."amount_cents" > 0
  AND (k."id" IS NULL OR NOT k."is_active" OR k."price_cents" <> p."amount_cents")
  AND NOT EXISTS (SELECT 1 FROM "ledger_transactions" t WHERE t."kind" = 'top_up' AND t."reference" = p."id"::text);--> statement-breakpoint
WITH tx AS (
  INSERT INTO "ledger_transactions" ("kind", "reference", "description")
  SELECT DISTINCT "kind", "reference", "description" FROM "pm_postings"
  RETURNING "id", "kind", "reference"
)
INSERT INTO "ledger_entries" ("transaction_id", "account_id", "amount_cents")
SELECT tx."id", p."account_id", p."delta" FROM tx JOIN "pm_postings" p ON p."kind" = tx."kind" AND p."reference" = tx."reference";--> statement-breakpoint
UPDATE "ledger_accounts" a SET "balance_cents" = a."balance_cents" + d."delta"
FROM (SELECT "account_id", sum("delta") AS "delta" FROM "pm_postings" GROUP BY "account_id") d
WHERE a."id" = d."account_id";--> statement-breakpoint
DROP TABLE "pm_postings";--> statement-breakpoint
DROP TABLE "pm_duplicates";--> statement-breakpoint
-- Every payment credited to a wallet names its top_up transaction.
UPDATE "payments" p SET "consumed_kind" = 'wallet', "consumed_ref" = t."id"::text, "consumed_at" = t."created_at"
FROM "ledger_transactions" t
WHERE t."kind" = 'top_up' AND t."reference" = p."id"::text AND p."status" = 'succeeded' AND p."consumed_kind" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "payments_consumed_by_key" ON "payments" USING btree ("consumed_kind","consumed_ref");--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_consumed_once" CHECK (("payments"."consumed_kind" is null) = ("payments"."consumed_ref" is null) and ("payments"."consumed_kind" is null) = ("payments"."consumed_at" is null) and ("payments"."consumed_kind" is null or "payments"."status" = 'succeeded'));--> statement-breakpoint
CREATE UNIQUE INDEX "subscriptions_one_live_per_app" ON "subscriptions" USING btree ("application_id","subscriber_id") WHERE "subscriptions"."status" in ('active', 'incomplete');
