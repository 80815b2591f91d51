-- Experiments for workflow apps (docs/decisions/058, "Workflow apps"): the same table, the same
-- serving, figures, rules and ends as prompt experiments, over the versions of a workflow's
-- provider configuration (decision 060). An experiment belongs to exactly one prompt or one
-- workflow; both are one per application, so "one running experiment" is now kept per application,
-- which is also what the paid path looks it up by (releases/serving.ts, `experiment:<app id>`).
ALTER TABLE experiments ALTER COLUMN prompt_id DROP NOT NULL;
--> statement-breakpoint
ALTER TABLE experiments ADD COLUMN workflow_id uuid REFERENCES workflows(id) ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE experiments ADD CONSTRAINT experiments_one_subject
  CHECK (num_nonnulls(prompt_id, workflow_id) = 1);
--> statement-breakpoint
DROP INDEX experiments_one_running_key;
--> statement-breakpoint
CREATE UNIQUE INDEX experiments_one_running_per_app ON experiments (application_id) WHERE status = 'running';
--> statement-breakpoint
CREATE INDEX experiments_workflow_idx ON experiments (workflow_id, started_at DESC) WHERE workflow_id IS NOT NULL;
