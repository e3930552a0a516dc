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

-- `lease_orphan_at`: from when a mutation lease looks abandoned (SPEC §2, §3): past the
-- orphan threshold ("older than": the first instant after it) and, where leases have
-- heartbeats, past its expiry. The live board judges the same rule between polls as time
-- passes; a test holds the two to the same answers. STABLE, not IMMUTABLE: timestamptz plus
-- an interval of days or months depends on the time zone (the console passes microseconds).
CREATE OR REPLACE FUNCTION "bootstrap_console"."lease_orphan_at"(
  acquired_at TIMESTAMPTZ, expires_at TIMESTAMPTZ, orphan_after INTERVAL) RETURNS TIMESTAMPTZ
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT greatest(acquired_at + orphan_after + interval '1 microsecond', expires_at)
$$;

-- `lease_removal_refusal`: whether removing a mutation lease still holds, given the lease the
-- operator saw (its tenant, space and acquisition time) and whether they forced it. NULL: it
-- holds, an orphan suspect; `forced`: it holds only because it was forced (audited as such);
-- `changed`: not the lease seen (another writer took the space); `not_orphan`: not an orphan
-- suspect, and not forced.
CREATE OR REPLACE FUNCTION "bootstrap_console"."lease_removal_refusal"(
  seen_tenant TEXT, seen_space UUID, seen_acquired_at TIMESTAMPTZ, force BOOLEAN,
  tenant_id TEXT, knowledge_space_id UUID, acquired_at TIMESTAMPTZ, expires_at TIMESTAMPTZ,
  now TIMESTAMPTZ, orphan_after INTERVAL) RETURNS TEXT
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE
    WHEN tenant_id IS DISTINCT FROM seen_tenant
      OR knowledge_space_id IS DISTINCT FROM seen_space
      OR acquired_at IS DISTINCT FROM seen_acquired_at THEN 'changed'
    WHEN now >= "bootstrap_console"."lease_orphan_at"(acquired_at, expires_at, orphan_after)
      THEN NULL
    WHEN force THEN 'forced'
    ELSE 'not_orphan'
  END
$$;

-- A write to a primary the operator named with `--primary`, past the split-brain guard, is
-- recorded as such: `applied_primary_forced`, or `applied_forced_primary_forced` for a lease
-- removal that was forced too. The guard's doubt goes to the console's log with the request.
ALTER TABLE "bootstrap_console"."audit_log"
  DROP CONSTRAINT IF EXISTS "audit_log_outcome_ck",
  ADD CONSTRAINT "audit_log_outcome_ck" CHECK ("outcome" IN (
    'applied', 'applied_forced', 'applied_primary_forced', 'applied_forced_primary_forced'));
