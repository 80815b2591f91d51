-- Experiments (docs/decisions/058): a prompt's production traffic split between versions by
-- percent, sticky per caller, judged per arm by revenue and margin from its invocations, ended by
-- rules or by hand. One running experiment per prompt. The paid path caches each app's running
-- experiment (lib/lookup-cache.ts, "prompts"): every change, a start included (a cached "none"
-- would hide it), is announced on pm_lookups (migration 0029).
CREATE TABLE experiments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  prompt_id uuid NOT NULL REFERENCES prompts(id) ON DELETE CASCADE,
  application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'ended')),
  arms jsonb NOT NULL,
  sticky_by text CHECK (sticky_by IN ('end_user', 'key', 'account')),
  rules jsonb NOT NULL DEFAULT '{}'::jsonb,
  control_version integer NOT NULL,
  started_by uuid REFERENCES users(id) ON DELETE SET NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz,
  ended_by uuid REFERENCES users(id) ON DELETE SET NULL,
  outcome text CHECK (outcome IN ('rolled_back', 'promoted', 'stopped')),
  winner_version integer,
  end_reason text NOT NULL DEFAULT '',
  CHECK ((status = 'running') = (ended_at IS NULL))
);
--> statement-breakpoint
CREATE UNIQUE INDEX experiments_one_running_key ON experiments (prompt_id) WHERE status = 'running';
--> statement-breakpoint
CREATE INDEX experiments_prompt_idx ON experiments (prompt_id, started_at DESC);
--> statement-breakpoint
CREATE TRIGGER pm_lookups_experiments AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "experiments"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();
--> statement-breakpoint
-- An experiment's calls per arm (stats and rules read them by experiment and time).
CREATE INDEX invocations_experiment_idx ON invocations (experiment_id, created_at)
  WHERE experiment_id IS NOT NULL;
