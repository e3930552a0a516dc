//! The scale fixture: a rollout the size of a real one (100,000 spaces over 1,000 tenants,
//! about 5 million items), generated inside the database with `generate_series` so it takes
//! minutes, not hours. The benchmark measures against it, and `simulate --no-seed` runs workers
//! on it.
//!
//! Proportions: 60% succeeded, 30% queued or running, 5% failed, 5% canceled. As many jobs run
//! as there are workers (500 by default, `--workers`), each under a 60-s lease renewed by
//! heartbeat as real workers hold them; the rest of that 30% waits queued — a real fleet runs
//! what its workers can hold, not a fifth of every space at once. Every captured space has its frozen items (50 by default); 1% of the spaces have a
//! mutation lease, some of them old enough to be orphan suspects. Spaces that are not done have
//! their document assets, so simulated workers can capture and complete them. Everything is
//! derived from the seed: the same seed gives the same ids.
//!
//! Building the default fixture takes about 95 s and 2.7 GB of disk on a 2-core machine. It is
//! a snapshot: its running jobs belong to no simulated worker, so a minute after it is built
//! their leases expire (until `simulate --no-seed` reclaims them), and ten minutes after the
//! queued jobs still waiting their turn show as stuck. To try the console at
//! fleet scale:
//!
//! ```sh
//! bootstrap-console sandbox &                        # prints DATABASE_URL=…
//! export DATABASE_URL=…                              # as printed
//! bootstrap-console fixture                          # 100,000 spaces
//! bootstrap-console simulate --no-seed --workers 8 & # workers keep writing
//! bootstrap-console watch --interval 1
//! ```

use std::time::{Duration, Instant};

use sqlx::{Connection, PgConnection};

use super::sim::SeedError;
use crate::domain::model::KNOWN_OPERATIONS;
use crate::store::schema;

/// The size of the fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixtureConfig {
    pub spaces: u32,
    pub tenants: u32,
    pub items_per_space: u32,
    pub seed: u64,
    /// Time-ordered ids (UUIDv7), which share their first digits as real ones do.
    pub v7_ids: bool,
    /// Workers of the platform: as many jobs are running, each holding a live lease.
    pub workers: u32,
}

impl Default for FixtureConfig {
    fn default() -> Self {
        Self {
            spaces: 100_000,
            tenants: 1_000,
            items_per_space: 50,
            seed: 7,
            v7_ids: false,
            workers: 500,
        }
    }
}

/// What the fixture holds, and what it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureReport {
    pub spaces: i64,
    pub items: i64,
    pub leases: i64,
    pub database_bytes: i64,
    pub(crate) took: Duration,
}

/// The planned spaces: id, tenant, state and progress, all derived from the seed (`$1`), the
/// number of spaces (`$2`), tenants (`$3`) and items per space (`$4`); `$5` asks for
/// time-ordered ids, a millisecond apart; `$6` jobs at most run (the workers), the other jobs
/// of the running share wait queued. Every later statement takes the seed as `$1`.
const PLAN: &str = "\
CREATE TEMP TABLE fixture_plan ON COMMIT DROP AS
SELECT i, id, tenant, roll, roll2, run_state, checkpoint, total,
       CASE WHEN run_state = 'succeeded' OR checkpoint = 'verifying' THEN total
            WHEN total = 0 THEN 0 ELSE roll2 % total END AS completed
FROM (
  SELECT i, id, tenant, roll, roll2, run_state, checkpoint,
         CASE WHEN checkpoint = 'pending_snapshot' THEN 0 ELSE $4::int END AS total
  FROM (
    SELECT i, id, tenant, roll, roll2, run_state,
           CASE run_state
             WHEN 'succeeded' THEN 'published'
             WHEN 'queued' THEN CASE WHEN roll2 < 800 THEN 'pending_snapshot' ELSE 'rebuilding' END
             WHEN 'running' THEN CASE WHEN roll2 < 100 THEN 'snapshot_captured'
                                      WHEN roll2 < 950 THEN 'rebuilding' ELSE 'verifying' END
             ELSE CASE WHEN roll2 < 100 THEN 'pending_snapshot' ELSE 'rebuilding' END
           END AS checkpoint
    FROM (
      SELECT i, id, tenant, roll, roll2,
             CASE WHEN roll < 60 THEN 'succeeded'
                  WHEN roll < 90 AND count(*) FILTER (WHERE roll >= 60 AND roll < 90)
                       OVER (ORDER BY i) <= $6 THEN 'running'
                  WHEN roll < 90 THEN 'queued' WHEN roll < 95 THEN 'failed'
                  ELSE 'canceled' END AS run_state
      FROM (
        SELECT i,
               CASE WHEN $5 THEN (lpad(to_hex(1780000000000 + i), 12, '0') || '7'
                                  || substr(md5($1 || ':v7:' || i), 1, 3) || '8'
                                  || substr(md5($1 || ':v7:' || i), 4, 15))::uuid
                    ELSE md5($1 || ':s:' || i)::uuid END AS id,
               'tenant-' || lpad(((i * 7919) % $3)::text, length(($3 - 1)::text), '0') AS tenant,
               abs(hashtext($1 || ':state:' || i)) % 100 AS roll,
               abs(hashtext($1 || ':p:' || i)) % 1000 AS roll2
        FROM generate_series(0, $2 - 1) AS i
      ) ids
    ) states
  ) checkpoints
) totals";

const SPACES: &str = "INSERT INTO knowledge_spaces (id, tenant_id, name) \
    SELECT id, tenant, 'space ' || i FROM fixture_plan";

const PUBLICATIONS: &str = "\
INSERT INTO projection_set_publications (id, tenant_id, knowledge_space_id, fingerprint, document_count)
SELECT md5($1 || ':pub:' || i)::uuid, tenant, id, 'fp-' || md5($1 || ':fp:' || i), total
FROM fixture_plan WHERE run_state = 'succeeded'";

const HEADS: &str = "\
INSERT INTO projection_set_publication_heads (tenant_id, knowledge_space_id, publication_id, fingerprint, revision)
SELECT tenant, id, md5($1 || ':pub:' || i)::uuid, 'fp-' || md5($1 || ':fp:' || i), 1
FROM fixture_plan WHERE run_state = 'succeeded'";

const BOOTSTRAPS: &str = "\
INSERT INTO legacy_space_publication_bootstraps (id, tenant_id, knowledge_space_id,
  idempotency_key, checkpoint, run_state, total_documents, completed_documents, worker_id,
  lease_token, lease_expires_at, heartbeat_at, last_error_code, last_error_message, row_version,
  published_publication_id, published_fingerprint, published_head_revision, snapshot_metadata,
  created_at, updated_at, completed_at)
SELECT id, tenant, id, 'legacy-space-publication-bootstrap-v1', checkpoint, run_state, total,
  completed,
  CASE WHEN run_state = 'running' THEN 'worker-' || lpad(i::text, 7, '0') END,
  CASE WHEN run_state = 'running' THEN md5($1 || ':tok:' || i)::uuid END,
  CASE WHEN run_state = 'running' THEN now() + interval '60 seconds' - (roll2 % 20) * interval '1 second' END,
  CASE WHEN run_state = 'running' THEN now() - (roll2 % 20) * interval '1 second' END,
  CASE run_state WHEN 'failed' THEN (ARRAY['compile_timeout', 'parser_crash', 'asset_missing',
    'oom_killed'])[1 + roll2 % 4] WHEN 'canceled' THEN 'operator_canceled' END,
  CASE run_state WHEN 'failed' THEN 'document ' || (roll2 % 50) || ' failed: compiler exited '
    || 'with status 1 after ' || roll2 || ' ms' WHEN 'canceled' THEN 'paused for a maintenance window' END,
  1 + roll2 % 40,
  CASE WHEN run_state = 'succeeded' AND total > 0 THEN md5($1 || ':pub:' || i)::uuid END,
  CASE WHEN run_state = 'succeeded' AND total > 0 THEN 'fp-' || md5($1 || ':fp:' || i) END,
  CASE WHEN run_state = 'succeeded' AND total > 0 THEN 1 END,
  jsonb_build_object('schemaVersion', 1, 'strategy', 'full-generation-rebuild',
    'source', CASE WHEN checkpoint = 'pending_snapshot' THEN 'migration-marker' ELSE 'fixture' END,
    'capturedDocuments', total),
  now() - interval '3 hours',
  now() - (roll2 % 600) * interval '1 second',
  CASE WHEN run_state IN ('succeeded', 'failed', 'canceled') THEN now() - (roll2 % 600) * interval '1 second' END
FROM fixture_plan";

const ASSETS: &str = "\
INSERT INTO document_assets (id, tenant_id, knowledge_space_id, title, version, sha256, size_bytes)
SELECT md5($1 || ':d:' || p.i || ':' || o)::uuid, p.tenant, p.id, 'document ' || o, 1 + o % 3,
  md5(p.i || ':' || o) || md5(o || ':' || p.i), 1000 + o
FROM fixture_plan p, generate_series(0, $2::int - 1) AS o WHERE p.run_state <> 'succeeded'";

const ITEMS: &str = "\
INSERT INTO legacy_space_publication_bootstrap_items (bootstrap_id, document_asset_id,
  document_version, document_sha256, ordinal, compilation_attempt_id, status, last_error,
  created_at, updated_at)
SELECT p.id, md5($1 || ':d:' || p.i || ':' || o)::uuid, 1 + o % 3,
  md5(p.i || ':' || o) || md5(o || ':' || p.i), o,
  CASE WHEN o <= p.completed THEN md5($1 || ':a:' || p.i || ':' || o)::uuid END,
  CASE WHEN o < p.completed THEN 'succeeded'
       WHEN o = p.completed AND p.run_state = 'running' THEN 'running'
       WHEN o = p.completed AND p.run_state = 'failed' THEN 'failed'
       ELSE 'pending' END,
  CASE WHEN o = p.completed AND p.run_state = 'failed' THEN 'compiler exited 1' END,
  now() - interval '3 hours', now()
FROM fixture_plan p, generate_series(0, $2::int - 1) AS o WHERE p.total > 0
ORDER BY p.id, o";

/// The running jobs' heartbeats and leases as of the end of the build (`clock_timestamp()`):
/// 0–19 s since the last heartbeat, a 60-s lease from it.
const RENEW: &str = "\
UPDATE legacy_space_publication_bootstraps b SET
  heartbeat_at = clock_timestamp() - (p.roll2 % 20) * interval '1 second',
  lease_expires_at = clock_timestamp() + interval '60 seconds' - (p.roll2 % 20) * interval '1 second'
FROM fixture_plan p WHERE b.id = p.id AND b.run_state = 'running'";

const LEASES: &str = "\
INSERT INTO knowledge_space_mutation_leases (id, tenant_id, knowledge_space_id, operation, acquired_at)
SELECT md5($1 || ':l:' || i)::uuid, tenant, id, ($2::text[])[1 + roll2 % array_length($2::text[], 1)],
  now() - (roll2 % 120) * interval '1 minute'
FROM fixture_plan WHERE abs(hashtext($1 || ':lease:' || i)) % 100 = 0";

/// Builds the fixture in a database that has the platform tables and no ledger yet, applies
/// migration 0009 (which creates the ledger tables) and the console schema; `progress` hears
/// about each step.
pub async fn build(
    conn: &mut PgConnection,
    config: &FixtureConfig,
    mut progress: impl FnMut(&str, Duration),
) -> Result<FixtureReport, SeedError> {
    let started = Instant::now();
    schema::apply_unit(conn, &schema::LEGACY_SPACE_BOOTSTRAP).await?;
    schema::migrate_console(conn).await?;
    let seed = config.seed.to_string();
    let operations: Vec<String> = KNOWN_OPERATIONS.iter().map(|o| o.to_string()).collect();
    let mut tx = conn.begin().await?;
    // Generating takes minutes: this transaction may run statements longer than the usual
    // limit, and sorts its inserts in memory (rows in index order fill the indexes much
    // faster). `SET LOCAL`: through a pooler, a session setting would outlive this client.
    sqlx::raw_sql("SET LOCAL statement_timeout = 0; SET LOCAL work_mem = '512MB'")
        .execute(&mut *tx)
        .await?;
    let spaces = i64::from(config.spaces);
    let tenants = i64::from(config.tenants.max(1));
    let items = i64::from(config.items_per_space);
    let mut step = Instant::now();
    let mut done = |what: &str, step: &mut Instant| {
        progress(what, step.elapsed());
        *step = Instant::now();
    };
    let query = |sql: &'static str| crate::store::sql::query(sql).bind(&seed);
    query(PLAN)
        .bind(spaces)
        .bind(tenants)
        .bind(items)
        .bind(config.v7_ids)
        .bind(i64::from(config.workers))
        .execute(&mut *tx)
        .await?;
    done("planned the spaces", &mut step);
    crate::store::sql::query(SPACES).execute(&mut *tx).await?;
    done("knowledge spaces", &mut step);
    query(PUBLICATIONS).execute(&mut *tx).await?;
    query(HEADS).execute(&mut *tx).await?;
    done("publications and heads", &mut step);
    query(BOOTSTRAPS).execute(&mut *tx).await?;
    done("bootstraps", &mut step);
    query(ASSETS).bind(items).execute(&mut *tx).await?;
    done("document assets", &mut step);
    query(ITEMS).bind(items).execute(&mut *tx).await?;
    done("frozen items", &mut step);
    query(LEASES).bind(&operations).execute(&mut *tx).await?;
    done("mutation leases", &mut step);
    // The build takes minutes in one transaction, whose `now()` is its start: the workers'
    // leases are renewed as of its end, so they are live when it commits.
    crate::store::sql::query(RENEW).execute(&mut *tx).await?;
    tx.commit().await?;
    sqlx::raw_sql("ANALYZE").execute(&mut *conn).await?;
    done("analyzed", &mut step);
    let mut tx = conn.begin().await?;
    let (spaces, items, leases, database_bytes): (i64, i64, i64, i64) =
        crate::store::sql::query_as(
            "SELECT (SELECT count(*) FROM legacy_space_publication_bootstraps), \
                (SELECT count(*) FROM legacy_space_publication_bootstrap_items), \
                (SELECT count(*) FROM knowledge_space_mutation_leases), \
                pg_database_size(current_database())",
        )
        .fetch_one(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(FixtureReport {
        spaces,
        items,
        leases,
        database_bytes,
        took: started.elapsed(),
    })
}
