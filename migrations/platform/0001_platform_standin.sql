-- STAND-IN FOR THE KNOWLEDGE PLATFORM'S OWN SCHEMA — sandbox and tests only.
--
-- Migration 0009 references platform tables that the console never creates on a real database.
-- This file recreates just enough of them for the private PostgreSQL of `demo` and the tests:
-- the keys and composite unique keys the 0009 foreign keys point at, and the columns the worker
-- protocol (SPEC §1) reads. `bootstrap-console migrate` never applies it.
--
-- Every statement is idempotent so the whole file can be applied twice.

-- Tenant-scoped knowledge spaces. The id is a globally unique UUID (0009 reuses it as the
-- bootstrap id); (tenant_id, id) is the composite key tenant-scoped rows reference.
CREATE TABLE IF NOT EXISTS "knowledge_spaces" (
  "id" UUID PRIMARY KEY NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "name" VARCHAR(255) NOT NULL,
  "created_at" TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "knowledge_spaces_tenant_id_uq" UNIQUE ("tenant_id", "id")
);

-- A published projection set of one space; the fingerprint identifies its exact content.
CREATE TABLE IF NOT EXISTS "projection_set_publications" (
  "id" UUID PRIMARY KEY NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "fingerprint" VARCHAR(86) NOT NULL,
  "document_count" INTEGER NOT NULL DEFAULT 0 CHECK ("document_count" >= 0),
  "created_at" TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
  CONSTRAINT "projection_set_publications_identity_uq"
    UNIQUE ("tenant_id", "knowledge_space_id", "id", "fingerprint"),
  FOREIGN KEY ("tenant_id", "knowledge_space_id")
    REFERENCES "knowledge_spaces" ("tenant_id", "id")
    ON DELETE CASCADE
);

-- The publication strict readers serve for a space. Its presence means the space is already on
-- the new publication model, so 0009 creates no marker for it.
CREATE TABLE IF NOT EXISTS "projection_set_publication_heads" (
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "publication_id" UUID NOT NULL,
  "fingerprint" VARCHAR(86) NOT NULL,
  "revision" INTEGER NOT NULL CHECK ("revision" > 0),
  "updated_at" TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY ("tenant_id", "knowledge_space_id"),
  FOREIGN KEY ("tenant_id", "knowledge_space_id", "publication_id", "fingerprint")
    REFERENCES "projection_set_publications" ("tenant_id", "knowledge_space_id", "id", "fingerprint")
    ON DELETE RESTRICT
);

-- Documents of a space: the set a bootstrap freezes (id, version, sha256) and later re-checks.
CREATE TABLE IF NOT EXISTS "document_assets" (
  "id" UUID PRIMARY KEY NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "title" VARCHAR(512) NOT NULL DEFAULT '',
  "version" INTEGER NOT NULL CHECK ("version" > 0),
  "sha256" VARCHAR(64) NOT NULL,
  "size_bytes" BIGINT NOT NULL DEFAULT 0 CHECK ("size_bytes" >= 0),
  "created_at" TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
  "updated_at" TIMESTAMPTZ NOT NULL DEFAULT CURRENT_TIMESTAMP,
  FOREIGN KEY ("tenant_id", "knowledge_space_id")
    REFERENCES "knowledge_spaces" ("tenant_id", "id")
    ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS "document_assets_space_idx"
  ON "document_assets" ("knowledge_space_id", "id");

-- The seven kinds of derived state whose NULL-generation ("legacy") rows 0009 stops trusting.
-- They share one shape: an owner space and the publication generation that produced the row.
CREATE TABLE IF NOT EXISTS "knowledge_nodes" (
  "id" UUID PRIMARY KEY NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "publication_generation_id" UUID,
  "payload" JSONB NOT NULL DEFAULT '{}'::jsonb,
  FOREIGN KEY ("tenant_id", "knowledge_space_id")
    REFERENCES "knowledge_spaces" ("tenant_id", "id") ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS "knowledge_nodes_space_generation_idx"
  ON "knowledge_nodes" ("knowledge_space_id", "publication_generation_id");

CREATE TABLE IF NOT EXISTS "index_projections" (
  "id" UUID PRIMARY KEY NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "publication_generation_id" UUID,
  "payload" JSONB NOT NULL DEFAULT '{}'::jsonb,
  FOREIGN KEY ("tenant_id", "knowledge_space_id")
    REFERENCES "knowledge_spaces" ("tenant_id", "id") ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS "index_projections_space_generation_idx"
  ON "index_projections" ("knowledge_space_id", "publication_generation_id");

CREATE TABLE IF NOT EXISTS "document_outlines" (
  "id" UUID PRIMARY KEY NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "publication_generation_id" UUID,
  "payload" JSONB NOT NULL DEFAULT '{}'::jsonb,
  FOREIGN KEY ("tenant_id", "knowledge_space_id")
    REFERENCES "knowledge_spaces" ("tenant_id", "id") ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS "document_outlines_space_generation_idx"
  ON "document_outlines" ("knowledge_space_id", "publication_generation_id");

CREATE TABLE IF NOT EXISTS "document_multimodal_manifests" (
  "id" UUID PRIMARY KEY NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "publication_generation_id" UUID,
  "payload" JSONB NOT NULL DEFAULT '{}'::jsonb,
  FOREIGN KEY ("tenant_id", "knowledge_space_id")
    REFERENCES "knowledge_spaces" ("tenant_id", "id") ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS "document_multimodal_manifests_space_generation_idx"
  ON "document_multimodal_manifests" ("knowledge_space_id", "publication_generation_id");

CREATE TABLE IF NOT EXISTS "knowledge_paths" (
  "id" UUID PRIMARY KEY NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "publication_generation_id" UUID,
  "payload" JSONB NOT NULL DEFAULT '{}'::jsonb,
  FOREIGN KEY ("tenant_id", "knowledge_space_id")
    REFERENCES "knowledge_spaces" ("tenant_id", "id") ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS "knowledge_paths_space_generation_idx"
  ON "knowledge_paths" ("knowledge_space_id", "publication_generation_id");

CREATE TABLE IF NOT EXISTS "graph_entities" (
  "id" UUID PRIMARY KEY NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "publication_generation_id" UUID,
  "payload" JSONB NOT NULL DEFAULT '{}'::jsonb,
  FOREIGN KEY ("tenant_id", "knowledge_space_id")
    REFERENCES "knowledge_spaces" ("tenant_id", "id") ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS "graph_entities_space_generation_idx"
  ON "graph_entities" ("knowledge_space_id", "publication_generation_id");

CREATE TABLE IF NOT EXISTS "graph_relations" (
  "id" UUID PRIMARY KEY NOT NULL,
  "tenant_id" VARCHAR(255) NOT NULL,
  "knowledge_space_id" UUID NOT NULL,
  "publication_generation_id" UUID,
  "payload" JSONB NOT NULL DEFAULT '{}'::jsonb,
  FOREIGN KEY ("tenant_id", "knowledge_space_id")
    REFERENCES "knowledge_spaces" ("tenant_id", "id") ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS "graph_relations_space_generation_idx"
  ON "graph_relations" ("knowledge_space_id", "publication_generation_id");
