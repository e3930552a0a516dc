-- Every operator action carries a client-generated request id (SPEC §3), stored unique, so a
-- request applied once is never applied again — when a client re-drives it, or looks it up
-- after an outcome it could not see (a deadline, a lost connection). Records written before
-- this unit keep a NULL request id. Idempotent: applying it again changes nothing.
ALTER TABLE "bootstrap_console"."audit_log" ADD COLUMN IF NOT EXISTS "request_id" UUID;

CREATE UNIQUE INDEX IF NOT EXISTS "audit_log_request_idx"
  ON "bootstrap_console"."audit_log" ("request_id");
