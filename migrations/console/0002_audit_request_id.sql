-- Every operator action carries a client-generated request id (SPEC §3), so a request applied
-- once is never applied again — when a client re-drives it, or looks it up after an outcome it
-- could not see (a deadline, a lost connection).
--   request_id: the operator's request, as the console printed it; the records of a bulk
--               request share it.
--   action_id:  one per subject of the request, derived from the request id, the action and
--               the subject; unique, so the same action of the same request commits once.
-- Records written before this unit keep NULL in both. Idempotent: applying it again changes
-- nothing.
ALTER TABLE "bootstrap_console"."audit_log" ADD COLUMN IF NOT EXISTS "request_id" UUID;
ALTER TABLE "bootstrap_console"."audit_log" ADD COLUMN IF NOT EXISTS "action_id" UUID;

CREATE UNIQUE INDEX IF NOT EXISTS "audit_log_action_idx"
  ON "bootstrap_console"."audit_log" ("action_id");
CREATE INDEX IF NOT EXISTS "audit_log_request_idx"
  ON "bootstrap_console"."audit_log" ("request_id");
