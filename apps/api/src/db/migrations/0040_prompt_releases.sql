-- Versions carry everything a call depends on, labels point at them (docs/decisions/057).
-- A version's model settings move from the prompt onto each version, so that promoting a version
-- (moving `production`) changes what callers get in one step, and editing a live app changes
-- nothing for them. `prompts.active_version_id` stays what callers get by default: the
-- `production` label. Other labels (`staging`, the creator's own) live in `prompt_labels`; every
-- move of any label is kept in `prompt_label_moves`.
ALTER TABLE prompt_versions
  ADD COLUMN model text,
  ADD COLUMN temperature double precision,
  ADD COLUMN max_tokens integer,
  ADD COLUMN top_p double precision,
  ADD COLUMN frequency_penalty double precision,
  ADD COLUMN presence_penalty double precision,
  ADD COLUMN author_id uuid REFERENCES users(id) ON DELETE SET NULL;
--> statement-breakpoint
UPDATE prompt_versions v
SET model = p.model, temperature = p.temperature, max_tokens = p.max_tokens, top_p = p.top_p,
    frequency_penalty = p.frequency_penalty, presence_penalty = p.presence_penalty,
    author_id = a.owner_id
FROM prompts p JOIN applications a ON a.id = p.application_id
WHERE p.id = v.prompt_id;
--> statement-breakpoint
ALTER TABLE prompt_versions
  ALTER COLUMN model SET NOT NULL,
  ALTER COLUMN temperature SET NOT NULL,
  ALTER COLUMN max_tokens SET NOT NULL,
  ALTER COLUMN top_p SET NOT NULL,
  ALTER COLUMN frequency_penalty SET NOT NULL,
  ALTER COLUMN presence_penalty SET NOT NULL;
--> statement-breakpoint
ALTER TABLE prompts
  DROP COLUMN model,
  DROP COLUMN temperature,
  DROP COLUMN max_tokens,
  DROP COLUMN top_p,
  DROP COLUMN frequency_penalty,
  DROP COLUMN presence_penalty;
--> statement-breakpoint
CREATE TABLE prompt_labels (
  prompt_id uuid NOT NULL REFERENCES prompts(id) ON DELETE CASCADE,
  name text NOT NULL,
  version_id uuid NOT NULL REFERENCES prompt_versions(id) ON DELETE CASCADE,
  moved_by uuid REFERENCES users(id) ON DELETE SET NULL,
  moved_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (prompt_id, name)
);
--> statement-breakpoint
CREATE TABLE prompt_label_moves (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  prompt_id uuid NOT NULL REFERENCES prompts(id) ON DELETE CASCADE,
  name text NOT NULL,
  from_version integer,
  to_version integer,
  actor_id uuid REFERENCES users(id) ON DELETE SET NULL,
  reason text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX prompt_label_moves_prompt_idx ON prompt_label_moves (prompt_id, created_at DESC);
--> statement-breakpoint
-- A pinned label is cached by every process like a prompt (migration 0029): a move is announced.
-- A new label needs no notice: a label that did not exist was never cached.
CREATE TRIGGER pm_lookups_prompt_labels AFTER UPDATE OR DELETE OR TRUNCATE ON "prompt_labels"
  FOR EACH STATEMENT EXECUTE FUNCTION pm_lookups_changed();
--> statement-breakpoint
-- Which version answered each call (prompt apps), and the experiment that chose it.
ALTER TABLE invocations ADD COLUMN app_version integer, ADD COLUMN experiment_id uuid;
