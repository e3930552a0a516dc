-- The request id becomes what the operator is shown (`request <uuid>`): the records of a bulk
-- request share it, so it is no longer unique. Each action of a request gets its own id,
-- derived from the request id, the action and its subject, and that one is unique: the same
-- action of the same request commits once (SPEC §3). Records written before this unit keep
-- a NULL action id. Idempotent: applying it again changes nothing.
ALTER TABLE "bootstrap_console"."audit_log" ADD COLUMN IF NOT EXISTS "action_id" UUID;

CREATE UNIQUE INDEX IF NOT EXISTS "audit_log_action_idx"
  ON "bootstrap_console"."audit_log" ("action_id");

DROP INDEX IF EXISTS "bootstrap_console"."audit_log_request_idx";
CREATE INDEX IF NOT EXISTS "audit_log_request_id_idx"
  ON "bootstrap_console"."audit_log" ("request_id");
