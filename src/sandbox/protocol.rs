//! The platform's worker protocol (domain contract §1, see [`crate::domain`]) over real SQL:
//! what a bootstrap worker does. The simulator's workers run it, and tests use it to play a
//! worker against the console.
//!
//! Every write after the claim is *fenced*: it proceeds only while the job is still running
//! under this worker's lease token, at the row version the worker last saw, with the lease
//! unexpired. A job canceled or reclaimed behind the worker's back therefore stops it.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool, Postgres, Transaction};
use uuid::Uuid;

/// A job this worker holds, and the row version it last wrote or saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub bootstrap_id: Uuid,
    pub(crate) tenant_id: String,
    pub(crate) knowledge_space_id: Uuid,
    pub(crate) worker_id: String,
    pub(crate) lease_token: Uuid,
    pub(crate) row_version: i32,
    pub(crate) checkpoint: String,
    /// The job was running under another worker whose lease had expired.
    pub(crate) reclaimed: bool,
}

/// Why a worker step did not happen.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The fence failed: the job was canceled, reclaimed or changed; the worker must stop.
    #[error("lost the lease on bootstrap {0}")]
    LostLease(Uuid),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

/// Claims up to `limit` queued (or expired running) jobs, as the platform's workers do.
pub async fn claim(
    pool: &PgPool,
    worker_id: &str,
    lease_ttl: std::time::Duration,
    limit: i64,
) -> Result<Vec<Claim>, sqlx::Error> {
    claim_within(pool, worker_id, lease_ttl, limit, &Default::default()).await
}

/// [`claim`], leaving the jobs whose next step `shape` does not allow.
pub(crate) async fn claim_within(
    pool: &PgPool,
    worker_id: &str,
    lease_ttl: std::time::Duration,
    limit: i64,
    shape: &crate::sandbox::sim::PlatformShape,
) -> Result<Vec<Claim>, sqlx::Error> {
    // Every statement in a transaction: a transaction pooler may otherwise run an unnamed
    // statement's two halves on different server connections.
    let mut tx = pool.begin().await?;
    let ttl_ms = lease_ttl.as_millis() as i64;
    let rows = crate::store::sql::query_as::<(Uuid, String, Uuid, Uuid, i32, String, bool)>(
        "WITH candidates AS ( \
           SELECT id, run_state = 'running' AS reclaimed FROM legacy_space_publication_bootstraps \
           WHERE (run_state = 'queued' OR (run_state = 'running' AND lease_expires_at <= now())) \
             AND ($4 OR checkpoint <> 'pending_snapshot') AND ($5 OR checkpoint <> 'verifying') \
           ORDER BY updated_at, id LIMIT $3 FOR UPDATE SKIP LOCKED) \
         UPDATE legacy_space_publication_bootstraps b SET \
           run_state = 'running', lease_token = gen_random_uuid(), worker_id = $1, \
           heartbeat_at = now(), lease_expires_at = now() + $2 * interval '1 millisecond', \
           row_version = b.row_version + 1, updated_at = now() \
         FROM candidates c WHERE b.id = c.id \
         RETURNING b.id, b.tenant_id, b.knowledge_space_id, b.lease_token, b.row_version, \
                   b.checkpoint, c.reclaimed",
    )
    .bind(worker_id)
    .bind(ttl_ms)
    .bind(limit)
    // What the platform's tables do not let a worker do, it does not claim (see the shape).
    .bind(shape.capture)
    .bind(shape.publish)
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(rows
        .into_iter()
        .map(
            |(id, tenant, space, token, version, checkpoint, reclaimed)| Claim {
                bootstrap_id: id,
                tenant_id: tenant,
                knowledge_space_id: space,
                worker_id: worker_id.to_string(),
                lease_token: token,
                row_version: version,
                checkpoint,
                reclaimed,
            },
        )
        .collect())
}

/// The fence every worker write carries, as a WHERE clause over `b` with `$1` = id,
/// `$2` = row_version seen, `$3` = lease token.
pub(crate) const FENCE: &str = "b.id = $1 AND b.run_state = 'running' AND b.row_version = $2 \
    AND b.lease_token = $3 AND b.lease_expires_at > now()";

/// Extends the lease; fails with `LostLease` once the job is no longer this worker's.
pub async fn heartbeat(
    conn: &mut PgConnection,
    claim: &mut Claim,
    lease_ttl: std::time::Duration,
) -> Result<DateTime<Utc>, StepError> {
    let sql = format!(
        "UPDATE legacy_space_publication_bootstraps b SET \
           heartbeat_at = now(), lease_expires_at = now() + $4 * interval '1 millisecond', \
           row_version = b.row_version + 1, updated_at = now() \
         WHERE {FENCE} RETURNING b.row_version, b.lease_expires_at"
    );
    let mut tx = sqlx::Connection::begin(conn).await?;
    let row: Option<(i32, DateTime<Utc>)> = crate::store::sql::query_as(sqlx::AssertSqlSafe(sql))
        .bind(claim.bootstrap_id)
        .bind(claim.row_version)
        .bind(claim.lease_token)
        .bind(lease_ttl.as_millis() as i64)
        .fetch_optional(&mut *tx)
        .await?;
    tx.commit().await?;
    let (version, expires_at) = row.ok_or(StepError::LostLease(claim.bootstrap_id))?;
    claim.row_version = version;
    Ok(expires_at)
}

/// Locks the job row inside `tx` and checks the fence; every step below starts with it.
async fn lock_fenced(tx: &mut Transaction<'_, Postgres>, claim: &Claim) -> Result<(), StepError> {
    let sql =
        format!("SELECT b.id FROM legacy_space_publication_bootstraps b WHERE {FENCE} FOR UPDATE");
    let held: Option<Uuid> = crate::store::sql::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(claim.bootstrap_id)
        .bind(claim.row_version)
        .bind(claim.lease_token)
        .fetch_optional(&mut **tx)
        .await?;
    held.map(|_| ())
        .ok_or(StepError::LostLease(claim.bootstrap_id))
}

/// Applies `set` to the (already fenced and locked) job row, bumping its row version.
async fn write_job(
    tx: &mut Transaction<'_, Postgres>,
    claim: &mut Claim,
    set: &str,
) -> Result<(), StepError> {
    let sql = format!(
        "UPDATE legacy_space_publication_bootstraps b SET {set}, \
           row_version = b.row_version + 1, updated_at = now() \
         WHERE b.id = $1 RETURNING b.row_version, b.checkpoint"
    );
    let (version, checkpoint): (i32, String) =
        crate::store::sql::query_as(sqlx::AssertSqlSafe(sql))
            .bind(claim.bootstrap_id)
            .fetch_one(&mut **tx)
            .await?;
    claim.row_version = version;
    claim.checkpoint = checkpoint;
    Ok(())
}

/// What snapshot capture found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Capture {
    /// The document set is frozen into this many items.
    Captured(i32),
    /// A document writer holds the space's mutation lease; the job stays at pending_snapshot.
    BlockedByLease,
    /// The space already has a publication head; nothing to bootstrap.
    HeadExists,
}

/// Freezes the space's documents into items, under the space row lock (domain contract §1,
/// capture).
pub(crate) async fn capture_snapshot(
    pool: &PgPool,
    claim: &mut Claim,
) -> Result<Capture, StepError> {
    let mut tx = pool.begin().await?;
    // The same row lock document writers take on admission closes the check-then-write race.
    crate::store::sql::query(
        "SELECT id FROM knowledge_spaces WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
    )
    .bind(&claim.tenant_id)
    .bind(claim.knowledge_space_id)
    .fetch_optional(&mut *tx)
    .await?;
    lock_fenced(&mut tx, claim).await?;
    let (leased, headed): (bool, bool) = crate::store::sql::query_as(
        "SELECT EXISTS (SELECT 1 FROM knowledge_space_mutation_leases \
                        WHERE tenant_id = $1 AND knowledge_space_id = $2), \
                EXISTS (SELECT 1 FROM projection_set_publication_heads \
                        WHERE tenant_id = $1 AND knowledge_space_id = $2)",
    )
    .bind(&claim.tenant_id)
    .bind(claim.knowledge_space_id)
    .fetch_one(&mut *tx)
    .await?;
    if leased {
        tx.rollback().await?;
        return Ok(Capture::BlockedByLease);
    }
    if headed {
        tx.rollback().await?;
        return Ok(Capture::HeadExists);
    }
    let frozen = crate::store::sql::query(
        "INSERT INTO legacy_space_publication_bootstrap_items \
           (bootstrap_id, document_asset_id, document_version, document_sha256, ordinal, \
            status, created_at, updated_at) \
         SELECT $1, a.id, a.version, a.sha256, (row_number() OVER (ORDER BY a.id) - 1)::int, \
                'pending', now(), now() \
         FROM document_assets a WHERE a.tenant_id = $2 AND a.knowledge_space_id = $3",
    )
    .bind(claim.bootstrap_id)
    .bind(&claim.tenant_id)
    .bind(claim.knowledge_space_id)
    .execute(&mut *tx)
    .await?
    .rows_affected() as i32;
    let set = format!(
        "checkpoint = 'snapshot_captured', total_documents = {frozen}, \
         snapshot_metadata = b.snapshot_metadata || jsonb_build_object('capture', \
           jsonb_build_object('capturedAt', now(), 'capturedBy', b.worker_id, \
                              'documentCount', {frozen}))"
    );
    write_job(&mut tx, claim, &set).await?;
    tx.commit().await?;
    Ok(Capture::Captured(frozen))
}

/// The next document to rebuild: the lowest ordinal not yet succeeded.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct NextItem {
    pub(crate) document_asset_id: Uuid,
    pub(crate) ordinal: i32,
    pub status: String,
}

pub async fn next_item(pool: &PgPool, claim: &Claim) -> Result<Option<NextItem>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let next = crate::store::sql::query_as(
        "SELECT document_asset_id, ordinal, status FROM legacy_space_publication_bootstrap_items \
         WHERE bootstrap_id = $1 AND status <> 'succeeded' ORDER BY ordinal LIMIT 1",
    )
    .bind(claim.bootstrap_id)
    .fetch_optional(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(next)
}

/// Binds an item to a new compilation attempt (checkpoint `rebuilding`).
pub async fn bind_item(
    pool: &PgPool,
    claim: &mut Claim,
    item: &NextItem,
) -> Result<Uuid, StepError> {
    let mut tx = pool.begin().await?;
    lock_fenced(&mut tx, claim).await?;
    write_job(&mut tx, claim, "checkpoint = 'rebuilding'").await?;
    let attempt: Uuid = crate::store::sql::query_scalar(
        "UPDATE legacy_space_publication_bootstrap_items SET status = 'running', \
           compilation_attempt_id = gen_random_uuid(), last_error = NULL, updated_at = now() \
         WHERE bootstrap_id = $1 AND document_asset_id = $2 RETURNING compilation_attempt_id",
    )
    .bind(claim.bootstrap_id)
    .bind(item.document_asset_id)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(attempt)
}

/// Marks a bound item succeeded and counts it.
pub async fn complete_item(
    pool: &PgPool,
    claim: &mut Claim,
    item: &NextItem,
) -> Result<(), StepError> {
    let mut tx = pool.begin().await?;
    lock_fenced(&mut tx, claim).await?;
    write_job(
        &mut tx,
        claim,
        "completed_documents = b.completed_documents + 1",
    )
    .await?;
    crate::store::sql::query(
        "UPDATE legacy_space_publication_bootstrap_items SET status = 'succeeded', \
           updated_at = now() WHERE bootstrap_id = $1 AND document_asset_id = $2",
    )
    .bind(claim.bootstrap_id)
    .bind(item.document_asset_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Moves to `verifying` once every item succeeded; `false` if some have not.
pub(crate) async fn verify(pool: &PgPool, claim: &mut Claim) -> Result<bool, StepError> {
    let mut tx = pool.begin().await?;
    lock_fenced(&mut tx, claim).await?;
    let ready: bool = crate::store::sql::query_scalar(
        "SELECT b.completed_documents = b.total_documents AND NOT EXISTS ( \
           SELECT 1 FROM legacy_space_publication_bootstrap_items i \
           WHERE i.bootstrap_id = b.id AND i.status <> 'succeeded') \
         FROM legacy_space_publication_bootstraps b WHERE b.id = $1",
    )
    .bind(claim.bootstrap_id)
    .fetch_one(&mut *tx)
    .await?;
    if !ready {
        tx.rollback().await?;
        return Ok(false);
    }
    write_job(&mut tx, claim, "checkpoint = 'verifying'").await?;
    tx.commit().await?;
    Ok(true)
}

/// How completion ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Completion {
    /// Published (a head with revision > 0 for a non-empty snapshot) and succeeded.
    Published,
    /// The documents changed since capture; the job failed with `snapshot_drift`.
    Drifted,
}

/// Re-checks the frozen snapshot, publishes and completes (domain contract §1, complete).
pub(crate) async fn complete(
    pool: &PgPool,
    claim: &mut Claim,
    check_drift: bool,
) -> Result<Completion, StepError> {
    let mut tx = pool.begin().await?;
    lock_fenced(&mut tx, claim).await?;
    let drifted: bool = check_drift
        && crate::store::sql::query_scalar(
            "SELECT EXISTS ( \
           SELECT 1 FROM legacy_space_publication_bootstrap_items i \
           LEFT JOIN document_assets a ON a.id = i.document_asset_id \
             AND a.version = i.document_version AND a.sha256 = i.document_sha256 \
           WHERE i.bootstrap_id = $1 AND a.id IS NULL) \
         OR EXISTS ( \
           SELECT 1 FROM document_assets a \
           WHERE a.tenant_id = $2 AND a.knowledge_space_id = $3 AND NOT EXISTS ( \
             SELECT 1 FROM legacy_space_publication_bootstrap_items i \
             WHERE i.bootstrap_id = $1 AND i.document_asset_id = a.id))",
        )
        .bind(claim.bootstrap_id)
        .bind(&claim.tenant_id)
        .bind(claim.knowledge_space_id)
        .fetch_one(&mut *tx)
        .await?;
    if drifted {
        let message = "documents changed after the snapshot was captured";
        fail_job(&mut tx, claim, "snapshot_drift", message).await?;
        tx.commit().await?;
        return Ok(Completion::Drifted);
    }
    let total: i32 = crate::store::sql::query_scalar(
        "SELECT total_documents FROM legacy_space_publication_bootstraps WHERE id = $1",
    )
    .bind(claim.bootstrap_id)
    .fetch_one(&mut *tx)
    .await?;
    let mut set = String::from(
        "checkpoint = 'published', run_state = 'succeeded', completed_at = now(), \
         worker_id = NULL, lease_token = NULL, lease_expires_at = NULL, heartbeat_at = NULL",
    );
    if total > 0 {
        let (publication, fingerprint, revision) = publish(&mut tx, claim).await?;
        set.push_str(&format!(
            ", published_publication_id = '{publication}', \
             published_fingerprint = '{fingerprint}', published_head_revision = {revision}"
        ));
    }
    write_job(&mut tx, claim, &set).await?;
    tx.commit().await?;
    Ok(Completion::Published)
}

/// Writes the publication of the frozen set and moves the space's head to it.
async fn publish(
    tx: &mut Transaction<'_, Postgres>,
    claim: &Claim,
) -> Result<(Uuid, String, i32), StepError> {
    // base64url of SHA-512 over the frozen hashes: 86 characters, the column's width.
    let (publication, fingerprint): (Uuid, String) = crate::store::sql::query_as(
        "INSERT INTO projection_set_publications \
           (id, tenant_id, knowledge_space_id, fingerprint, document_count) \
         SELECT gen_random_uuid(), $2, $3, \
                rtrim(translate(replace(encode(sha512(convert_to( \
                  string_agg(i.document_sha256, ',' ORDER BY i.ordinal), 'UTF8')), 'base64'), \
                  E'\\n', ''), '+/', '-_'), '='), count(*) \
         FROM legacy_space_publication_bootstrap_items i WHERE i.bootstrap_id = $1 \
         RETURNING id, fingerprint",
    )
    .bind(claim.bootstrap_id)
    .bind(&claim.tenant_id)
    .bind(claim.knowledge_space_id)
    .fetch_one(&mut **tx)
    .await?;
    let revision: i32 = crate::store::sql::query_scalar(
        "INSERT INTO projection_set_publication_heads \
           (tenant_id, knowledge_space_id, publication_id, fingerprint, revision) \
         VALUES ($1, $2, $3, $4, 1) \
         ON CONFLICT (tenant_id, knowledge_space_id) DO UPDATE SET \
           publication_id = EXCLUDED.publication_id, fingerprint = EXCLUDED.fingerprint, \
           revision = projection_set_publication_heads.revision + 1, updated_at = now() \
         RETURNING revision",
    )
    .bind(&claim.tenant_id)
    .bind(claim.knowledge_space_id)
    .bind(publication)
    .bind(&fingerprint)
    .fetch_one(&mut **tx)
    .await?;
    Ok((publication, fingerprint, revision))
}

/// Writes the failed state to the (already fenced and locked) job row.
async fn fail_job(
    tx: &mut Transaction<'_, Postgres>,
    claim: &mut Claim,
    code: &str,
    message: &str,
) -> Result<(), StepError> {
    let (version, checkpoint): (i32, String) = crate::store::sql::query_as(
        "UPDATE legacy_space_publication_bootstraps b SET \
           run_state = 'failed', completed_at = now(), last_error_code = $2, \
           last_error_message = $3, worker_id = NULL, lease_token = NULL, \
           lease_expires_at = NULL, heartbeat_at = NULL, \
           row_version = b.row_version + 1, updated_at = now() \
         WHERE b.id = $1 RETURNING b.row_version, b.checkpoint",
    )
    .bind(claim.bootstrap_id)
    .bind(code)
    .bind(message)
    .fetch_one(&mut **tx)
    .await?;
    claim.row_version = version;
    claim.checkpoint = checkpoint;
    Ok(())
}

/// Fails the job (and the failing item, if any) with an error code and message.
pub async fn fail(
    pool: &PgPool,
    claim: &mut Claim,
    item: Option<&NextItem>,
    code: &str,
    message: &str,
) -> Result<(), StepError> {
    let mut tx = pool.begin().await?;
    lock_fenced(&mut tx, claim).await?;
    if let Some(item) = item {
        crate::store::sql::query(
            "UPDATE legacy_space_publication_bootstrap_items SET status = 'failed', \
               last_error = $3, updated_at = now() \
             WHERE bootstrap_id = $1 AND document_asset_id = $2",
        )
        .bind(claim.bootstrap_id)
        .bind(item.document_asset_id)
        .bind(message)
        .execute(&mut *tx)
        .await?;
    }
    fail_job(&mut tx, claim, code, message).await?;
    tx.commit().await?;
    Ok(())
}

/// Gives the job back cleanly: `running → queued`, lease cleared.
pub(crate) async fn release(pool: &PgPool, claim: &mut Claim) -> Result<(), StepError> {
    let mut tx = pool.begin().await?;
    lock_fenced(&mut tx, claim).await?;
    write_job(
        &mut tx,
        claim,
        "run_state = 'queued', worker_id = NULL, lease_token = NULL, \
         lease_expires_at = NULL, heartbeat_at = NULL",
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Heartbeat on a pooled connection (see [`heartbeat`]).
pub(crate) async fn heartbeat_pooled(
    pool: &PgPool,
    claim: &mut Claim,
    lease_ttl: std::time::Duration,
) -> Result<DateTime<Utc>, StepError> {
    let mut conn = pool.acquire().await?;
    heartbeat(conn.as_mut(), claim, lease_ttl).await
}
