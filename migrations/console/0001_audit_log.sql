-- The console's own schema: one append-only record per applied operator action (SPEC §3).
-- It lives in its own schema so it can never collide with the platform's tables, and it is
-- applied only by `bootstrap-console migrate`, never together with a platform migration.
-- Idempotent: applying it again changes nothing.
CREATE SCHEMA IF NOT EXISTS "bootstrap_console";

CREATE TABLE IF NOT EXISTS "bootstrap_console"."audit_log" (
  "id" BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- database clock, so records from operators on drifting jump hosts still order correctly
  "at" TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "actor" VARCHAR(255) NOT NULL,
  "host" VARCHAR(255) NOT NULL,
  "ssh_client" VARCHAR(255),
  "action" VARCHAR(32) NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "bootstrap_id" UUID,
  "lease_id" UUID,
  "reason" TEXT NOT NULL,
  "row_before" JSONB,
  "row_after" JSONB,
  "outcome" VARCHAR(32) NOT NULL,
  CONSTRAINT "audit_log_action_ck"
    CHECK ("action" IN ('retry', 'cancel', 'remove_mutation_lease')),
  CONSTRAINT "audit_log_outcome_ck" CHECK ("outcome" IN ('applied', 'applied_forced')),
  CONSTRAINT "audit_log_reason_ck" CHECK (length(btrim("reason")) > 0),
  CONSTRAINT "audit_log_target_ck" CHECK ("bootstrap_id" IS NOT NULL OR "lease_id" IS NOT NULL)
);

CREATE INDEX IF NOT EXISTS "audit_log_space_idx"
  ON "bootstrap_console"."audit_log" ("tenant_id", "knowledge_space_id", "at" DESC);
CREATE INDEX IF NOT EXISTS "audit_log_at_idx"
  ON "bootstrap_console"."audit_log" ("at" DESC);

-- Which console schema units this database has, so `migrate` can say what it did.
CREATE TABLE IF NOT EXISTS "bootstrap_console"."schema_migrations" (
  "version" INTEGER PRIMARY KEY NOT NULL,
  "name" VARCHAR(255) NOT NULL,
  "applied_at" TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "applied_by" VARCHAR(255) NOT NULL DEFAULT CURRENT_USER
);
