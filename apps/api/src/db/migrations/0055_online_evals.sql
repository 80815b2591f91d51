-- Online evaluation of live calls (docs/decisions/076): per application settings, one row per
-- sampled customer call, and one spend counter per application and UTC day (the daily cap).
CREATE TABLE online_eval_settings (
  application_id uuid PRIMARY KEY REFERENCES applications(id) ON DELETE CASCADE,
  enabled boolean NOT NULL DEFAULT false,
  sample_percent double precision NOT NULL,
  assertions jsonb NOT NULL DEFAULT '[]'::jsonb,
  daily_cap_cents integer NOT NULL,
  updated_by uuid REFERENCES users(id) ON DELETE SET NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT online_eval_settings_sample CHECK (sample_percent >= 0.1 AND sample_percent <= 100),
  CONSTRAINT online_eval_settings_cap CHECK (daily_cap_cents >= 0 AND daily_cap_cents <= 100000)
);
--> statement-breakpoint
-- The paid path reads the settings from the lookup cache (releases/online-evals.ts): a change is announced.
CREATE TRIGGER pm_lookups_online_eval_settings AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "online_eval_settings"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();
--> statement-breakpoint
CREATE TABLE online_eval_results (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
  invocation_id uuid NOT NULL,
  version integer NOT NULL,
  experiment_id uuid,
  status text NOT NULL DEFAULT 'pending',
  passed boolean,
  score double precision,
  assertion_results jsonb NOT NULL DEFAULT '[]'::jsonb,
  output text NOT NULL DEFAULT '',
  inputs jsonb NOT NULL DEFAULT '{}'::jsonb,
  query text,
  model text NOT NULL,
  latency_ms integer NOT NULL DEFAULT 0,
  call_cost_micros bigint NOT NULL DEFAULT 0,
  cost_micros bigint NOT NULL DEFAULT 0,
  cap_day date,
  judge_invocation_ids uuid[] NOT NULL DEFAULT '{}',
  error text,
  claimed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  done_at timestamptz,
  CONSTRAINT online_eval_results_invocation_key UNIQUE (invocation_id),
  CONSTRAINT online_eval_results_status CHECK (status IN ('pending', 'running', 'done', 'skipped_cap', 'skipped_funds', 'failed')),
  CONSTRAINT online_eval_results_score CHECK (score IS NULL OR (score >= 0 AND score <= 1)),
  CONSTRAINT online_eval_results_cost CHECK (cost_micros >= 0)
);
--> statement-breakpoint
CREATE INDEX online_eval_results_app_idx ON online_eval_results (application_id, created_at DESC);
--> statement-breakpoint
CREATE INDEX online_eval_results_open_idx ON online_eval_results (created_at)
  WHERE status IN ('pending', 'running');
--> statement-breakpoint
CREATE TABLE online_eval_days (
  application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
  day date NOT NULL,
  reserved_micros bigint NOT NULL DEFAULT 0,
  spent_micros bigint NOT NULL DEFAULT 0,
  cap_micros bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (application_id, day),
  CONSTRAINT online_eval_days_nonnegative CHECK (reserved_micros >= 0 AND spent_micros >= 0)
);
