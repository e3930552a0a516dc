//! The statements that keep a copy of the ledger up to date, each one cheap at 100,000 spaces.
//! [`super::sync`] decides which to run when.
//!
//! They use only the indexes migration 0009 created and never scan the bootstrap table from
//! end to end in one statement:
//! * **changed rows** come through the claim index `(run_state, lease_expires_at, updated_at,
//!   id)`. The CHECK constraints force `lease_expires_at IS NULL` in every state but running,
//!   so for those states the index is ordered by `updated_at`; running rows written by their
//!   worker carry a lease that outlives the write (the fence demands it), so they are found
//!   among the live leases;
//! * the **resync** reads a few pages at a time by TID range (`ctid`), ids, row versions and
//!   pages only, and the rows that differ (or went missing from their page) by primary key;
//! * the **first load** reads the table in large TID ranges (or a tenant through the space
//!   index).
//!
//! All of them are public as SQL so a test can `EXPLAIN` them.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, Row};
use uuid::Uuid;

use super::read::lease_columns;
use super::replica::{Lsn, Primary, Replication};
use super::rows::{BoardRecord, LeaseRow};
use super::{Layout, StoreError};

/// The page (block number) of `b`'s current version, from its `ctid` `(page,item)`.
const PAGE: &str = "(b.ctid::text::point)[0]::bigint";

/// How much of the last error message a board row carries.
pub(crate) const BOARD_MESSAGE_CHARS: usize = 240;

/// Which of the board's columns a statement reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Columns {
    /// For the sync: whether there is a message, but not its text (the board fetches the
    /// messages of the rows on screen, [`messages`]), with each row's version and page.
    Sync,
    /// For a report: whole messages; no version or page (read as 0).
    Report,
}

/// The board's columns of `b`.
pub(crate) fn board_columns(columns: Columns) -> String {
    let (message, version, page) = match columns {
        Columns::Sync => (
            // `left(m, 0)` is '' for a message and NULL for none: its presence, no bytes.
            "left(b.last_error_message, 0)".to_string(),
            "b.xmin::text::bigint",
            PAGE,
        ),
        Columns::Report => ("b.last_error_message".to_string(), "0::bigint", "0::bigint"),
    };
    format!(
        "b.id, b.tenant_id, b.knowledge_space_id, b.checkpoint, b.run_state, \
         b.total_documents, b.completed_documents, b.worker_id, \
         b.lease_token IS NOT NULL AS has_lease_token, b.lease_expires_at, b.heartbeat_at, \
         b.last_error_code, {message} AS last_error_message, b.row_version, b.updated_at, \
         b.completed_at, {version} AS version, {page} AS page"
    )
}

const TENANT: &str = "($1::text IS NULL OR b.tenant_id = $1)";

/// The database clock and the bootstrap table's size in pages.
pub const CLOCK_SQL: &str = "SELECT now() AS db_now, \
    (pg_relation_size('legacy_space_publication_bootstraps'::regclass) \
     / current_setting('block_size')::bigint) AS pages, \
    pg_is_in_recovery() AS in_recovery, pg_last_wal_replay_lsn()::text AS replayed, \
    pg_last_xact_replay_timestamp() AS replayed_at";

/// Rows in pages `[$2, $3)` (`$3` NULL: to the end) — the first load, in a few large ranges.
pub fn pages_sql() -> String {
    format!(
        "SELECT {} FROM legacy_space_publication_bootstraps b \
         WHERE b.ctid >= format('(%s,0)', $2::bigint)::tid \
           AND ($3::bigint IS NULL OR b.ctid < format('(%s,0)', $3::bigint)::tid) AND {TENANT}",
        board_columns(Columns::Sync)
    )
}

/// Every row of one tenant, through the `(tenant_id, knowledge_space_id)` index.
pub fn tenant_sql() -> String {
    format!(
        "SELECT {} FROM legacy_space_publication_bootstraps b WHERE b.tenant_id = $1",
        board_columns(Columns::Sync)
    )
}

/// Rows written after `$2`: through an index on `updated_at` when the platform has one, else
/// through the claim index.
pub fn changed_sql(layout: &Layout) -> String {
    if layout.updated_at_index {
        format!(
            "SELECT {} FROM legacy_space_publication_bootstraps b \
             WHERE b.updated_at > $2 AND {TENANT}",
            board_columns(Columns::Sync)
        )
    } else {
        changed_by_claim_index_sql()
    }
}

/// Rows written after `$2` through the claim index (see the module comment for why these two
/// branches find them all).
pub fn changed_by_claim_index_sql() -> String {
    let columns = board_columns(Columns::Sync);
    format!(
        "SELECT {columns} FROM legacy_space_publication_bootstraps b \
         WHERE b.run_state = ANY('{{queued,succeeded,failed,canceled}}'::text[]) \
           AND b.lease_expires_at IS NULL AND b.updated_at > $2 AND {TENANT} \
         UNION ALL \
         SELECT {columns} FROM legacy_space_publication_bootstraps b \
         WHERE b.run_state = 'running' AND b.lease_expires_at > $2 AND b.updated_at > $2 \
           AND {TENANT}"
    )
}

/// Ids, row versions and pages in pages `[$2, $3)` (`$3` NULL: to the end): one resync slice.
pub fn versions_sql() -> String {
    format!(
        "SELECT b.id, b.xmin::text::bigint AS version, {PAGE} AS page \
         FROM legacy_space_publication_bootstraps b \
         WHERE b.ctid >= format('(%s,0)', $2::bigint)::tid \
           AND ($3::bigint IS NULL OR b.ctid < format('(%s,0)', $3::bigint)::tid) \
           AND {TENANT}"
    )
}

/// The rows with these ids (that still exist and are in scope).
pub fn by_ids_sql() -> String {
    format!(
        "SELECT {} FROM legacy_space_publication_bootstraps b \
         WHERE b.id = ANY($2) AND {TENANT}",
        board_columns(Columns::Sync)
    )
}

/// Every mutation lease in scope (a small table: one lease per busy space at most).
pub fn leases_sql(layout: &Layout) -> String {
    format!(
        "SELECT {} FROM knowledge_space_mutation_leases l \
         WHERE ($1::text IS NULL OR l.tenant_id = $1)",
        lease_columns(layout)
    )
}

/// The leases are hashed by id into this many buckets, each with a digest (how many, and a
/// sum of a hash of each one's id and row version), so that a poll reads only the leases of
/// the buckets that changed.
pub const LEASE_BUCKETS: i32 = 256;

/// Every bucket's digest, and the leases of the buckets whose digest differs from the one the
/// caller knows (`$2` buckets, `$3` counts, `$4` digests: none known on a first load). Rows
/// with `n` set are digests; the others are leases. The server reads the lease table once,
/// and sends what changed: a table of 10,000 leases costs what reading it costs, not what
/// sending it does. (No index serves this: the table has none on its row version.)
pub fn lease_delta_sql(layout: &Layout) -> String {
    // The digests from a narrow pass over the table; the changed buckets' leases from a second
    // (a CTE holding every lease's columns costs more than reading the table twice).
    let bucket = format!("(uuid_hash(l.id) & {})", LEASE_BUCKETS - 1);
    format!(
        "WITH d AS ( \
           SELECT {bucket} AS bucket, count(*)::int4 AS n, \
                  sum(uuid_hash(l.id) # hashtext(l.xmin::text))::int8 AS digest \
           FROM knowledge_space_mutation_leases l \
           WHERE ($1::text IS NULL OR l.tenant_id = $1) GROUP BY 1), \
         changed AS ( \
           SELECT d.bucket FROM d \
           LEFT JOIN unnest($2::int4[], $3::int4[], $4::int8[]) AS k(bucket, n, digest) \
             ON k.bucket = d.bucket \
           WHERE k.n IS DISTINCT FROM d.n OR k.digest IS DISTINCT FROM d.digest) \
         SELECT d.bucket, d.n, d.digest, NULL::uuid AS id, NULL::text AS tenant_id, \
                NULL::uuid AS knowledge_space_id, NULL::text AS operation, \
                NULL::timestamptz AS acquired_at, NULL::timestamptz AS heartbeat_at, \
                NULL::timestamptz AS expires_at \
         FROM d \
         UNION ALL \
         SELECT * FROM (SELECT {bucket}, NULL::int4, NULL::int8, {} \
           FROM knowledge_space_mutation_leases l \
           WHERE ($1::text IS NULL OR l.tenant_id = $1) \
             AND {bucket} IN (SELECT bucket FROM changed)) AS leases",
        lease_columns(layout),
    )
}

/// What [`lease_delta_sql`] answered.
#[derive(Debug, Default)]
pub struct LeaseDelta {
    /// Every bucket that holds a lease: its count and digest.
    pub digests: Vec<(i32, i32, i64)>,
    /// The leases of the changed buckets, with their bucket.
    pub leases: Vec<(i32, LeaseRow)>,
}

pub async fn lease_delta(
    conn: &mut PgConnection,
    layout: &Layout,
    tenant: Option<&str>,
    known: &[(i32, i32, i64)],
) -> Result<LeaseDelta, StoreError> {
    let (buckets, counts, digests): (Vec<i32>, Vec<i32>, Vec<i64>) = (
        known.iter().map(|k| k.0).collect(),
        known.iter().map(|k| k.1).collect(),
        known.iter().map(|k| k.2).collect(),
    );
    let rows = crate::store::sql::query(sqlx::AssertSqlSafe(lease_delta_sql(layout)))
        .bind(tenant)
        .bind(buckets)
        .bind(counts)
        .bind(digests)
        .fetch_all(conn)
        .await?;
    let mut delta = LeaseDelta::default();
    for row in rows {
        let bucket: i32 = row.try_get(0)?;
        match row.try_get::<Option<i32>, _>(1)? {
            Some(n) => delta.digests.push((bucket, n, row.try_get(2)?)),
            None => delta.leases.push((
                bucket,
                LeaseRow {
                    id: row.try_get(3)?,
                    tenant_id: row.try_get(4)?,
                    knowledge_space_id: row.try_get(5)?,
                    operation: row.try_get(6)?,
                    acquired_at: row.try_get(7)?,
                    heartbeat_at: row.try_get(8)?,
                    expires_at: row.try_get(9)?,
                },
            )),
        }
    }
    Ok(delta)
}

/// The database clock, the table size and, on a standby, how far it has replayed.
pub struct Clock {
    pub now: DateTime<Utc>,
    pub(crate) pages: i64,
    /// `Some` on a standby: how far it has replayed, and when the last commit replayed was
    /// made on the primary.
    pub(crate) replay: Option<(Option<Lsn>, Option<DateTime<Utc>>)>,
}

impl Clock {
    /// The replication state, judged against what is known of the primary (`None` on a
    /// primary).
    pub(crate) fn replication(&self, primary: &Primary) -> Option<Replication> {
        self.replay
            .map(|(replayed, at)| Replication::new(self.now, replayed, at, primary))
    }
}

pub(crate) async fn clock(conn: &mut PgConnection) -> Result<Clock, StoreError> {
    let row = crate::store::sql::query(CLOCK_SQL).fetch_one(conn).await?;
    let now = row.try_get("db_now")?;
    let replay = if row.try_get("in_recovery")? {
        let replayed: Option<String> = row.try_get("replayed")?;
        let replayed = replayed
            .map(|t| t.parse().map_err(StoreError::Replication))
            .transpose()?;
        Some((replayed, row.try_get("replayed_at")?))
    } else {
        None
    };
    Ok(Clock {
        now,
        pages: row.try_get("pages")?,
        replay,
    })
}

/// Rows in pages `[from, to)`; `to = None` reads to the end of the table.
pub(crate) async fn pages(
    conn: &mut PgConnection,
    tenant: Option<&str>,
    from: i64,
    to: Option<i64>,
) -> Result<Vec<BoardRecord>, StoreError> {
    Ok(
        crate::store::sql::query_as(sqlx::AssertSqlSafe(pages_sql()))
            .bind(tenant)
            .bind(from)
            .bind(to)
            .fetch_all(conn)
            .await?,
    )
}

pub(crate) async fn tenant(
    conn: &mut PgConnection,
    tenant: &str,
) -> Result<Vec<BoardRecord>, StoreError> {
    Ok(
        crate::store::sql::query_as(sqlx::AssertSqlSafe(tenant_sql()))
            .bind(tenant)
            .fetch_all(conn)
            .await?,
    )
}

pub(crate) async fn changed_since(
    conn: &mut PgConnection,
    layout: &Layout,
    tenant: Option<&str>,
    since: DateTime<Utc>,
) -> Result<Vec<BoardRecord>, StoreError> {
    Ok(
        crate::store::sql::query_as(sqlx::AssertSqlSafe(changed_sql(layout)))
            .bind(tenant)
            .bind(since)
            .fetch_all(conn)
            .await?,
    )
}

/// One row of a resync slice: the id, the row version and the page it is on.
pub(crate) type Version = (Uuid, i64, i64);

pub(crate) async fn versions(
    conn: &mut PgConnection,
    tenant: Option<&str>,
    from: i64,
    to: Option<i64>,
) -> Result<Vec<Version>, StoreError> {
    Ok(
        crate::store::sql::query_as(sqlx::AssertSqlSafe(versions_sql()))
            .bind(tenant)
            .bind(from)
            .bind(to)
            .fetch_all(conn)
            .await?,
    )
}

pub(crate) async fn by_ids(
    conn: &mut PgConnection,
    tenant: Option<&str>,
    ids: &[Uuid],
) -> Result<Vec<BoardRecord>, StoreError> {
    Ok(
        crate::store::sql::query_as(sqlx::AssertSqlSafe(by_ids_sql()))
            .bind(tenant)
            .bind(ids)
            .fetch_all(conn)
            .await?,
    )
}

/// The start of the error messages of bootstraps `$2` (the rows on screen), with the row
/// version each was read at.
pub fn messages_sql() -> String {
    format!(
        "SELECT b.id, b.row_version, left(b.last_error_message, {BOARD_MESSAGE_CHARS}) AS message \
         FROM legacy_space_publication_bootstraps b \
         WHERE b.id = ANY($2) AND b.last_error_message IS NOT NULL AND {TENANT}"
    )
}

/// A message of a row on screen.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct MessageRow {
    pub id: Uuid,
    pub row_version: i32,
    pub message: String,
}

pub(crate) async fn messages(
    conn: &mut PgConnection,
    tenant: Option<&str>,
    ids: &[Uuid],
) -> Result<Vec<MessageRow>, StoreError> {
    Ok(
        crate::store::sql::query_as(sqlx::AssertSqlSafe(messages_sql()))
            .bind(tenant)
            .bind(ids)
            .fetch_all(conn)
            .await?,
    )
}

/// Every mutation lease in scope (in a poll's transaction, or on the pool).
pub async fn leases<'e, E: sqlx::PgExecutor<'e>>(
    executor: E,
    layout: &Layout,
    tenant: Option<&str>,
) -> Result<Vec<LeaseRow>, StoreError> {
    Ok(
        crate::store::sql::query_as(sqlx::AssertSqlSafe(leases_sql(layout)))
            .bind(tenant)
            .fetch_all(executor)
            .await?,
    )
}
