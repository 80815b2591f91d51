-- Every API process keeps copies of the rows a paid call reads (key → user, slug → app, app →
-- prompt; lib/lookup-cache.ts). A change to one of those tables, by any process or by hand, is
-- announced on the channel `pm_lookups` with the table's name, delivered when its transaction
-- commits (docs/decisions/040-lookup-change-feed.md). Inserts of keys, apps, prompts and users need
-- no notice: a row that did not exist was never cached. api_keys' last_used_at, written at most
-- once a minute per key off the paid path, is not a change of what a key may do.
CREATE OR REPLACE FUNCTION pm_lookups_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pm_lookups', TG_TABLE_NAME);
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER pm_lookups_api_keys_update AFTER UPDATE ON "api_keys" FOR EACH ROW
  WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
  EXECUTE FUNCTION pm_lookups_changed();--> statement-breakpoint
CREATE TRIGGER pm_lookups_api_keys_delete AFTER DELETE OR TRUNCATE ON "api_keys"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();--> statement-breakpoint
CREATE TRIGGER pm_lookups_users AFTER UPDATE OR DELETE OR TRUNCATE ON "users"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();--> statement-breakpoint
CREATE TRIGGER pm_lookups_suspensions AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "suspensions"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();--> statement-breakpoint
CREATE TRIGGER pm_lookups_applications AFTER UPDATE OR DELETE OR TRUNCATE ON "applications"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();--> statement-breakpoint
CREATE TRIGGER pm_lookups_prompts AFTER UPDATE OR DELETE OR TRUNCATE ON "prompts"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();--> statement-breakpoint
CREATE TRIGGER pm_lookups_prompt_versions AFTER UPDATE OR DELETE OR TRUNCATE ON "prompt_versions"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();
