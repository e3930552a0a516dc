-- The audit log becomes append-only and tamper-evident (README "Running against production").
--
-- * Every record carries `hash`: sha256 of the previous record's hash and of this record's own
--   fields, computed here by the database, never by a client. `chain_seq` is the record's place
--   in the chain. `bootstrap-console audit verify` recomputes the chain and names the first
--   record that was changed, removed or reordered.
-- * One chain for every console: a record is chained under one transaction-scoped advisory
--   lock, taken by the INSERT trigger. The audit INSERT is the last statement of an action's
--   transaction, so the lock is held only from that INSERT to COMMIT. A console stalled in
--   that window holds the others for at most their lock timeout: their INSERT then fails,
--   their action rolls back and says so. The unique `chain_seq` makes a fork impossible even
--   for a transaction that chains from an old snapshot: it fails instead.
-- * UPDATE, DELETE and TRUNCATE are refused by triggers, whoever holds a grant for them, and
--   every such grant held by a role other than the owner is revoked. Only the owner can
--   disable the triggers; a chain it rewrites no longer ends at the head hashes the consoles
--   logged (`audit verify --expect-head`).
--
-- The hashed form of a record: a JSON array of the previous hash (hex, or null for the first
-- record) and the record's fields in a fixed order, timestamps in UTC with microseconds, so
-- the hash depends on no session setting. `src/store/audit_chain.rs` recomputes the same form.
-- Idempotent: applying it again changes nothing.

ALTER TABLE "bootstrap_console"."audit_log"
  ADD COLUMN IF NOT EXISTS "chain_seq" BIGINT,
  ADD COLUMN IF NOT EXISTS "prev_hash" BYTEA,
  ADD COLUMN IF NOT EXISTS "hash" BYTEA;

CREATE OR REPLACE FUNCTION "bootstrap_console"."audit_record_hash"(
  r "bootstrap_console"."audit_log", prev BYTEA) RETURNS BYTEA
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT sha256(convert_to(jsonb_build_array(
    encode(prev, 'hex'), r.id,
    to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    r.actor, r.host, r.ssh_client, r.action, r.tenant_id, r.knowledge_space_id,
    r.bootstrap_id, r.lease_id, r.request_id, r.action_id, r.reason,
    r.row_before, r.row_after, r.outcome)::text, 'UTF8'))
$$;

-- Records written before this unit are chained in the order of their ids (only those not
-- chained yet, so applying the unit again updates nothing).
DO $$
DECLARE
  rec "bootstrap_console"."audit_log";
  seq BIGINT;
  prev BYTEA;
BEGIN
  SELECT coalesce(max(chain_seq), 0) INTO seq FROM "bootstrap_console"."audit_log";
  SELECT hash INTO prev FROM "bootstrap_console"."audit_log"
   WHERE chain_seq IS NOT NULL ORDER BY chain_seq DESC LIMIT 1;
  FOR rec IN SELECT * FROM "bootstrap_console"."audit_log" WHERE hash IS NULL ORDER BY id LOOP
    seq := seq + 1;
    UPDATE "bootstrap_console"."audit_log"
       SET chain_seq = seq, prev_hash = prev,
           hash = "bootstrap_console"."audit_record_hash"(rec, prev)
     WHERE id = rec.id
    RETURNING hash INTO prev;
  END LOOP;
END $$;

ALTER TABLE "bootstrap_console"."audit_log"
  ALTER COLUMN "chain_seq" SET NOT NULL,
  ALTER COLUMN "hash" SET NOT NULL;

CREATE UNIQUE INDEX IF NOT EXISTS "audit_log_chain_idx"
  ON "bootstrap_console"."audit_log" ("chain_seq");

-- Chains each new record onto the last one. Whatever the client sent for the chain columns is
-- replaced, and `at` is the database's clock.
CREATE OR REPLACE FUNCTION "bootstrap_console"."audit_log_chain"() RETURNS TRIGGER
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  last_seq BIGINT;
  last_hash BYTEA;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('bootstrap_console.audit_chain'));
  SELECT chain_seq, hash INTO last_seq, last_hash
    FROM "bootstrap_console"."audit_log" ORDER BY chain_seq DESC LIMIT 1;
  NEW.at := CURRENT_TIMESTAMP;
  NEW.chain_seq := coalesce(last_seq, 0) + 1;
  NEW.prev_hash := last_hash;
  NEW.hash := "bootstrap_console"."audit_record_hash"(NEW, last_hash);
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION "bootstrap_console"."audit_log_refuse"() RETURNS TRIGGER
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  RAISE EXCEPTION 'bootstrap_console.audit_log is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege',
          HINT = 'audit records are never changed or removed';
END $$;

DROP TRIGGER IF EXISTS "audit_log_chain" ON "bootstrap_console"."audit_log";
CREATE TRIGGER "audit_log_chain" BEFORE INSERT ON "bootstrap_console"."audit_log"
  FOR EACH ROW EXECUTE FUNCTION "bootstrap_console"."audit_log_chain"();

DROP TRIGGER IF EXISTS "audit_log_no_change" ON "bootstrap_console"."audit_log";
CREATE TRIGGER "audit_log_no_change" BEFORE UPDATE OR DELETE ON "bootstrap_console"."audit_log"
  FOR EACH ROW EXECUTE FUNCTION "bootstrap_console"."audit_log_refuse"();

DROP TRIGGER IF EXISTS "audit_log_no_truncate" ON "bootstrap_console"."audit_log";
CREATE TRIGGER "audit_log_no_truncate" BEFORE TRUNCATE ON "bootstrap_console"."audit_log"
  FOR EACH STATEMENT EXECUTE FUNCTION "bootstrap_console"."audit_log_refuse"();

-- No role but the owner keeps a grant to change or remove records, at table or column level.
DO $$
DECLARE
  audit CONSTANT regclass := '"bootstrap_console"."audit_log"'::regclass;
  owner_oid oid;
  grantee oid;
BEGIN
  SELECT relowner INTO owner_oid FROM pg_class WHERE oid = audit;
  FOR grantee IN
    SELECT DISTINCT a.grantee
      FROM pg_class c, aclexplode(c.relacl) a
     WHERE c.oid = audit AND a.privilege_type IN ('UPDATE', 'DELETE', 'TRUNCATE')
    UNION
    SELECT DISTINCT a.grantee
      FROM pg_attribute att, aclexplode(att.attacl) a
     WHERE att.attrelid = audit AND a.privilege_type = 'UPDATE'
  LOOP
    CONTINUE WHEN grantee = owner_oid;
    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON "bootstrap_console"."audit_log" FROM %s',
                   CASE WHEN grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(grantee)) END);
  END LOOP;
END $$;
