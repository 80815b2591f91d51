-- Workflow apps release their provider configuration like prompt apps release versions
-- (docs/decisions/060, after 057). Every save is an immutable `workflow_versions` row with its
-- author; `workflows.active_version` is now the `production` label (what callers get), moved only
-- by a promotion, and calls read the configuration of that version (or of the one they pinned).
-- The workflows row keeps the latest saved configuration: what the editor edits.
-- Other labels (`staging`, the creator's own) are rows of `workflow_labels`; every move of any
-- label, `production` included, is one row of `workflow_label_moves`.
ALTER TABLE workflow_versions ADD COLUMN author_id uuid REFERENCES users(id) ON DELETE SET NULL;
--> statement-breakpoint
UPDATE workflow_versions v
SET author_id = a.owner_id
FROM workflows w JOIN applications a ON a.id = w.application_id
WHERE w.id = v.workflow_id;
--> statement-breakpoint
CREATE TABLE workflow_labels (
  workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  name text NOT NULL,
  version_id uuid NOT NULL REFERENCES workflow_versions(id) ON DELETE CASCADE,
  moved_by uuid REFERENCES users(id) ON DELETE SET NULL,
  moved_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workflow_id, name)
);
--> statement-breakpoint
CREATE TABLE workflow_label_moves (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
  name text NOT NULL,
  from_version integer,
  to_version integer,
  actor_id uuid REFERENCES users(id) ON DELETE SET NULL,
  reason text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX workflow_label_moves_workflow_idx ON workflow_label_moves (workflow_id, created_at DESC);
