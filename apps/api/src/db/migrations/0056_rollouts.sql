-- Issue 41 part 4, decision 077: guarded rollouts. A rollout is an experiment (arms [production,
-- candidate]) with a schedule; its steps, bounds, state and history live on the experiment row, so
-- serving, caching (the experiments trigger of migration 0041 announces every change) and figures
-- treat it as any experiment. Null for a plain experiment.
ALTER TABLE "experiments" ADD COLUMN "rollout" jsonb;
--> statement-breakpoint
-- The event log (decision 068): each step of a rollout written to its history (start, advance,
-- rollback, completion, stop; a hold is not an event) is one event, appended in the transaction
-- that records it. Ids are derived from the experiment and the entry's place in the history, so an
-- entry has exactly one event.
CREATE FUNCTION "pm_rollout_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  owner uuid;
  done int := 0;
  total int;
  entry jsonb;
  kind text;
BEGIN
  IF NEW.rollout IS NULL THEN RETURN NULL; END IF;
  total := coalesce(jsonb_array_length(NEW.rollout->'history'), 0);
  IF TG_OP = 'UPDATE' AND OLD.rollout IS NOT NULL THEN
    done := coalesce(jsonb_array_length(OLD.rollout->'history'), 0);
  END IF;
  IF total <= done THEN RETURN NULL; END IF;
  SELECT owner_id INTO owner FROM applications WHERE id = NEW.application_id;
  FOR i IN done .. total - 1 LOOP
    entry := NEW.rollout->'history'->i;
    kind := CASE entry->>'action'
      WHEN 'start' THEN 'release.rollout.started'
      WHEN 'advance' THEN 'release.rollout.advanced'
      WHEN 'rollback' THEN 'release.rollout.rolled_back'
      WHEN 'complete' THEN 'release.rollout.completed'
      WHEN 'stop' THEN 'release.rollout.stopped'
      ELSE NULL END;
    CONTINUE WHEN kind IS NULL;
    INSERT INTO events (id, type, occurred_at, user_ids, application_id, data)
    VALUES ('rollout_' || NEW.id || '_' || i, kind, coalesce((entry->>'at')::timestamptz, now()),
            CASE WHEN owner IS NULL THEN '{}'::uuid[] ELSE ARRAY[owner] END, NEW.application_id,
            jsonb_build_object('experiment_id', NEW.id, 'application_id', NEW.application_id,
              'from_version', (NEW.rollout->>'from_version')::int, 'to_version', (NEW.rollout->>'to_version')::int,
              'percent', (entry->>'percent')::int, 'reason', entry->>'reason'));
  END LOOP;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "experiments_rollout_events" AFTER INSERT OR UPDATE OF "rollout" ON "experiments" FOR EACH ROW EXECUTE FUNCTION pm_rollout_event();
