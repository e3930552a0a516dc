//! The platform's worker protocol (SPEC §1) over real SQL: what a bootstrap worker does. The
//! simulator's workers run it, and tests use it to play a worker against the console.
//!
//! Every write after the claim is *fenced*: it proceeds only while the job is still running
//! under this worker's lease token, at the row version the worker last saw, with the lease
//! unexpired. A job canceled or reclaimed behind the worker's back therefore stops it.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

/// A job this worker holds, and the row version it last wrote or saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub bootstrap_id: Uuid,
    pub tenant_id: String,
    pub knowledge_space_id: Uuid,
    pub worker_id: String,
    pub lease_token: Uuid,
    pub row_version: i32,
    pub checkpoint: String,
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
    let ttl_ms = lease_ttl.as_millis() as i64;
    let rows = sqlx::query_as::<_, (Uuid, String, Uuid, Uuid, i32, String)>(
        "WITH candidates AS ( \
           SELECT id FROM legacy_space_publication_bootstraps \
           WHERE run_state = 'queued' OR (run_state = 'running' AND lease_expires_at <= now()) \
           ORDER BY updated_at, id LIMIT $3 FOR UPDATE SKIP LOCKED) \
         UPDATE legacy_space_publication_bootstraps b SET \
           run_state = 'running', lease_token = gen_random_uuid(), worker_id = $1, \
           heartbeat_at = now(), lease_expires_at = now() + $2 * interval '1 millisecond', \
           row_version = b.row_version + 1, updated_at = now() \
         FROM candidates c WHERE b.id = c.id \
         RETURNING b.id, b.tenant_id, b.knowledge_space_id, b.lease_token, b.row_version, b.checkpoint",
    )
    .bind(worker_id)
    .bind(ttl_ms)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, tenant, space, token, version, checkpoint)| Claim {
            bootstrap_id: id,
            tenant_id: tenant,
            knowledge_space_id: space,
            worker_id: worker_id.to_string(),
            lease_token: token,
            row_version: version,
            checkpoint,
        })
        .collect())
}

/// The fence every worker write carries, as a WHERE clause over `b` with `$1` = id,
/// `$2` = row_version seen, `$3` = lease token.
pub const FENCE: &str = "b.id = $1 AND b.run_state = 'running' AND b.row_version = $2 \
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
    let row: Option<(i32, DateTime<Utc>)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
        .bind(claim.bootstrap_id)
        .bind(claim.row_version)
        .bind(claim.lease_token)
        .bind(lease_ttl.as_millis() as i64)
        .fetch_optional(conn)
        .await?;
    let (version, expires_at) = row.ok_or(StepError::LostLease(claim.bootstrap_id))?;
    claim.row_version = version;
    Ok(expires_at)
}
