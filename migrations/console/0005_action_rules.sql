-- The rules of the operator actions, in the database: one pure function per rule, which the
-- console's plan evaluates over the row as it read it and the action over the row it locked,
-- so the two can never disagree (SPEC §3). The console renders the verdict as a sentence; it
-- keeps no copy of the rule.
--
-- `bootstrap_action_refusal`: whether retry or cancel still holds for a bootstrap, given what
-- the operator saw. NULL when it holds; otherwise why not:
--   stale              a script demanded an exact row version (`--row-version`), and it moved;
--   finished           cancel: the job left queued/running since it was seen;
--   retried_meanwhile  retry: the job left failed/canceled since it was seen;
--   new_episode        retry: failed or canceled again, but not the episode seen (another
--                      run_state or another completed_at);
--   wrong_state        the action never applied to this state (nor to the one seen).
-- A worker's progress (row version, counts, heartbeat, checkpoint) never refuses either.
-- It reads no table, so it is open to every role. Idempotent: applying it again changes
-- nothing.

CREATE OR REPLACE FUNCTION "bootstrap_console"."bootstrap_action_refusal"(
  action TEXT, seen_run_state TEXT, seen_completed_at TIMESTAMPTZ, exact_row_version INTEGER,
  run_state TEXT, completed_at TIMESTAMPTZ, row_version INTEGER) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE
    WHEN exact_row_version IS NOT NULL AND exact_row_version IS DISTINCT FROM row_version
      THEN 'stale'
    WHEN action = 'cancel' THEN CASE
      WHEN run_state IN ('queued', 'running') THEN NULL
      WHEN seen_run_state IN ('queued', 'running') THEN 'finished'
      ELSE 'wrong_state' END
    WHEN action = 'retry' THEN CASE
      WHEN run_state IN ('failed', 'canceled') THEN
        CASE WHEN seen_run_state = run_state
                  AND seen_completed_at IS NOT DISTINCT FROM completed_at THEN NULL
             ELSE 'new_episode' END
      WHEN seen_run_state IN ('failed', 'canceled') THEN 'retried_meanwhile'
      ELSE 'wrong_state' END
    ELSE 'unknown_action'
  END
$$;

-- A write to a primary the operator named with `--primary`, past the split-brain guard, is
-- recorded as such: `applied_primary_forced`, or `applied_forced_primary_forced` for a lease
-- removal that was forced too. The guard's doubt goes to the console's log with the request.
ALTER TABLE "bootstrap_console"."audit_log"
  DROP CONSTRAINT IF EXISTS "audit_log_outcome_ck",
  ADD CONSTRAINT "audit_log_outcome_ck" CHECK ("outcome" IN (
    'applied', 'applied_forced', 'applied_primary_forced', 'applied_forced_primary_forced'));
