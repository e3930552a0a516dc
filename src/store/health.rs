//! The ledger's invariant checks as SQL (see [`crate::domain::health`]).
//!
//! Checks that read items run over the bootstraps in batches of consecutive ids, so no
//! statement reads more than one batch's items (at 100,000 spaces of 50 documents: 5M items
//! in all, 50,000 a statement with batches of 1,000). The others are single statements over
//! an index: running jobs by lease expiry, succeeded jobs against their heads.
//!
//! Per batch: one statement finds the batch's end in the primary key, one counts its items per
//! bootstrap through the items' `(bootstrap_id, …)` indexes, one joins its succeeded jobs to
//! their heads. `abandoned` is one range of the claim index (`run_state, lease_expires_at`);
//! `unreadable` is the report's own statement ([`super::report`]).
//!
//! Measured on the scale fixture (100,000 spaces, 4,552,150 items, release build): `check`
//! took 2.3–2.5 s in about 300 statements with 15 MB resident, against 0.49–0.51 s for one
//! `psql` `GROUP BY` over every item — about 4.7× the one big scan, in exchange for no statement
//! longer than about 50 ms (one batch's item count under `EXPLAIN ANALYZE`; a batch's head join
//! 13 ms, the abandoned range 0.1 ms).

use chrono::{DateTime, Utc};
use sqlx::PgConnection;
use uuid::Uuid;

use super::StoreError;

/// The last id of the batch of `size` bootstraps after `after` (`None`: from the start), or
/// `None` when fewer remain (the batch then runs to the end).
pub(crate) async fn batch_end(
    conn: &mut PgConnection,
    tenant: Option<&str>,
    after: Option<Uuid>,
    size: i64,
) -> Result<Option<Uuid>, StoreError> {
    Ok(crate::store::sql::query_scalar(
        "SELECT id FROM legacy_space_publication_bootstraps \
         WHERE ($1::uuid IS NULL OR id > $1) AND ($2::text IS NULL OR tenant_id = $2) \
         ORDER BY id OFFSET $3 - 1 LIMIT 1",
    )
    .bind(after)
    .bind(tenant)
    .bind(size)
    .fetch_optional(&mut *conn)
    .await?)
}

/// How many bootstraps are in scope (for the progress bar).
pub(crate) async fn bootstraps_in_scope(
    conn: &mut PgConnection,
    tenant: Option<&str>,
) -> Result<i64, StoreError> {
    Ok(crate::store::sql::query_scalar(
        "SELECT count(*) FROM legacy_space_publication_bootstraps \
         WHERE $1::text IS NULL OR tenant_id = $1",
    )
    .bind(tenant)
    .fetch_one(&mut *conn)
    .await?)
}

/// A bootstrap whose counts disagree with its items.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct ItemCounts {
    pub(crate) id: Uuid,
    pub(crate) tenant_id: String,
    pub(crate) knowledge_space_id: Uuid,
    pub(crate) checkpoint: String,
    pub(crate) run_state: String,
    pub(crate) total_documents: i32,
    pub(crate) completed_documents: i32,
    pub items: i64,
    pub(crate) succeeded: i64,
    pub(crate) running: i64,
}

/// The bootstraps in `(after, until]` whose counts disagree with their items: a captured
/// snapshot with another number of items than `total_documents`, `completed_documents` other
/// than the succeeded items, a succeeded job with items not succeeded, or more than one item
/// running at once.
pub(crate) async fn item_disagreements(
    conn: &mut PgConnection,
    tenant: Option<&str>,
    after: Option<Uuid>,
    until: Option<Uuid>,
) -> Result<Vec<ItemCounts>, StoreError> {
    Ok(crate::store::sql::query_as(
        "SELECT b.id, b.tenant_id, b.knowledge_space_id, b.checkpoint, b.run_state, \
                b.total_documents, b.completed_documents, i.items, i.succeeded, i.running \
         FROM legacy_space_publication_bootstraps b \
         CROSS JOIN LATERAL ( \
           SELECT count(*) AS items, \
                  count(*) FILTER (WHERE status = 'succeeded') AS succeeded, \
                  count(*) FILTER (WHERE status = 'running') AS running \
           FROM legacy_space_publication_bootstrap_items WHERE bootstrap_id = b.id) i \
         WHERE ($1::uuid IS NULL OR b.id > $1) AND ($2::uuid IS NULL OR b.id <= $2) \
           AND ($3::text IS NULL OR b.tenant_id = $3) \
           AND ((b.checkpoint <> 'pending_snapshot' AND i.items <> b.total_documents) \
             OR b.completed_documents <> i.succeeded \
             OR (b.run_state = 'succeeded' AND i.succeeded <> i.items) \
             OR (i.running > 1 AND b.run_state <> 'canceled')) \
         ORDER BY b.id",
    )
    .bind(after)
    .bind(until)
    .bind(tenant)
    .fetch_all(&mut *conn)
    .await?)
}

/// What the database offers for the head checks: a readable head table, and whether it has
/// a `revision` column (without it, only missing heads can be told).
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::FromRow)]
pub(crate) struct HeadTable {
    pub(crate) readable: bool,
    pub(crate) revision: bool,
}

pub(crate) async fn head_table(conn: &mut PgConnection) -> Result<HeadTable, StoreError> {
    Ok(crate::store::sql::query_as(
        "SELECT coalesce(has_table_privilege(t.oid, 'SELECT'), false) AS readable, \
                EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid \
                          AND a.attname = 'revision' AND NOT a.attisdropped) AS revision \
         FROM (SELECT to_regclass('projection_set_publication_heads') AS oid) t",
    )
    .fetch_one(&mut *conn)
    .await?)
}

/// A succeeded job with documents whose space's head is missing or behind.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct HeadMismatch {
    pub(crate) id: Uuid,
    pub(crate) tenant_id: String,
    pub(crate) knowledge_space_id: Uuid,
    pub(crate) total_documents: i32,
    pub(crate) published_head_revision: Option<i32>,
    pub(crate) head_revision: Option<i32>,
    pub(crate) has_head: bool,
}

/// Succeeded jobs with documents whose space has no publication head, or a head older than
/// the revision the job published (heads move forward with later writes: newer is fine).
pub(crate) async fn head_mismatches(
    conn: &mut PgConnection,
    heads: HeadTable,
    tenant: Option<&str>,
    after: Option<Uuid>,
    until: Option<Uuid>,
) -> Result<Vec<HeadMismatch>, StoreError> {
    // Without a revision column only a missing head can be told (the join needs the table's
    // identity columns alone).
    let (revision, wrong) = if heads.revision {
        (
            "h.revision",
            "(h.knowledge_space_id IS NULL OR h.revision < b.published_head_revision)",
        )
    } else {
        ("NULL::int", "h.knowledge_space_id IS NULL")
    };
    Ok(crate::store::sql::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT b.id, b.tenant_id, b.knowledge_space_id, b.total_documents, \
                b.published_head_revision, {revision} AS head_revision, \
                h.knowledge_space_id IS NOT NULL AS has_head \
         FROM legacy_space_publication_bootstraps b \
         LEFT JOIN projection_set_publication_heads h \
           ON h.tenant_id = b.tenant_id AND h.knowledge_space_id = b.knowledge_space_id \
         WHERE ($1::uuid IS NULL OR b.id > $1) AND ($2::uuid IS NULL OR b.id <= $2) \
           AND ($3::text IS NULL OR b.tenant_id = $3) \
           AND b.run_state = 'succeeded' AND b.total_documents > 0 AND {wrong} \
         ORDER BY b.id"
    )))
    .bind(after)
    .bind(until)
    .bind(tenant)
    .fetch_all(&mut *conn)
    .await?)
}

/// A running job whose worker lease expired long ago and that no worker reclaimed.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct Abandoned {
    pub(crate) id: Uuid,
    pub(crate) tenant_id: String,
    pub(crate) knowledge_space_id: Uuid,
    pub(crate) worker_id: Option<String>,
    pub(crate) heartbeat_at: Option<DateTime<Utc>>,
    pub(crate) lease_expires_at: Option<DateTime<Utc>>,
    pub db_now: DateTime<Utc>,
}

/// Running jobs whose lease expired more than `windows` lease windows ago (the window being
/// the time from the last heartbeat to the expiry, at least a minute): one range of the claim
/// index, however large the ledger.
/// `now` is the instant the data is judged at: on a lagging standby, as of its data, not its
/// clock (see `Session::database_now`).
pub(crate) async fn abandoned(
    conn: &mut PgConnection,
    tenant: Option<&str>,
    windows: i32,
    now: DateTime<Utc>,
) -> Result<Vec<Abandoned>, StoreError> {
    Ok(crate::store::sql::query_as(
        "SELECT id, tenant_id, knowledge_space_id, worker_id, heartbeat_at, lease_expires_at, \
                $3::timestamptz AS db_now \
         FROM legacy_space_publication_bootstraps \
         WHERE run_state = 'running' AND lease_expires_at < $3 \
           AND ($1::text IS NULL OR tenant_id = $1) \
           AND $3 - lease_expires_at > $2 * greatest(lease_expires_at - heartbeat_at, \
                                                     interval '1 minute') \
         ORDER BY lease_expires_at, id",
    )
    .bind(tenant)
    .bind(windows)
    .bind(now)
    .fetch_all(&mut *conn)
    .await?)
}
