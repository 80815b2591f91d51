-- A plan's terms (price, included calls, period) are immutable versions (docs/decisions/044): a
-- change that gives subscribers less applies only from its announced moment, and every subscription
-- period records the terms it started under, so it is charged, counted and reconciled by them.
CREATE TABLE "plan_terms" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"package_id" uuid NOT NULL,
	"version" integer NOT NULL,
	"price_cents" integer NOT NULL,
	"included_calls" integer NOT NULL,
	"period_days" integer NOT NULL,
	"effective_from" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "plan_terms_positive" CHECK ("plan_terms"."price_cents" > 0 and "plan_terms"."included_calls" >= 1 and "plan_terms"."period_days" >= 1),
	CONSTRAINT "plan_terms_not_before_announced" CHECK ("plan_terms"."effective_from" >= "plan_terms"."created_at")
);--> statement-breakpoint
ALTER TABLE "plan_terms" ADD CONSTRAINT "plan_terms_package_id_packages_id_fk" FOREIGN KEY ("package_id") REFERENCES "public"."packages"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "plan_terms_package_version_key" ON "plan_terms" USING btree ("package_id","version");--> statement-breakpoint
CREATE FUNCTION plan_terms_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'plan_terms rows are immutable: add a version instead';
END $$;--> statement-breakpoint
CREATE TRIGGER plan_terms_no_update BEFORE UPDATE ON "plan_terms" FOR EACH ROW EXECUTE FUNCTION plan_terms_immutable();--> statement-breakpoint
-- Existing plans: version 1 is what they sell at; an announced increase becomes version 2 from its
-- announced moment (so its notice still holds).
INSERT INTO "plan_terms" ("package_id", "version", "price_cents", "included_calls", "period_days", "effective_from", "created_at")
	SELECT "id", 1, "price_cents", "included_calls", 30, "created_at", "created_at" FROM "packages";--> statement-breakpoint
INSERT INTO "plan_terms" ("package_id", "version", "price_cents", "included_calls", "period_days", "effective_from", "created_at")
	SELECT "id", 2, "pending_price_cents", "included_calls", 30, "pending_price_at", least(now(), "pending_price_at")
	FROM "packages" WHERE "pending_price_cents" IS NOT NULL;--> statement-breakpoint
-- Every plan has terms from its first moment, however it was inserted.
CREATE FUNCTION plan_first_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO plan_terms (package_id, version, price_cents, included_calls, period_days, effective_from, created_at)
    VALUES (NEW.id, 1, NEW.price_cents, NEW.included_calls, 30, NEW.created_at, NEW.created_at);
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER packages_first_terms AFTER INSERT ON "packages" FOR EACH ROW EXECUTE FUNCTION plan_first_terms();--> statement-breakpoint
CREATE TABLE "subscription_periods" (
	"subscription_id" uuid NOT NULL,
	"period_start" timestamp with time zone NOT NULL,
	"period_end" timestamp with time zone NOT NULL,
	"terms_id" uuid,
	"calls_included" integer NOT NULL,
	"price_cents" integer,
	"transaction_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "subscription_periods_pkey" PRIMARY KEY ("subscription_id","period_start")
);--> statement-breakpoint
ALTER TABLE "subscription_periods" ADD CONSTRAINT "subscription_periods_subscription_id_subscriptions_id_fk" FOREIGN KEY ("subscription_id") REFERENCES "public"."subscriptions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscription_periods" ADD CONSTRAINT "subscription_periods_terms_id_plan_terms_id_fk" FOREIGN KEY ("terms_id") REFERENCES "public"."plan_terms"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscription_periods" ADD CONSTRAINT "subscription_periods_transaction_id_ledger_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."ledger_transactions"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscriptions" ADD COLUMN "terms_id" uuid;--> statement-breakpoint
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_terms_id_plan_terms_id_fk" FOREIGN KEY ("terms_id") REFERENCES "public"."plan_terms"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
-- Existing subscriptions: their current period keeps what it allows (its terms version unknown).
-- Periods that ended before this migration have no record and are not judged by a later plan edit.
INSERT INTO "subscription_periods" ("subscription_id", "period_start", "period_end", "calls_included", "transaction_id")
	SELECT "id", "current_period_start", "current_period_end", "calls_included", "period_transaction_id" FROM "subscriptions";
