-- Evals before publishing (issue 31 part 3, docs/decisions/059): test cases per prompt app, runs of
-- every case against one version, each case's result. A creator may require a passed run before a
-- version takes the `production` label (`prompts.require_passing_eval`).
CREATE TABLE eval_cases (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  prompt_id uuid NOT NULL REFERENCES prompts(id) ON DELETE CASCADE,
  name text NOT NULL,
  inputs jsonb NOT NULL DEFAULT '{}'::jsonb,
  query text,
  assertions jsonb NOT NULL DEFAULT '[]'::jsonb,
  position integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX eval_cases_prompt_idx ON eval_cases (prompt_id, position);
--> statement-breakpoint
CREATE TABLE eval_runs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  prompt_id uuid NOT NULL REFERENCES prompts(id) ON DELETE CASCADE,
  version integer NOT NULL,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'passed', 'failed', 'error')),
  judge_model text,
  started_by uuid REFERENCES users(id) ON DELETE SET NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  cases integer NOT NULL DEFAULT 0,
  passed integer NOT NULL DEFAULT 0,
  cost_median_micros bigint,
  cost_p95_micros bigint,
  latency_p50_ms integer,
  latency_p95_ms integer,
  price_micros bigint,
  fee_percent double precision,
  margin_median_micros bigint,
  margin_p95_micros bigint,
  error text
);
--> statement-breakpoint
-- The release gate asks "has this version a passed run?" on every promotion of a gated prompt.
CREATE INDEX eval_runs_prompt_version_idx ON eval_runs (prompt_id, version, status);
--> statement-breakpoint
CREATE INDEX eval_runs_prompt_started_idx ON eval_runs (prompt_id, started_at);
--> statement-breakpoint
CREATE TABLE eval_results (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  run_id uuid NOT NULL REFERENCES eval_runs(id) ON DELETE CASCADE,
  -- A case deleted after the run keeps its result (named as it was then).
  case_id uuid REFERENCES eval_cases(id) ON DELETE SET NULL,
  case_name text NOT NULL,
  position integer NOT NULL DEFAULT 0,
  passed boolean NOT NULL,
  output text,
  assertion_results jsonb NOT NULL DEFAULT '[]'::jsonb,
  cost_micros bigint NOT NULL DEFAULT 0,
  judge_cost_micros bigint NOT NULL DEFAULT 0,
  latency_ms integer NOT NULL DEFAULT 0,
  input_tokens integer NOT NULL DEFAULT 0,
  output_tokens integer NOT NULL DEFAULT 0,
  invocation_id uuid,
  error text,
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX eval_results_run_idx ON eval_results (run_id, position);
--> statement-breakpoint
ALTER TABLE prompts ADD COLUMN require_passing_eval boolean NOT NULL DEFAULT false;
