-- A lease (a hold paying for several calls, docs/decisions/018) is taken only when the payer's plan
-- has no included call left for the app. When a subscription becomes able to cover calls again
-- (new, renewed, reactivated, more calls), the payer's open holds for that app expire at once:
-- no further call settles from them (the process holding one then pays with an included call), and
-- the sweeper gives what they did not spend back to the wallet.
CREATE FUNCTION "pm_expire_holds_of_subscriber"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "holds" SET "expires_at" = now()
  WHERE "payer_id" = NEW."subscriber_id" AND "application_id" = NEW."application_id"
    AND "status" = 'held' AND "expires_at" > now();
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "subscriptions_new_expires_holds" AFTER INSERT ON "subscriptions"
  FOR EACH ROW WHEN (NEW."status" = 'active' AND NEW."calls_used" < NEW."calls_included")
  EXECUTE FUNCTION "pm_expire_holds_of_subscriber"();
--> statement-breakpoint
CREATE TRIGGER "subscriptions_usable_expires_holds"
  AFTER UPDATE OF "status", "current_period_end", "calls_used", "calls_included" ON "subscriptions"
  FOR EACH ROW WHEN (
    NEW."status" = 'active' AND NEW."calls_used" < NEW."calls_included"
    AND NOT (OLD."status" = 'active' AND OLD."calls_used" < OLD."calls_included"
             AND OLD."current_period_end" = NEW."current_period_end"))
  EXECUTE FUNCTION "pm_expire_holds_of_subscriber"();
