-- One version store for every kind of app (docs/decisions/075): a prompt app's versions (its
-- template, schemas and model settings) and a workflow app's (its provider configuration) are rows
-- of one table keyed by the application, with the kind's settings as a typed `payload`. `json`, not
-- `jsonb`: a prompt's input_schema keeps the creator's property order (the order of form fields).
-- Version ids are kept, so nothing that names a version by id breaks.
CREATE TABLE app_versions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
  version integer NOT NULL,
  kind text NOT NULL CONSTRAINT app_versions_kind_check CHECK (kind IN ('prompt', 'workflow')),
  payload json NOT NULL,
  author_id uuid REFERENCES users(id) ON DELETE SET NULL,
  changelog text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE UNIQUE INDEX app_versions_app_version_key ON app_versions (application_id, version);
--> statement-breakpoint
INSERT INTO app_versions (id, application_id, version, kind, payload, author_id, changelog, created_at)
SELECT v.id, p.application_id, v.version, 'prompt',
       json_build_object('system_prompt', v.system_prompt, 'prompt_template', v.prompt_template,
         'input_schema', v.input_schema, 'output_schema', v.output_schema, 'model', v.model,
         'temperature', v.temperature, 'max_tokens', v.max_tokens, 'top_p', v.top_p,
         'frequency_penalty', v.frequency_penalty, 'presence_penalty', v.presence_penalty),
       v.author_id, v.changelog, v.created_at
FROM prompt_versions v JOIN prompts p ON p.id = v.prompt_id;
--> statement-breakpoint
INSERT INTO app_versions (id, application_id, version, kind, payload, author_id, changelog, created_at)
SELECT v.id, w.application_id, v.version, 'workflow',
       json_build_object('provider_slug', v.provider_slug, 'provider_config', v.provider_config,
         'timeout_seconds', v.timeout_seconds, 'max_iterations', v.max_iterations,
         'enable_logging', v.enable_logging),
       v.author_id, v.changelog, v.created_at
FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id;
--> statement-breakpoint
-- Every label of an app, `production` (what callers get by default) among them: it was
-- prompts.active_version_id and workflows.active_version. `latest` stays the newest version.
CREATE TABLE app_labels (
  application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
  name text NOT NULL,
  version_id uuid NOT NULL REFERENCES app_versions(id) ON DELETE CASCADE,
  moved_by uuid REFERENCES users(id) ON DELETE SET NULL,
  moved_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT app_labels_pkey PRIMARY KEY (application_id, name)
);
--> statement-breakpoint
INSERT INTO app_labels (application_id, name, version_id, moved_by, moved_at)
SELECT p.application_id, l.name, l.version_id, l.moved_by, l.moved_at
FROM prompt_labels l JOIN prompts p ON p.id = l.prompt_id;
--> statement-breakpoint
INSERT INTO app_labels (application_id, name, version_id, moved_by, moved_at)
SELECT w.application_id, l.name, l.version_id, l.moved_by, l.moved_at
FROM workflow_labels l JOIN workflows w ON w.id = l.workflow_id;
--> statement-breakpoint
INSERT INTO app_labels (application_id, name, version_id, moved_by, moved_at)
SELECT p.application_id, 'production', p.active_version_id,
       (SELECT m.actor_id FROM prompt_label_moves m WHERE m.prompt_id = p.id AND m.name = 'production'
        ORDER BY m.created_at DESC LIMIT 1),
       coalesce((SELECT max(m.created_at) FROM prompt_label_moves m
                 WHERE m.prompt_id = p.id AND m.name = 'production'), p.updated_at)
FROM prompts p JOIN app_versions v ON v.id = p.active_version_id;
--> statement-breakpoint
INSERT INTO app_labels (application_id, name, version_id, moved_by, moved_at)
SELECT w.application_id, 'production', v.id,
       (SELECT m.actor_id FROM workflow_label_moves m WHERE m.workflow_id = w.id AND m.name = 'production'
        ORDER BY m.created_at DESC LIMIT 1),
       coalesce((SELECT max(m.created_at) FROM workflow_label_moves m
                 WHERE m.workflow_id = w.id AND m.name = 'production'), w.updated_at)
FROM workflows w JOIN app_versions v ON v.application_id = w.application_id AND v.version = w.active_version;
--> statement-breakpoint
-- Every move of any label, releases and rollbacks: the audit trail, ids kept (the events name them).
CREATE TABLE app_label_moves (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
  name text NOT NULL,
  from_version integer,
  to_version integer,
  actor_id uuid REFERENCES users(id) ON DELETE SET NULL,
  reason text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX app_label_moves_app_idx ON app_label_moves (application_id, created_at DESC);
--> statement-breakpoint
INSERT INTO app_label_moves (id, application_id, name, from_version, to_version, actor_id, reason, created_at)
SELECT m.id, p.application_id, m.name, m.from_version, m.to_version, m.actor_id, m.reason, m.created_at
FROM prompt_label_moves m JOIN prompts p ON p.id = m.prompt_id;
--> statement-breakpoint
INSERT INTO app_label_moves (id, application_id, name, from_version, to_version, actor_id, reason, created_at)
SELECT m.id, w.application_id, m.name, m.from_version, m.to_version, m.actor_id, m.reason, m.created_at
FROM workflow_label_moves m JOIN workflows w ON w.id = m.workflow_id;
--> statement-breakpoint
-- A label move is an event (migration 0049), now from one table.
CREATE OR REPLACE FUNCTION "pm_label_move_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE owner uuid;
BEGIN
  SELECT a.owner_id INTO owner FROM applications a WHERE a.id = NEW.application_id;
  INSERT INTO events (id, type, occurred_at, user_ids, application_id, data)
  VALUES ('label_move_' || NEW.id,
          CASE WHEN NEW.name <> 'production' THEN 'version.label_moved'
               WHEN NEW.to_version < NEW.from_version THEN 'version.rolled_back'
               ELSE 'version.promoted' END,
          NEW.created_at, CASE WHEN owner IS NULL THEN '{}'::uuid[] ELSE ARRAY[owner] END, NEW.application_id,
          jsonb_build_object('application_id', NEW.application_id, 'label', NEW.name, 'from_version', NEW.from_version,
            'to_version', NEW.to_version, 'reason', NEW.reason, 'actor_id', NEW.actor_id));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "app_label_moves_events" AFTER INSERT ON "app_label_moves" FOR EACH ROW EXECUTE FUNCTION pm_label_move_event();
--> statement-breakpoint
-- The paid path caches the served version (lib/lookup-cache.ts): a move of any label (an insert
-- too: `production` is a row here now) or a change of a version is announced to every process.
CREATE TRIGGER pm_lookups_app_versions AFTER UPDATE OR DELETE OR TRUNCATE ON "app_versions"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();
--> statement-breakpoint
CREATE TRIGGER pm_lookups_app_labels AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "app_labels"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();
--> statement-breakpoint
-- Experiments: the application is the subject (it always was the one-running key).
ALTER TABLE experiments DROP CONSTRAINT experiments_one_subject;
--> statement-breakpoint
ALTER TABLE experiments DROP COLUMN prompt_id;
--> statement-breakpoint
ALTER TABLE experiments DROP COLUMN workflow_id;
--> statement-breakpoint
CREATE INDEX experiments_app_idx ON experiments (application_id, started_at DESC);
--> statement-breakpoint
-- Evals are an app's, whatever its kind.
ALTER TABLE eval_cases ADD COLUMN application_id uuid REFERENCES applications(id) ON DELETE CASCADE;
--> statement-breakpoint
UPDATE eval_cases c SET application_id = p.application_id FROM prompts p WHERE p.id = c.prompt_id;
--> statement-breakpoint
ALTER TABLE eval_cases ALTER COLUMN application_id SET NOT NULL;
--> statement-breakpoint
ALTER TABLE eval_cases DROP COLUMN prompt_id;
--> statement-breakpoint
CREATE INDEX eval_cases_app_idx ON eval_cases (application_id, position);
--> statement-breakpoint
ALTER TABLE eval_runs ADD COLUMN application_id uuid REFERENCES applications(id) ON DELETE CASCADE;
--> statement-breakpoint
UPDATE eval_runs r SET application_id = p.application_id FROM prompts p WHERE p.id = r.prompt_id;
--> statement-breakpoint
ALTER TABLE eval_runs ALTER COLUMN application_id SET NOT NULL;
--> statement-breakpoint
ALTER TABLE eval_runs DROP COLUMN prompt_id;
--> statement-breakpoint
CREATE INDEX eval_runs_app_version_idx ON eval_runs (application_id, version, status);
--> statement-breakpoint
CREATE INDEX eval_runs_app_started_idx ON eval_runs (application_id, started_at);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "pm_eval_run_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE owner uuid;
BEGIN
  IF OLD.status NOT IN ('queued', 'running') OR NEW.status NOT IN ('passed', 'failed', 'error') THEN RETURN NULL; END IF;
  SELECT a.owner_id INTO owner FROM applications a WHERE a.id = NEW.application_id;
  INSERT INTO events (id, type, occurred_at, user_ids, application_id, data)
  VALUES ('eval_run_' || NEW.id, CASE WHEN NEW.status = 'passed' THEN 'eval_run.passed' ELSE 'eval_run.failed' END,
          coalesce(NEW.finished_at, now()), CASE WHEN owner IS NULL THEN '{}'::uuid[] ELSE ARRAY[owner] END, NEW.application_id,
          jsonb_build_object('eval_run_id', NEW.id, 'application_id', NEW.application_id, 'version', NEW.version,
            'status', NEW.status, 'cases', NEW.cases, 'passed', NEW.passed, 'error', NEW.error));
  RETURN NULL;
END $$;
--> statement-breakpoint
ALTER TABLE prompts DROP COLUMN active_version_id;
--> statement-breakpoint
ALTER TABLE workflows DROP COLUMN active_version;
--> statement-breakpoint
DROP TABLE prompt_label_moves;
--> statement-breakpoint
DROP TABLE prompt_labels;
--> statement-breakpoint
DROP TABLE prompt_versions;
--> statement-breakpoint
DROP TABLE workflow_label_moves;
--> statement-breakpoint
DROP TABLE workflow_labels;
--> statement-breakpoint
DROP TABLE workflow_versions;
