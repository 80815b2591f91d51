-- Why a call was made (docs/decisions/078): 'customer' (a caller's call of the app, the default),
-- 'eval' (an eval run's case and judge calls), 'owner_test' (Test Prompt, API Test, the owner's
-- own calls of their app), 'online_eval' (the judge calls of online evaluation). Customer
-- analytics (the rollups, unique users, experiment arms, Explore) count only 'customer'; money
-- (holds, model costs, checks) reads every call whatever its purpose. Added to the partitioned
-- parent, as migration 0040 added app_version: every day partition gets the column and its default.
ALTER TABLE invocations ADD COLUMN purpose text NOT NULL DEFAULT 'customer';
--> statement-breakpoint
ALTER TABLE invocations ADD CONSTRAINT invocations_purpose_check
  CHECK (purpose IN ('customer', 'eval', 'owner_test', 'online_eval'));
--> statement-breakpoint
-- The eval runs' case calls already recorded are known by their results (their judge calls are not).
UPDATE invocations SET purpose = 'eval'
WHERE id IN (SELECT invocation_id FROM eval_results WHERE invocation_id IS NOT NULL);
--> statement-breakpoint
-- A live call saved as an eval case (docs/decisions/078): one case per call while the case exists
-- (saving it again is a 409; deleting the case lets it be saved again). No foreign key to
-- invocations: they are partitioned and dropped by day, the case outlives its call.
CREATE TABLE eval_case_sources (
  invocation_id uuid PRIMARY KEY,
  case_id uuid NOT NULL REFERENCES eval_cases(id) ON DELETE CASCADE,
  application_id uuid NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);
--> statement-breakpoint
CREATE INDEX eval_case_sources_case_idx ON eval_case_sources (case_id);
--> statement-breakpoint
-- A day's partition is made LIKE the parent and then attached: it must carry the parent's CHECK
-- constraints (the purpose check above), or the attach is refused ("child table is missing
-- constraint"). Same function as migration 0028's, with INCLUDING CONSTRAINTS.
CREATE OR REPLACE FUNCTION "pm_invocations_partition"("day" date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  part text := 'invocations_p' || to_char("day", 'YYYYMMDD');
  lo timestamptz := "day"::timestamp AT TIME ZONE 'UTC';
  hi timestamptz := ("day" + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
  IF to_regclass(part) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE "invocations" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part);
  EXECUTE format(
    'WITH moved AS (DELETE FROM "invocations_default" WHERE "created_at" >= %L AND "created_at" < %L RETURNING *) '
    'INSERT INTO %I SELECT * FROM moved', lo, hi, part);
  EXECUTE format('ALTER TABLE "invocations" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
  RETURN true;
END
$$;
