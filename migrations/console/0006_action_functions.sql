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
-- row; `outside_scope`: not the tenant the caller is limited to; `applied_before`: the
-- request's audit record is `audit_id`); the record's `audit_id`, `chain_seq` and
-- `chain_hash`; the row as it was and, for retry and cancel, as written.

CREATE OR REPLACE FUNCTION "bootstrap_console"."bootstrap_action_apply"(
  p_action TEXT, p_id UUID, p_seen_run_state TEXT, p_seen_completed_at TIMESTAMPTZ,
  p_exact_row_version INTEGER, p_tenant_scope TEXT, p_actor TEXT, p_host TEXT,
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
  BEGIN
    SELECT x.* INTO b FROM @bootstraps@ x WHERE x.id = p_id FOR UPDATE;
    -- After the row lock, so a first attempt still committing is waited for, not overtaken.
    SELECT a.id INTO audit_id FROM "bootstrap_console"."audit_log" a
     WHERE a.action_id = p_action_id;
    IF audit_id IS NOT NULL THEN
      refusal := 'applied_before';
    ELSIF b.id IS NULL THEN
      refusal := 'gone';
    ELSE
      row_before := to_jsonb(b);
      IF p_tenant_scope IS NOT NULL AND b.tenant_id IS DISTINCT FROM p_tenant_scope THEN
        refusal := 'outside_scope';
      ELSE
        refusal := "bootstrap_console"."bootstrap_action_refusal"(
          p_action, p_seen_run_state, p_seen_completed_at, p_exact_row_version,
          b.run_state::text, b.completed_at, b.row_version);
      END IF;
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
      SELECT a.id INTO audit_id FROM "bootstrap_console"."audit_log" a
       WHERE a.action_id = p_action_id;
      refusal := 'applied_before';
      row_after := NULL;
      items_reset := 0;
  END;
  RETURN NEXT;
END $$;

CREATE OR REPLACE FUNCTION "bootstrap_console"."retry_bootstrap"(
  p_id UUID, p_seen_run_state TEXT, p_seen_completed_at TIMESTAMPTZ,
  p_exact_row_version INTEGER, p_tenant_scope TEXT, p_actor TEXT, p_host TEXT,
  p_ssh_client TEXT, p_request_id UUID, p_action_id UUID, p_reason TEXT,
  p_primary_forced BOOLEAN)
RETURNS TABLE (applied BOOLEAN, refusal TEXT, audit_id BIGINT, chain_seq BIGINT,
               chain_hash BYTEA, row_before JSONB, row_after JSONB, items_reset BIGINT)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM "bootstrap_console"."bootstrap_action_apply"('retry', p_id, p_seen_run_state,
    p_seen_completed_at, p_exact_row_version, p_tenant_scope, p_actor, p_host, p_ssh_client,
    p_request_id, p_action_id, p_reason, p_primary_forced)
$$;

CREATE OR REPLACE FUNCTION "bootstrap_console"."cancel_bootstrap"(
  p_id UUID, p_seen_run_state TEXT, p_seen_completed_at TIMESTAMPTZ,
  p_exact_row_version INTEGER, p_tenant_scope TEXT, p_actor TEXT, p_host TEXT,
  p_ssh_client TEXT, p_request_id UUID, p_action_id UUID, p_reason TEXT,
  p_primary_forced BOOLEAN)
RETURNS TABLE (applied BOOLEAN, refusal TEXT, audit_id BIGINT, chain_seq BIGINT,
               chain_hash BYTEA, row_before JSONB, row_after JSONB, items_reset BIGINT)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT * FROM "bootstrap_console"."bootstrap_action_apply"('cancel', p_id, p_seen_run_state,
    p_seen_completed_at, p_exact_row_version, p_tenant_scope, p_actor, p_host, p_ssh_client,
    p_request_id, p_action_id, p_reason, p_primary_forced)
$$;

-- Removes exactly the lease the operator saw, if it is an orphan suspect by the threshold the
-- caller judges by, or if forced (audited as forced). The heartbeat columns are read from the
-- row's image, so one function serves the tables that predate them.
CREATE OR REPLACE FUNCTION "bootstrap_console"."remove_mutation_lease"(
  p_id UUID, p_seen_tenant TEXT, p_seen_space UUID, p_seen_acquired_at TIMESTAMPTZ,
  p_force BOOLEAN, p_orphan_after INTERVAL, p_tenant_scope TEXT, p_actor TEXT, p_host TEXT,
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
  BEGIN
    SELECT x.* INTO l FROM @leases@ x WHERE x.id = p_id FOR UPDATE;
    SELECT a.id INTO audit_id FROM "bootstrap_console"."audit_log" a
     WHERE a.action_id = p_action_id;
    IF audit_id IS NOT NULL THEN
      refusal := 'applied_before';
    ELSIF l.id IS NULL THEN
      refusal := 'gone';
    ELSE
      row_before := to_jsonb(l);
      IF p_tenant_scope IS NOT NULL AND l.tenant_id IS DISTINCT FROM p_tenant_scope THEN
        refusal := 'outside_scope';
      ELSE
        refusal := "bootstrap_console"."lease_removal_refusal"(
          p_seen_tenant, p_seen_space, p_seen_acquired_at, p_force, l.tenant_id,
          l.knowledge_space_id, l.acquired_at, (row_before ->> 'expires_at')::timestamptz,
          now(), p_orphan_after);
      END IF;
    END IF;
    IF refusal IS NOT NULL AND refusal <> 'forced' THEN
      RAISE SQLSTATE 'BCNA0';
    END IF;
    DELETE FROM @leases@ x WHERE x.id = p_id;
    INSERT INTO "bootstrap_console"."audit_log" AS a (
      actor, host, ssh_client, action, tenant_id, knowledge_space_id, lease_id,
      request_id, action_id, reason, row_before, row_after, outcome)
    VALUES (p_actor, p_host, p_ssh_client, 'remove_mutation_lease', l.tenant_id,
            l.knowledge_space_id, l.id, p_request_id, p_action_id, p_reason, row_before, NULL,
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
      SELECT a.id INTO audit_id FROM "bootstrap_console"."audit_log" a
       WHERE a.action_id = p_action_id;
      refusal := 'applied_before';
  END;
  RETURN NEXT;
END $$;

-- For the lookup of an outcome left unknown: waits (at most the caller's lock timeout) until
-- no transaction holds the row an action on it would lock, and holds nothing after. `false`:
-- another transaction still holds it.
CREATE OR REPLACE FUNCTION "bootstrap_console"."await_action_row"(p_subject TEXT, p_id UUID)
RETURNS BOOLEAN
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  BEGIN
    IF p_subject = 'bootstrap' THEN
      PERFORM 1 FROM @bootstraps@ x WHERE x.id = p_id FOR UPDATE;
    ELSE
      PERFORM 1 FROM @leases@ x WHERE x.id = p_id FOR UPDATE;
    END IF;
    RAISE SQLSTATE 'BCNA0';
  EXCEPTION
    WHEN SQLSTATE 'BCNA0' THEN
      RETURN true;
    WHEN lock_not_available THEN
      RETURN false;
  END;
END $$;

-- Who the functions run as, what that role may do, and who may call them.
DO $$
DECLARE
  ledger_owner oid;
  definer oid;
  definer_name TEXT;
  audit_owner oid;
  fn TEXT;
  table_name TEXT;
  schema_name TEXT;
  grantee oid;
BEGIN
  SELECT c.relowner INTO ledger_owner FROM pg_class c WHERE c.oid = '@bootstraps@'::regclass;
  SELECT c.relowner INTO audit_owner FROM pg_class c
   WHERE c.oid = '"bootstrap_console"."audit_log"'::regclass;
  definer := ledger_owner;
  IF (SELECT r.rolsuper FROM pg_roles r WHERE r.oid = ledger_owner) THEN
    -- A superuser's functions could do anything: a role of their own, with only what they use.
    BEGIN
      CREATE ROLE "bootstrap_console_actions" NOLOGIN NOINHERIT;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN
      NULL;
    END;
    SELECT r.oid INTO definer FROM pg_roles r WHERE r.rolname = 'bootstrap_console_actions';
    IF (SELECT r.rolsuper OR r.rolbypassrls FROM pg_roles r WHERE r.oid = definer) THEN
      RAISE EXCEPTION 'role bootstrap_console_actions is a superuser (or bypasses row security): the action functions must not run as one';
    END IF;
    FOR schema_name IN
      SELECT DISTINCT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.oid IN ('@bootstraps@'::regclass, '@items@'::regclass, '@leases@'::regclass)
    LOOP
      EXECUTE format('GRANT USAGE ON SCHEMA %I TO "bootstrap_console_actions"', schema_name);
    END LOOP;
    EXECUTE 'GRANT SELECT, UPDATE ON @bootstraps@, @items@ TO "bootstrap_console_actions"';
    EXECUTE 'GRANT SELECT, UPDATE, DELETE ON @leases@ TO "bootstrap_console_actions"';
  END IF;
  definer_name := quote_ident(pg_get_userbyid(definer));
  IF definer <> audit_owner THEN
    EXECUTE format('GRANT USAGE ON SCHEMA "bootstrap_console" TO %s', definer_name);
    EXECUTE format('GRANT SELECT, INSERT ON "bootstrap_console"."audit_log" TO %s',
                   definer_name);
  END IF;
  FOR fn IN VALUES
    ('"bootstrap_console"."bootstrap_action_apply"(TEXT, UUID, TEXT, TIMESTAMPTZ, INTEGER, TEXT, TEXT, TEXT, TEXT, UUID, UUID, TEXT, BOOLEAN)'),
    ('"bootstrap_console"."retry_bootstrap"(UUID, TEXT, TIMESTAMPTZ, INTEGER, TEXT, TEXT, TEXT, TEXT, UUID, UUID, TEXT, BOOLEAN)'),
    ('"bootstrap_console"."cancel_bootstrap"(UUID, TEXT, TIMESTAMPTZ, INTEGER, TEXT, TEXT, TEXT, TEXT, UUID, UUID, TEXT, BOOLEAN)'),
    ('"bootstrap_console"."remove_mutation_lease"(UUID, TEXT, UUID, TIMESTAMPTZ, BOOLEAN, INTERVAL, TEXT, TEXT, TEXT, TEXT, UUID, UUID, TEXT, BOOLEAN)'),
    ('"bootstrap_console"."await_action_row"(TEXT, UUID)')
  LOOP
    -- Functions are open to PUBLIC when created: these are for the roles `grants` names.
    EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', fn);
    IF NOT has_schema_privilege(definer, 'bootstrap_console', 'CREATE') THEN
      -- A new owner needs CREATE on the schema, for the moment of the change.
      EXECUTE format('GRANT CREATE ON SCHEMA "bootstrap_console" TO %s', definer_name);
      EXECUTE format('ALTER FUNCTION %s OWNER TO %s', fn, definer_name);
      EXECUTE format('REVOKE CREATE ON SCHEMA "bootstrap_console" FROM %s', definer_name);
    ELSE
      EXECUTE format('ALTER FUNCTION %s OWNER TO %s', fn, definer_name);
    END IF;
  END LOOP;
  -- Appending to the log is the functions' alone now: an INSERT grant held by any other role
  -- (an operator role of an earlier `grants`) is taken back.
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
  END LOOP;
END $$;
