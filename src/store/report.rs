//! `status` at scale: the rollout summary as one aggregate statement, and the rows of each
//! attention class in keyset pages, so a report never holds a statement open while its reader
//! (a slow pipe, `less`) drains the output.
//!
//! The attention class in SQL mirrors [`crate::domain::signals::assess`] rule for rule, at a
//! clock the caller passes in (the same instant for every statement of one report); a test
//! checks that both agree on the same ledger. Class pages use *supersets* of a class where the
//! exact rule needs the lease or the clock in ways an index cannot serve; the domain judges
//! every row again and keeps only the class's own.

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{FromRow, PgPool};
use uuid::Uuid;

use super::fleet::board_columns;
use super::read::{prefixed_lease, prefixed_lease_columns};
use super::rows::{BoardRecord, LeaseRow};
use super::{Layout, StoreError};

/// What a report is judged against: `now` (database clock) and the thresholds that use it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    pub now: DateTime<Utc>,
    pub stuck_after_us: i64,
    pub heartbeat_late_fraction: f64,
}

/// What narrows a report besides the tenant scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Narrowing {
    pub tenant: Option<String>,
    /// Run states as stored (`None`: all).
    pub run_states: Option<Vec<String>>,
    pub checkpoints: Option<Vec<String>>,
}

/// The join every report statement reads from.
const FROM: &str = "FROM legacy_space_publication_bootstraps b \
    LEFT JOIN knowledge_space_mutation_leases l \
      ON l.tenant_id = b.tenant_id AND l.knowledge_space_id = b.knowledge_space_id";

/// A row the console can read (the domain's parsing rules, as SQL).
const READABLE: &str = "b.run_state IN ('queued', 'running', 'succeeded', 'failed', 'canceled') \
    AND b.checkpoint IN ('pending_snapshot', 'snapshot_captured', 'rebuilding', 'verifying', \
                         'published') \
    AND b.total_documents >= 0 AND b.completed_documents >= 0 \
    AND b.completed_documents <= b.total_documents \
    AND CASE WHEN b.run_state = 'running' \
        THEN b.worker_id IS NOT NULL AND b.lease_token IS NOT NULL \
             AND b.lease_expires_at IS NOT NULL AND b.heartbeat_at IS NOT NULL \
        ELSE b.worker_id IS NULL AND b.lease_token IS NULL \
             AND b.lease_expires_at IS NULL AND b.heartbeat_at IS NULL END";

/// `signals::late_at` reached at `$2`: the lease has less than `$4` of its window left.
const LATE: &str = "b.lease_expires_at > b.heartbeat_at \
    AND $2 >= b.lease_expires_at - floor((extract(epoch FROM b.lease_expires_at - b.heartbeat_at) \
        * 1000000)::float8 * $4) * interval '1 microsecond'";

/// The attention class index (`Attention::ALL` order) of `b` at `$2`; NULL when unreadable.
/// `$3` is the stuck threshold in microseconds, `$4` the heartbeat-late fraction.
fn class_sql() -> String {
    format!(
        "CASE WHEN NOT ({READABLE}) THEN NULL \
           WHEN b.run_state = 'failed' THEN 0 \
           WHEN b.run_state <> 'succeeded' AND b.checkpoint = 'pending_snapshot' \
                AND l.id IS NOT NULL THEN 1 \
           WHEN b.run_state = 'running' AND b.lease_expires_at <= $2 THEN 2 \
           WHEN b.run_state IN ('running', 'queued') \
                AND b.updated_at + $3 * interval '1 microsecond' <= $2 THEN 3 \
           WHEN b.run_state = 'running' AND {LATE} THEN 4 \
           WHEN b.run_state = 'running' THEN 5 \
           WHEN b.run_state = 'queued' THEN 6 \
           WHEN b.run_state = 'canceled' THEN 7 \
           ELSE 8 END"
    )
}

/// The summary: rows counted by (class, checkpoint, run state), with documents remaining.
pub fn summary_sql() -> String {
    format!(
        "SELECT {class} AS class, b.checkpoint, b.run_state, count(*) AS spaces, \
                sum(b.total_documents - b.completed_documents)::bigint AS remaining \
         {FROM} WHERE ($1::text IS NULL OR b.tenant_id = $1) GROUP BY 1, 2, 3",
        class = class_sql()
    )
}

/// The rows the console cannot read, by id (only asked for when the summary counted some).
pub fn unreadable_sql() -> String {
    format!(
        "SELECT b.id, b.tenant_id, b.run_state, b.checkpoint {FROM} \
         WHERE ($1::text IS NULL OR b.tenant_id = $1) AND NOT ({READABLE}) \
         ORDER BY b.id LIMIT 1000"
    )
}

/// One group of the summary.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct SummaryGroup {
    /// `None`: rows the console cannot read.
    pub class: Option<i32>,
    pub checkpoint: String,
    pub run_state: String,
    pub spaces: i64,
    pub remaining: i64,
}

pub async fn summary(
    pool: &PgPool,
    tenant: Option<&str>,
    clock: &Clock,
) -> Result<Vec<SummaryGroup>, StoreError> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(summary_sql()))
        .bind(tenant)
        .bind(clock.now)
        .bind(clock.stuck_after_us)
        .bind(clock.heartbeat_late_fraction)
        .fetch_all(pool)
        .await?)
}

/// A row the console cannot read: its id and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct UnreadableRow {
    pub id: Uuid,
    pub tenant_id: String,
    pub run_state: String,
    pub checkpoint: String,
}

pub async fn unreadable(
    pool: &PgPool,
    tenant: Option<&str>,
) -> Result<Vec<UnreadableRow>, StoreError> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(unreadable_sql()))
        .bind(tenant)
        .fetch_all(pool)
        .await?)
}

/// A superset of the rows of attention class `class` (index into `Attention::ALL`), as SQL
/// an index can serve: the exact class needs the domain's judgement.
fn superset(class: usize) -> &'static str {
    match class {
        0 => "b.run_state = 'failed' AND b.lease_expires_at IS NULL",
        1 => {
            "b.run_state IN ('queued', 'running', 'canceled') \
              AND b.checkpoint = 'pending_snapshot' AND l.id IS NOT NULL"
        }
        2 => "b.run_state = 'running' AND b.lease_expires_at <= $2",
        3 => {
            "b.run_state IN ('running', 'queued') \
              AND b.updated_at <= $2 - $3 * interval '1 microsecond'"
        }
        4 | 5 => "b.run_state = 'running' AND b.lease_expires_at > $2",
        6 => "b.run_state = 'queued' AND b.lease_expires_at IS NULL",
        7 => "b.run_state = 'canceled' AND b.lease_expires_at IS NULL",
        _ => "b.run_state = 'succeeded' AND b.lease_expires_at IS NULL",
    }
}

/// One keyset page of class `class`, in `(updated_at, id)` order after `$7, $8`.
pub fn page_sql(class: usize, layout: &Layout) -> String {
    format!(
        "SELECT {columns}, {lease} {FROM} \
         WHERE ($1::text IS NULL OR b.tenant_id = $1) \
           AND ($5::text[] IS NULL OR b.run_state = ANY($5)) \
           AND ($6::text[] IS NULL OR b.checkpoint = ANY($6)) \
           AND {superset} \
           AND ($7::timestamptz IS NULL OR (b.updated_at, b.id) > ($7, $8)) \
         ORDER BY b.updated_at, b.id LIMIT $9",
        columns = board_columns(None),
        lease = prefixed_lease_columns(layout),
        superset = superset(class),
    )
}

/// Where the next page of a class starts.
pub type Keyset = Option<(DateTime<Utc>, Uuid)>;

/// A bootstrap with the mutation lease of its space.
pub type RecordWithLease = (BoardRecord, Option<LeaseRow>);

/// One page of class `class` after `after`; the page is full when it has `limit` rows.
#[allow(clippy::too_many_arguments)]
pub async fn page(
    pool: &PgPool,
    layout: &Layout,
    narrowing: &Narrowing,
    clock: &Clock,
    class: usize,
    after: Keyset,
    limit: i64,
) -> Result<Vec<RecordWithLease>, StoreError> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(page_sql(class, layout)))
        .bind(narrowing.tenant.as_deref())
        .bind(clock.now)
        .bind(clock.stuck_after_us)
        .bind(clock.heartbeat_late_fraction)
        .bind(narrowing.run_states.as_deref())
        .bind(narrowing.checkpoints.as_deref())
        .bind(after.map(|(at, _)| at))
        .bind(after.map(|(_, id)| id))
        .bind(limit)
        .fetch_all(pool)
        .await?;
    rows.iter().map(record_with_lease).collect()
}

fn record_with_lease(row: &PgRow) -> Result<RecordWithLease, StoreError> {
    let record = BoardRecord::from_row(row)?;
    let lease = prefixed_lease(row, &record.tenant_id, record.knowledge_space_id)?;
    Ok((record, lease))
}

/// The database clock.
pub async fn now(pool: &PgPool) -> Result<DateTime<Utc>, StoreError> {
    Ok(sqlx::query_scalar("SELECT now()").fetch_one(pool).await?)
}
