-- The audit log becomes append-only and tamper-evident (README "Running against production").
--
-- * Every record carries `hash`: sha256 of the previous record's hash and of this record's own
--   fields, computed here by the database, never by a client. `chain_seq` is the record's place
--   in the chain, and `db_role` the database role that wrote it (`session_user`, which a client
--   cannot choose, unlike the actor it reports). `bootstrap-console audit verify` recomputes the
--   chain and names the first record that was changed, removed or reordered.
-- * One chain for every console: the INSERT trigger locks the one row of `audit_chain_head`,
--   chains the record onto the head it holds and moves the head. The audit INSERT is the last
--   statement of an action's transaction, so the lock is held only from that INSERT to COMMIT.
--   A console stalled in that window holds the others for at most their lock timeout: their
--   INSERT then fails, their action rolls back and says so. The trigger runs as the owner
--   (SECURITY DEFINER), and no other role holds any grant on the head table, so no other role
--   can take that lock (an advisory lock would be open to every role) or move the head. A
--   transaction chaining from an old snapshot fails rather than forking: the head row it would
--   lock was updated since (REPEATABLE READ), and `chain_seq` is unique.
-- * UPDATE, DELETE and TRUNCATE are refused by triggers, whoever holds a grant for them, in
--   every session (ENABLE ALWAYS: `session_replication_role` does not skip them), and every
--   grant to change the log or add triggers to it, held by a role other than the owner, is
--   revoked. Only the owner can disable the triggers; a chain it rewrites no longer contains
--   the head hashes the consoles logged (`audit verify --expect-head`).
--
-- The hashed form of a record: a JSON array of the previous hash (hex, or null for the first
-- record) and the record's fields in a fixed order, timestamps in UTC with microseconds, so
-- the hash depends on no session setting. `src/store/audit_chain.rs` recomputes the same form
-- with its own copy of the expression. Idempotent: applying it again changes nothing.

ALTER TABLE "bootstrap_console"."audit_log"
  ADD COLUMN IF NOT EXISTS "db_role" VARCHAR(255),
  ADD COLUMN IF NOT EXISTS "chain_seq" BIGINT,
  ADD COLUMN IF NOT EXISTS "prev_hash" BYTEA,
  ADD COLUMN IF NOT EXISTS "hash" BYTEA;

CREATE OR REPLACE FUNCTION "bootstrap_console"."audit_record_hash"(
  r "bootstrap_console"."audit_log", prev BYTEA) RETURNS BYTEA
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT pg_catalog.sha256(pg_catalog.convert_to(pg_catalog.jsonb_build_array(
    pg_catalog.encode(prev, 'hex'), r.id,
    pg_catalog.to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    r.db_role, r.actor, r.host, r.ssh_client, r.action, r.tenant_id, r.knowledge_space_id,
    r.bootstrap_id, r.lease_id, r.request_id, r.action_id, r.reason,
    r.row_before, r.row_after, r.outcome)::text, 'UTF8'))
$$;

-- The chain's head: one row, moved by the INSERT trigger only. No grant on it for anyone.
CREATE TABLE IF NOT EXISTS "bootstrap_console"."audit_chain_head" (
  "one" BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK ("one"),
  "chain_seq" BIGINT NOT NULL,
  "hash" BYTEA
);
INSERT INTO "bootstrap_console"."audit_chain_head" ("one", "chain_seq", "hash")
VALUES (TRUE, 0, NULL) ON CONFLICT ("one") DO NOTHING;
REVOKE ALL ON "bootstrap_console"."audit_chain_head" FROM PUBLIC;

-- Records written before this unit are chained in the order of their ids (only those not
-- chained yet, so applying the unit again updates nothing). Their `db_role` stays NULL: who
-- wrote them was not recorded.
DO $$
DECLARE
  rec "bootstrap_console"."audit_log";
  seq BIGINT;
  prev BYTEA;
BEGIN
  SELECT h.chain_seq, h.hash INTO seq, prev FROM "bootstrap_console"."audit_chain_head" h;
  FOR rec IN SELECT * FROM "bootstrap_console"."audit_log" WHERE hash IS NULL ORDER BY id LOOP
    seq := seq + 1;
    UPDATE "bootstrap_console"."audit_log"
       SET chain_seq = seq, prev_hash = prev,
           hash = "bootstrap_console"."audit_record_hash"(rec, prev)
     WHERE id = rec.id
    RETURNING hash INTO prev;
  END LOOP;
  UPDATE "bootstrap_console"."audit_chain_head" SET chain_seq = seq, hash = prev;
END $$;

ALTER TABLE "bootstrap_console"."audit_log"
  ALTER COLUMN "chain_seq" SET NOT NULL,
  ALTER COLUMN "hash" SET NOT NULL;

CREATE UNIQUE INDEX IF NOT EXISTS "audit_log_chain_idx"
  ON "bootstrap_console"."audit_log" ("chain_seq");

-- Chains each new record onto the head and moves the head. Whatever the client sent for the
-- chain columns, the time and the role is replaced. It runs as the owner, who alone may lock
-- and move the head.
CREATE OR REPLACE FUNCTION "bootstrap_console"."audit_log_chain"() RETURNS TRIGGER
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  last_seq BIGINT;
  last_hash BYTEA;
  holder TEXT;
BEGIN
  BEGIN
    SELECT h.chain_seq, h.hash INTO last_seq, last_hash
      FROM "bootstrap_console"."audit_chain_head" h FOR UPDATE;
  EXCEPTION WHEN lock_not_available THEN
    -- The lock timeout passed: say who holds the head, so the operator can end a stalled
    -- transaction. The holder moved the head, so it holds the table's ROW EXCLUSIVE lock until
    -- it ends (those still waiting, like this one, hold only ROW SHARE).
    SELECT format('pid %s (role %s, %s%s)', l.pid, coalesce(a.usename::text, 'unknown'),
                  coalesce(nullif(a.application_name, ''), 'no application name'),
                  coalesce(', in a transaction open for '
                           || date_trunc('second', clock_timestamp() - a.xact_start)::text, ''))
      INTO holder
      FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'relation' AND l.mode = 'RowExclusiveLock' AND l.granted
       AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND l.relation = '"bootstrap_console"."audit_chain_head"'::regclass
       AND l.pid <> pg_backend_pid()
     LIMIT 1;
    RAISE EXCEPTION 'held by %', coalesce(holder, 'another transaction')
      USING ERRCODE = 'lock_not_available';
  END;
  NEW.at := CURRENT_TIMESTAMP;
  NEW.db_role := session_user;
  NEW.chain_seq := last_seq + 1;
  NEW.prev_hash := last_hash;
  NEW.hash := "bootstrap_console"."audit_record_hash"(NEW, last_hash);
  UPDATE "bootstrap_console"."audit_chain_head" SET chain_seq = NEW.chain_seq, hash = NEW.hash;
  RETURN NEW;
END $$;
REVOKE ALL ON FUNCTION "bootstrap_console"."audit_log_chain"() FROM PUBLIC;

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

-- Refused in every session, replication sessions included.
ALTER TABLE "bootstrap_console"."audit_log" ENABLE ALWAYS TRIGGER "audit_log_no_change";
ALTER TABLE "bootstrap_console"."audit_log" ENABLE ALWAYS TRIGGER "audit_log_no_truncate";

-- No role but the owner keeps a grant to change or remove records, or to add triggers, at
-- table or column level; nor any grant at all on the chain's head (default privileges may
-- have given one), which would let it lock or move the head. CASCADE takes back what a
-- grantee passed on with a grant option.
DO $$
DECLARE
  owner_oid oid;
  rel regclass;
  revoked TEXT;
  kinds TEXT[];
  grantee oid;
BEGIN
  SELECT relowner INTO owner_oid FROM pg_class
   WHERE oid = '"bootstrap_console"."audit_log"'::regclass;
  -- (table, what to revoke, the privileges that call for it: NULL for any)
  FOR rel, revoked, kinds IN
    VALUES ('"bootstrap_console"."audit_log"'::regclass, 'UPDATE, DELETE, TRUNCATE, TRIGGER',
            ARRAY['UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER']),
           ('"bootstrap_console"."audit_chain_head"'::regclass, 'ALL', NULL)
  LOOP
    FOR grantee IN
      SELECT a.grantee FROM pg_class c, aclexplode(c.relacl) a
       WHERE c.oid = rel AND (kinds IS NULL OR a.privilege_type = ANY (kinds))
      UNION
      SELECT a.grantee FROM pg_attribute att, aclexplode(att.attacl) a
       WHERE att.attrelid = rel AND (kinds IS NULL OR a.privilege_type = ANY (kinds))
    LOOP
      CONTINUE WHEN grantee = owner_oid;
      EXECUTE format('REVOKE %s ON %s FROM %s CASCADE', revoked, rel,
        CASE WHEN grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(grantee)) END);
    END LOOP;
  END LOOP;
END $$;
