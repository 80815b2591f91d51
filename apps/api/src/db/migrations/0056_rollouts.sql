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
-- After every insert and update (not only `UPDATE OF rollout`: the end trigger below changes the
-- column from a BEFORE trigger, which `UPDATE OF` would not see); a history that did not grow is
-- no event.
CREATE TRIGGER "experiments_rollout_events" AFTER INSERT OR UPDATE ON "experiments" FOR EACH ROW EXECUTE FUNCTION pm_rollout_event();
--> statement-breakpoint
-- A rollout's experiment ended by any other path (the experiments' stop, promote or rollback, a
-- rule, a production move that ends it) ends the rollout with it, in the same row write: its state
-- never says "running" on an ended experiment. Promoting the candidate completes it; any other end
-- stops it. The stepper and the rollout's own stop write the state first, so this changes nothing
-- for them.
CREATE FUNCTION "pm_rollout_end"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  promoted boolean;
  pct int;
BEGIN
  IF NEW.rollout IS NULL OR OLD.status <> 'running' OR NEW.status <> 'ended'
     OR NEW.rollout->>'status' IS DISTINCT FROM 'running' THEN
    RETURN NEW;
  END IF;
  promoted := NEW.outcome = 'promoted' AND NEW.winner_version = (NEW.rollout->>'to_version')::int;
  pct := CASE WHEN promoted THEN 100 ELSE 0 END;
  NEW.rollout := NEW.rollout
    || jsonb_build_object(
         'status', CASE WHEN promoted THEN 'completed' ELSE 'stopped' END,
         'percent', pct,
         'next_step_at', NULL,
         'history', (NEW.rollout->'history') || jsonb_build_array(jsonb_build_object(
           'at', to_char(coalesce(NEW.ended_at, now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'percent', pct,
           'action', CASE WHEN promoted THEN 'complete' ELSE 'stop' END,
           'reason', NEW.end_reason)));
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "experiments_rollout_end" BEFORE UPDATE ON "experiments" FOR EACH ROW EXECUTE FUNCTION pm_rollout_end();
