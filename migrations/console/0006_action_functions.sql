-- The operator actions become functions of the database, the only way an operator role writes
-- (README "Running against production"): retry, cancel and the removal of an orphaned lease
-- each lock their row, judge it by the rule of unit 0005, apply and append their audit record
-- in one call. An operator role holds EXECUTE on them and SELECT, and no UPDATE, DELETE or
-- INSERT on any ledger or audit table (`bootstrap-console grants`), so there is no write
-- without its audit record, and no audit record without its write.
--
-- * They run as their owner (SECURITY DEFINER): the ledger's owner, or, when a superuser owns
--   the ledger, the role `bootstrap_console_actions`, made here with exactly the grants they
--   use. Never as a superuser.
-- * Every table is schema-qualified (`@bootstraps@`, `@items@` and `@leases@` are the ledger
--   tables as `migrate` found them) and the search path is pg_catalog's alone, so no object a
--   caller creates can stand in for one. No advisory lock: any role may take the same key.
-- * Who did it: the audit record's `db_role` is the chain trigger's `session_user`, the role
--   that logged in, which the caller cannot choose. The actor, host and ssh client are what
--   the caller claims, and are shown as claimed.
-- * A call that does not apply holds nothing: its row lock is taken in a subtransaction that
--   is rolled back when the action is declined, so no role can lock rows through these
--   functions without an audit record.
-- * A request applied once is never applied again: the action id is looked up under the row
--   lock, and a `unique_violation` on it (another transaction of the same request committed
--   first) counts as applied before.
--
-- Each returns one row: `applied`; `refusal` (NULL, or the rule's verdict; `gone`: no such
-- row; `applied_before`: the request's audit record is `audit_id`); the record's `audit_id`,
-- `chain_seq` and `chain_hash`; the row as it was and, for retry and cancel, as written. A
-- lease removal's record keeps, as its `row_after`, what the removal was judged by: the
-- orphan threshold and the database's clock.

-- What every action call checks first. A request without an action id could be applied
-- twice; a reason is at most 500 characters, as the console takes it; a lease is not judged
-- orphaned by a threshold under a minute (the console's least). And an action's transaction left open holds its row and the audit chain's head
-- for every console: it is ended after a minute idle, unless the caller's session already
-- ends it sooner (a caller may still change that afterwards).
CREATE OR REPLACE FUNCTION "bootstrap_console"."action_call_checks"(
  p_action_id UUID, p_reason TEXT, p_orphan_after INTERVAL) RETURNS VOID
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF p_action_id IS NULL THEN
    RAISE EXCEPTION 'an action needs its action id (the request it belongs to)'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF length(p_reason) > 500 THEN
    RAISE EXCEPTION 'the reason is % characters long; keep it to 500', length(p_reason)
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF p_orphan_after IS NOT NULL AND extract(epoch FROM p_orphan_after) < 60 THEN
    RAISE EXCEPTION 'the orphan threshold is %, under a minute: a writer that young is at work', p_orphan_after
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF (SELECT s.setting::bigint FROM pg_settings s
       WHERE s.name = 'idle_in_transaction_session_timeout') NOT BETWEEN 1 AND 60000 THEN
    PERFORM set_config('idle_in_transaction_session_timeout', '60000', true);
  END IF;
END $$;

-- The audit record of an action applied before under `p_action_id`, if any. The id is the
-- caller's to give, so a record under it of another request, action or subject is refused
-- outright: it would otherwise let one request pass for applied by another's record.
CREATE OR REPLACE FUNCTION "bootstrap_console"."action_record"(
  p_action_id UUID, p_request_id UUID, p_action TEXT, p_subject UUID) RETURNS BIGINT
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  found BIGINT;
  same BOOLEAN;
BEGIN
  SELECT a.id, a.action = p_action AND coalesce(a.bootstrap_id, a.lease_id) = p_subject
               AND a.request_id IS NOT DISTINCT FROM p_request_id
    INTO found, same
    FROM "bootstrap_console"."audit_log" a WHERE a.action_id = p_action_id;
  IF found IS NOT NULL AND NOT same THEN
    RAISE EXCEPTION 'action id % is the id of another action (audit record %): nothing was written; send the request again under a new request id', p_action_id, found
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  RETURN found;
END $$;

CREATE OR REPLACE FUNCTION "bootstrap_console"."bootstrap_action_apply"(
  p_action TEXT, p_id UUID, p_seen_run_state TEXT, p_seen_completed_at TIMESTAMPTZ,
  p_exact_row_version INTEGER, p_actor TEXT, p_host TEXT,
  p_ssh_client TEXT, p_request_id UUID, p_action_id UUID, p_reason TEXT,
  p_primary_forced BOOLEAN)
RETURNS TABLE (applied BOOLEAN, refusal TEXT, audit_id BIGINT, chain_seq BIGINT,
               chain_hash BYTEA, row_before JSONB, row_after JSONB, items_reset BIGINT)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  b @bootstraps@;
  v_constraint TEXT;
BEGIN
  applied := false;
  items_reset := 0;
  PERFORM "bootstrap_console"."action_call_checks"(p_action_id, p_reason, NULL);
  BEGIN
    SELECT x.* INTO b FROM @bootstraps@ x WHERE x.id = p_id FOR UPDATE;
    -- After the row lock, so a first attempt still committing is waited for, not overtaken.
    audit_id := "bootstrap_console"."action_record"(p_action_id, p_request_id, p_action, p_id);
    IF audit_id IS NOT NULL THEN
      refusal := 'applied_before';
    ELSIF b.id IS NULL THEN
      refusal := 'gone';
    ELSE
      row_before := to_jsonb(b);
      refusal := "bootstrap_console"."bootstrap_action_refusal"(
        p_action, p_seen_run_state, p_seen_completed_at, p_exact_row_version,
        b.run_state::text, b.completed_at, b.row_version);
    END IF;
    IF refusal IS NOT NULL THEN
      RAISE SQLSTATE 'BCNA0';
    END IF;
    IF p_action = 'retry' THEN
      -- Domain contract §3: failed or running items back to pending, the job back to queued
      -- in place, keeping its checkpoint.
      UPDATE @items@ i SET status = 'pending', compilation_attempt_id = NULL,
             last_error = NULL, updated_at = now()
       WHERE i.bootstrap_id = p_id AND i.status IN ('failed', 'running');
      GET DIAGNOSTICS items_reset = ROW_COUNT;
      UPDATE @bootstraps@ x SET run_state = 'queued', worker_id = NULL, lease_token = NULL,
             lease_expires_at = NULL, heartbeat_at = NULL, completed_at = NULL,
             last_error_code = NULL, last_error_message = NULL,
             row_version = x.row_version + 1, updated_at = now()
       WHERE x.id = p_id
      RETURNING to_jsonb(x) INTO row_after;
    ELSE
      -- Cancel: canceled, the worker's lease cleared (which fences a live worker out).
      UPDATE @bootstraps@ x SET run_state = 'canceled', worker_id = NULL, lease_token = NULL,
             lease_expires_at = NULL, heartbeat_at = NULL, completed_at = now(),
             last_error_code = 'operator_canceled', last_error_message = p_reason,
             row_version = x.row_version + 1, updated_at = now()
       WHERE x.id = p_id
      RETURNING to_jsonb(x) INTO row_after;
    END IF;
    -- Last: the chain's head is locked from here until the caller's transaction ends.
    INSERT INTO "bootstrap_console"."audit_log" AS a (
      actor, host, ssh_client, action, tenant_id, knowledge_space_id, bootstrap_id,
      request_id, action_id, reason, row_before, row_after, outcome)
    VALUES (p_actor, p_host, p_ssh_client, p_action, b.tenant_id, b.knowledge_space_id, b.id,
            p_request_id, p_action_id, p_reason, row_before, row_after,
            CASE WHEN p_primary_forced THEN 'applied_primary_forced' ELSE 'applied' END)
    RETURNING a.id, a.chain_seq, a.hash INTO audit_id, chain_seq, chain_hash;
    applied := true;
  EXCEPTION
    WHEN SQLSTATE 'BCNA0' THEN
      -- Declined: the row lock goes with the subtransaction.
      row_after := NULL;
    WHEN unique_violation THEN
      GET STACKED DIAGNOSTICS v_constraint = CONSTRAINT_NAME;
      IF v_constraint IS DISTINCT FROM 'audit_log_action_idx' THEN
        RAISE;
      END IF;
      audit_id := "bootstrap_console"."action_record"(p_action_id, p_request_id, p_action, p_id);
      refusal := 'applied_before';
      row_after := NULL;
      items_reset := 0;
  END;
  RETURN NEXT;
END $$;

CREATE OR REPLACE FUNCTION "bootstrap_console"."retry_bootstrap"(
  p_id UUID, p_seen_run_state TEXT, p_seen_completed_at TIMESTAMPTZ,
  p_exact_row_version INTEGER, p_actor TEXT, p_host TEXT,
  p_ssh_client TEXT, p_request_id UUID, p_action_id UUID, p_reason TEXT,
  p_primary_forced BOOLEAN)
RETURNS TABLE (applied BOOLEAN, refusal TEXT, audit_id BIGINT, chain_seq BIGINT,
               chain_hash BYTEA, row_before JSONB, row_after JSONB, items_reset BIGINT)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM "bootstrap_console"."bootstrap_action_apply"('retry', p_id, p_seen_run_state,
    p_seen_completed_at, p_exact_row_version, p_actor, p_host, p_ssh_client,
    p_request_id, p_action_id, p_reason, p_primary_forced)
$$;

CREATE OR REPLACE FUNCTION "bootstrap_console"."cancel_bootstrap"(
  p_id UUID, p_seen_run_state TEXT, p_seen_completed_at TIMESTAMPTZ,
  p_exact_row_version INTEGER, p_actor TEXT, p_host TEXT,
  p_ssh_client TEXT, p_request_id UUID, p_action_id UUID, p_reason TEXT,
  p_primary_forced BOOLEAN)
RETURNS TABLE (applied BOOLEAN, refusal TEXT, audit_id BIGINT, chain_seq BIGINT,
               chain_hash BYTEA, row_before JSONB, row_after JSONB, items_reset BIGINT)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM "bootstrap_console"."bootstrap_action_apply"('cancel', p_id, p_seen_run_state,
    p_seen_completed_at, p_exact_row_version, p_actor, p_host, p_ssh_client,
    p_request_id, p_action_id, p_reason, p_primary_forced)
$$;

-- Removes exactly the lease the operator saw, if it is an orphan suspect by the threshold the
-- caller judges by, or if forced (audited as forced). The heartbeat columns are read from the
-- row's image, so one function serves the tables that predate them.
CREATE OR REPLACE FUNCTION "bootstrap_console"."remove_mutation_lease"(
  p_id UUID, p_seen_tenant TEXT, p_seen_space UUID, p_seen_acquired_at TIMESTAMPTZ,
  p_force BOOLEAN, p_orphan_after INTERVAL, p_actor TEXT, p_host TEXT,
  p_ssh_client TEXT, p_request_id UUID, p_action_id UUID, p_reason TEXT,
  p_primary_forced BOOLEAN)
RETURNS TABLE (applied BOOLEAN, refusal TEXT, audit_id BIGINT, chain_seq BIGINT,
               chain_hash BYTEA, row_before JSONB)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  l @leases@;
  v_constraint TEXT;
BEGIN
  applied := false;
  PERFORM "bootstrap_console"."action_call_checks"(p_action_id, p_reason,
    coalesce(p_orphan_after, interval '0'));
  BEGIN
    SELECT x.* INTO l FROM @leases@ x WHERE x.id = p_id FOR UPDATE;
    audit_id := "bootstrap_console"."action_record"(p_action_id, p_request_id,
                                                  'remove_mutation_lease', p_id);
    IF audit_id IS NOT NULL THEN
      refusal := 'applied_before';
    ELSIF l.id IS NULL THEN
      refusal := 'gone';
    ELSE
      row_before := to_jsonb(l);
      -- The later heartbeat columns count only together, as the console reads them.
      -- The threshold in seconds: months and days would count by the calendar.
      refusal := "bootstrap_console"."lease_removal_refusal"(
        p_seen_tenant, p_seen_space, p_seen_acquired_at, p_force, l.tenant_id,
        l.knowledge_space_id, l.acquired_at,
        CASE WHEN row_before ? 'heartbeat_at' THEN (row_before ->> 'expires_at')::timestamptz END,
        now(), make_interval(secs => extract(epoch FROM p_orphan_after)));
    END IF;
    IF refusal IS NOT NULL AND refusal <> 'forced' THEN
      RAISE SQLSTATE 'BCNA0';
    END IF;
    DELETE FROM @leases@ x WHERE x.id = p_id;
    INSERT INTO "bootstrap_console"."audit_log" AS a (
      actor, host, ssh_client, action, tenant_id, knowledge_space_id, lease_id,
      request_id, action_id, reason, row_before, row_after, outcome)
    VALUES (p_actor, p_host, p_ssh_client, 'remove_mutation_lease', l.tenant_id,
            l.knowledge_space_id, l.id, p_request_id, p_action_id, p_reason, row_before,
            jsonb_build_object('judged_by', jsonb_build_object(
              'orphan_after_seconds', extract(epoch FROM p_orphan_after), 'at', now())),
            CASE WHEN refusal IS NULL AND NOT p_primary_forced THEN 'applied'
                 WHEN refusal IS NULL THEN 'applied_primary_forced'
                 WHEN NOT p_primary_forced THEN 'applied_forced'
                 ELSE 'applied_forced_primary_forced' END)
    RETURNING a.id, a.chain_seq, a.hash INTO audit_id, chain_seq, chain_hash;
    applied := true;
  EXCEPTION
    WHEN SQLSTATE 'BCNA0' THEN
      NULL;
    WHEN unique_violation THEN
      GET STACKED DIAGNOSTICS v_constraint = CONSTRAINT_NAME;
      IF v_constraint IS DISTINCT FROM 'audit_log_action_idx' THEN
        RAISE;
      END IF;
      audit_id := "bootstrap_console"."action_record"(p_action_id, p_request_id,
                                                      'remove_mutation_lease', p_id);
      refusal := 'applied_before';
  END;
  RETURN NEXT;
END $$;

-- For the lookup of an outcome left unknown: waits (at most the caller's lock timeout) until
-- no transaction holds the row an action on it would lock, and under that lock looks the
-- action id up, then holds nothing. `free` false: another transaction still holds the row;
-- `audit_id`: the record of the action, if it was applied.
CREATE OR REPLACE FUNCTION "bootstrap_console"."await_action_row"(
  p_subject TEXT, p_id UUID, p_action_id UUID)
RETURNS TABLE (free BOOLEAN, audit_id BIGINT)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
  free := false;
  BEGIN
    IF p_subject = 'bootstrap' THEN
      PERFORM 1 FROM @bootstraps@ x WHERE x.id = p_id FOR UPDATE;
    ELSE
      PERFORM 1 FROM @leases@ x WHERE x.id = p_id FOR UPDATE;
    END IF;
    SELECT a.id INTO audit_id FROM "bootstrap_console"."audit_log" a
     WHERE a.action_id = p_action_id AND coalesce(a.bootstrap_id, a.lease_id) = p_id;
    free := true;
    RAISE SQLSTATE 'BCNA0';
  EXCEPTION
    WHEN SQLSTATE 'BCNA0' OR lock_not_available THEN
      NULL;
  END;
  RETURN NEXT;
END $$;

-- Who the functions run as, what that role may do, and who may call them. The ledger tables
-- are named here by their oids (`@bootstraps_oid@` …), which need no quoting.
DO $$
DECLARE
  ledger_owner oid;
  definer oid;
  definer_name TEXT;
  made BOOLEAN := false;
  audit_owner oid;
  fn TEXT;
  schema_name TEXT;
  grantee oid;
  missing TEXT;
BEGIN
  SELECT c.relowner INTO ledger_owner FROM pg_class c WHERE c.oid = @bootstraps_oid@;
  SELECT c.relowner INTO audit_owner FROM pg_class c
   WHERE c.oid = '"bootstrap_console"."audit_log"'::regclass;
  definer := ledger_owner;
  IF (SELECT r.rolsuper FROM pg_roles r WHERE r.oid = ledger_owner) THEN
    -- A superuser's functions could do anything: a role of their own, with only what they use.
    BEGIN
      CREATE ROLE "bootstrap_console_actions" NOLOGIN NOINHERIT;
      made := true;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
      NULL;
    END;
    SELECT r.oid INTO definer FROM pg_roles r WHERE r.rolname = 'bootstrap_console_actions';
    -- One made by an earlier `migrate` (in another database of the cluster) is only ever
    -- this: no login, no members, no superuser. Anything else is not ours to hand the ledger.
    IF NOT made AND EXISTS (
         SELECT 1 FROM pg_roles r WHERE r.oid = definer
            AND (r.rolsuper OR r.rolbypassrls OR r.rolcanlogin OR r.rolcreaterole
                 OR r.rolcreatedb OR r.rolreplication
                 OR EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.roleid = r.oid)
                 OR EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.member = r.oid))) THEN
      RAISE EXCEPTION 'role bootstrap_console_actions exists and can log in, has members or belongs to roles, or holds a role attribute: the action functions would run as it; drop it or take those away, then run migrate again';
    END IF;
    FOR schema_name IN
      SELECT DISTINCT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.oid IN (@bootstraps_oid@, @items_oid@, @leases_oid@)
    LOOP
      EXECUTE format('GRANT USAGE ON SCHEMA %I TO "bootstrap_console_actions"', schema_name);
    END LOOP;
    EXECUTE format('GRANT SELECT, UPDATE ON %s, %s TO "bootstrap_console_actions"',
                   @bootstraps_oid@::regclass, @items_oid@::regclass);
    EXECUTE format('GRANT SELECT, UPDATE, DELETE ON %s TO "bootstrap_console_actions"',
                   @leases_oid@::regclass);
  END IF;
  definer_name := quote_ident(pg_get_userbyid(definer));
  -- The ledger's owner may not be the owner of all three tables (or keep its rights on them).
  SELECT string_agg(format('%s on %s', w.privilege, w.rel::regclass), ', ') INTO missing
    FROM (VALUES (@bootstraps_oid@, 'SELECT'), (@bootstraps_oid@, 'UPDATE'),
                 (@items_oid@, 'SELECT'), (@items_oid@, 'UPDATE'),
                 (@leases_oid@, 'SELECT'), (@leases_oid@, 'UPDATE'),
                 (@leases_oid@, 'DELETE')) AS w(rel, privilege)
   WHERE NOT has_table_privilege(definer, w.rel, w.privilege);
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION 'the action functions run as role %, which lacks %: give it those, or the ledger tables one owner, then run migrate again', pg_get_userbyid(definer), missing;
  END IF;
  IF definer <> audit_owner THEN
    EXECUTE format('GRANT USAGE ON SCHEMA "bootstrap_console" TO %s', definer_name);
    EXECUTE format('GRANT SELECT, INSERT ON "bootstrap_console"."audit_log" TO %s',
                   definer_name);
  END IF;
  FOR fn IN VALUES
    ('"bootstrap_console"."bootstrap_action_apply"(TEXT, UUID, TEXT, TIMESTAMPTZ, INTEGER, TEXT, TEXT, TEXT, UUID, UUID, TEXT, BOOLEAN)'),
    ('"bootstrap_console"."retry_bootstrap"(UUID, TEXT, TIMESTAMPTZ, INTEGER, TEXT, TEXT, TEXT, UUID, UUID, TEXT, BOOLEAN)'),
    ('"bootstrap_console"."cancel_bootstrap"(UUID, TEXT, TIMESTAMPTZ, INTEGER, TEXT, TEXT, TEXT, UUID, UUID, TEXT, BOOLEAN)'),
    ('"bootstrap_console"."remove_mutation_lease"(UUID, TEXT, UUID, TIMESTAMPTZ, BOOLEAN, INTERVAL, TEXT, TEXT, TEXT, UUID, UUID, TEXT, BOOLEAN)'),
    ('"bootstrap_console"."await_action_row"(TEXT, UUID, UUID)')
  LOOP
    IF NOT has_schema_privilege(definer, 'bootstrap_console', 'CREATE') THEN
      -- A new owner needs CREATE on the schema, for the moment of the change.
      EXECUTE format('GRANT CREATE ON SCHEMA "bootstrap_console" TO %s', definer_name);
      EXECUTE format('ALTER FUNCTION %s OWNER TO %s', fn, definer_name);
      EXECUTE format('REVOKE CREATE ON SCHEMA "bootstrap_console" FROM %s', definer_name);
    ELSE
      EXECUTE format('ALTER FUNCTION %s OWNER TO %s', fn, definer_name);
    END IF;
    -- Open to no one yet: functions are created open to PUBLIC, and default privileges may
    -- have opened them to others. `grants` names who may call them.
    FOR grantee IN
      SELECT DISTINCT a.grantee FROM pg_proc p, aclexplode(coalesce(p.proacl,
               acldefault('f', p.proowner))) a
       WHERE p.oid = fn::regprocedure AND a.grantee <> p.proowner
    LOOP
      EXECUTE format('REVOKE ALL ON FUNCTION %s FROM %s', fn,
        CASE WHEN grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(grantee)) END);
    END LOOP;
  END LOOP;
  -- The rules and the checks the functions call are pure or read only what their caller may:
  -- open to every role, whatever default privileges took from PUBLIC (the plan asks the
  -- rules as the operator, the functions as their owner).
  GRANT EXECUTE ON FUNCTION
    "bootstrap_console"."bootstrap_action_refusal"(TEXT, TEXT, TIMESTAMPTZ, INTEGER, TEXT, TIMESTAMPTZ, INTEGER),
    "bootstrap_console"."lease_orphan_at"(TIMESTAMPTZ, TIMESTAMPTZ, INTERVAL),
    "bootstrap_console"."lease_removal_refusal"(TEXT, UUID, TIMESTAMPTZ, BOOLEAN, TEXT, UUID, TIMESTAMPTZ, TIMESTAMPTZ, TIMESTAMPTZ, INTERVAL),
    "bootstrap_console"."action_record"(UUID, UUID, TEXT, UUID),
    "bootstrap_console"."action_call_checks"(UUID, TEXT, INTERVAL)
    TO PUBLIC;
  -- Appending to the log is the functions' alone now. A role that held INSERT on it (an
  -- operator role of an earlier `grants`) loses that, and the writes the console once made
  -- under it: UPDATE on the jobs and their items, DELETE on the leases. `grants` gives it
  -- EXECUTE instead.
  FOR grantee IN
    SELECT a.grantee FROM pg_class c, aclexplode(c.relacl) a
     WHERE c.oid = '"bootstrap_console"."audit_log"'::regclass AND a.privilege_type = 'INSERT'
    UNION
    SELECT a.grantee FROM pg_attribute att, aclexplode(att.attacl) a
     WHERE att.attrelid = '"bootstrap_console"."audit_log"'::regclass
       AND a.privilege_type = 'INSERT'
  LOOP
    CONTINUE WHEN grantee IN (audit_owner, definer);
    EXECUTE format('REVOKE INSERT ON "bootstrap_console"."audit_log" FROM %s CASCADE',
      CASE WHEN grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(grantee)) END);
    CONTINUE WHEN grantee IN (0, ledger_owner);
    EXECUTE format('REVOKE UPDATE ON %s, %s FROM %s CASCADE', @bootstraps_oid@::regclass,
                   @items_oid@::regclass, quote_ident(pg_get_userbyid(grantee)));
    EXECUTE format('REVOKE DELETE ON %s FROM %s CASCADE', @leases_oid@::regclass,
                   quote_ident(pg_get_userbyid(grantee)));
  END LOOP;
END $$;
