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
use sqlx::{FromRow, PgConnection};
use uuid::Uuid;

use super::StoreError;
use super::fleet::{Columns, board_columns};
use super::rows::BoardRecord;

/// What a report is judged against: `now` (database clock) and the thresholds that use it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    pub now: DateTime<Utc>,
    pub(crate) stuck_after_us: i64,
    pub(crate) heartbeat_late_fraction: f64,
    /// A mutation lease older than this is an orphan suspect.
    pub(crate) orphan_after_us: i64,
    /// How long a worker lease may stay expired before an operator is needed.
    pub(crate) reclaim_grace_us: i64,
}

/// What narrows a report besides the tenant scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Narrowing {
    pub(crate) tenant: Option<String>,
    /// Run states as stored (`None`: all).
    pub(crate) run_states: Option<Vec<String>>,
    pub(crate) checkpoints: Option<Vec<String>>,
}

/// Counts and worker-lease columns the domain's parsing accepts. (Unknown states and
/// checkpoints need no check here: they form groups of their own, which the domain cannot
/// parse and counts as unreadable.)
const SANE: &str = "b.completed_documents BETWEEN 0 AND b.total_documents \
    AND num_nonnulls(b.worker_id, b.lease_token, b.lease_expires_at, b.heartbeat_at) \
        = CASE WHEN b.run_state = 'running' THEN 4 ELSE 0 END";

/// Run states and checkpoints the domain knows.
const KNOWN: &str = "b.run_state IN ('queued', 'running', 'succeeded', 'failed', 'canceled') \
    AND b.checkpoint IN ('pending_snapshot', 'snapshot_captured', 'rebuilding', 'verifying', \
                         'published')";

/// `signals::late_at` reached at `$2`: the lease has less than `$4` of its window left.
const LATE: &str = "b.lease_expires_at > b.heartbeat_at \
    AND $2 >= b.lease_expires_at - floor((extract(epoch FROM b.lease_expires_at - b.heartbeat_at) \
        * 1000000)::float8 * $4) * interval '1 microsecond'";

/// `signals::lease_is_orphan_suspect` for lease `l` at `$2`: older than the orphan threshold
/// (`$5` microseconds) and, where the lease table has heartbeats (`heartbeat_at` and
/// `expires_at`, as the console reads them), past its expiry — read through `to_jsonb`, so the
/// statement stands whether the columns exist or not.
const ORPHAN: &str = "$2 >= l.acquired_at + ($5 + 1) * interval '1 microsecond' \
    AND $2 >= CASE WHEN to_jsonb(l) ? 'heartbeat_at' \
                   THEN coalesce((to_jsonb(l) ->> 'expires_at')::timestamptz, '-infinity') \
                   ELSE '-infinity' END";

/// The attention class index (`Attention::ALL` order) of `b` at `$2`; NULL when its counts or
/// lease columns are impossible. Succeeded comes right after failed (no other rule can apply to
/// it), so most rows are settled early; the lease is looked up (in a hashed set of the small
/// lease table) only for spaces at `pending_snapshot`.
/// `$3` is the stuck threshold in microseconds, `$4` the heartbeat-late fraction, `$5` the
/// orphan threshold and `$6` the reclaim grace in microseconds.
fn class_sql() -> String {
    format!(
        "CASE WHEN NOT ({SANE}) THEN NULL \
           WHEN b.run_state = 'failed' THEN 0 \
           WHEN b.run_state = 'succeeded' THEN 10 \
           WHEN b.checkpoint = 'pending_snapshot' AND (b.tenant_id, b.knowledge_space_id) IN \
                (SELECT l.tenant_id, l.knowledge_space_id \
                 FROM knowledge_space_mutation_leases l WHERE {ORPHAN}) THEN 1 \
           WHEN b.checkpoint = 'pending_snapshot' AND (b.tenant_id, b.knowledge_space_id) IN \
                (SELECT l.tenant_id, l.knowledge_space_id \
                 FROM knowledge_space_mutation_leases l) THEN 6 \
           WHEN b.run_state = 'running' \
                AND b.lease_expires_at + $6 * interval '1 microsecond' <= $2 THEN 2 \
           WHEN b.run_state IN ('running', 'queued') \
                AND b.updated_at + $3 * interval '1 microsecond' <= $2 THEN 3 \
           WHEN b.run_state = 'running' AND b.lease_expires_at <= $2 THEN 4 \
           WHEN b.run_state = 'running' AND {LATE} THEN 5 \
           WHEN b.run_state = 'running' THEN 7 \
           WHEN b.run_state = 'queued' THEN 8 \
           WHEN b.run_state = 'canceled' THEN 9 \
           ELSE 10 END"
    )
}

/// The summary: rows counted by (class, checkpoint, run state), with documents remaining.
pub(crate) fn summary_sql() -> String {
    format!(
        "SELECT {class} AS class, b.checkpoint, b.run_state, count(*) AS spaces, \
                sum(b.total_documents - b.completed_documents)::bigint AS remaining, \
                sum(b.completed_documents)::bigint AS completed \
         FROM legacy_space_publication_bootstraps b \
         WHERE ($1::text IS NULL OR b.tenant_id = $1) GROUP BY 1, 2, 3",
        class = class_sql()
    )
}

/// The most unreadable rows listed (the summary counts them all).
pub(crate) const UNREADABLE_LISTED: usize = 1000;

/// The rows the console cannot read, by id (only asked for when the summary counted some).
pub(crate) fn unreadable_sql() -> String {
    format!(
        "SELECT b.id, b.tenant_id, b.knowledge_space_id, b.run_state, b.checkpoint, \
                b.total_documents, b.completed_documents \
         FROM legacy_space_publication_bootstraps b \
         WHERE ($1::text IS NULL OR b.tenant_id = $1) AND NOT ({KNOWN} AND {SANE}) \
         ORDER BY b.id LIMIT {UNREADABLE_LISTED}"
    )
}

/// One group of the summary.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct SummaryGroup {
    /// `None`: rows the console cannot read.
    pub(crate) class: Option<i32>,
    pub(crate) checkpoint: String,
    pub(crate) run_state: String,
    pub spaces: i64,
    pub(crate) remaining: i64,
    pub(crate) completed: i64,
}

pub async fn summary(
    conn: &mut PgConnection,
    tenant: Option<&str>,
    clock: &Clock,
) -> Result<Vec<SummaryGroup>, StoreError> {
    Ok(
        crate::store::sql::query_as(sqlx::AssertSqlSafe(summary_sql()))
            .bind(tenant)
            .bind(clock.now)
            .bind(clock.stuck_after_us)
            .bind(clock.heartbeat_late_fraction)
            .bind(clock.orphan_after_us)
            .bind(clock.reclaim_grace_us)
            .fetch_all(&mut *conn)
            .await?,
    )
}

/// A row the console cannot read: its id and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct UnreadableRow {
    pub(crate) id: Uuid,
    pub(crate) tenant_id: String,
    pub(crate) knowledge_space_id: Uuid,
    pub(crate) run_state: String,
    pub(crate) checkpoint: String,
    pub(crate) total_documents: i32,
    pub(crate) completed_documents: i32,
}

pub async fn unreadable(
    conn: &mut PgConnection,
    tenant: Option<&str>,
) -> Result<Vec<UnreadableRow>, StoreError> {
    Ok(
        crate::store::sql::query_as(sqlx::AssertSqlSafe(unreadable_sql()))
            .bind(tenant)
            .fetch_all(&mut *conn)
            .await?,
    )
}

/// A superset of the rows of attention class `class` (index into `Attention::ALL`), as SQL
/// an index can serve: the exact class needs the domain's judgement (of the lease, mostly).
fn superset(class: usize) -> String {
    let not_stuck = "b.updated_at > $2 - $3 * interval '1 microsecond'";
    match class {
        0 => "b.run_state = 'failed' AND b.lease_expires_at IS NULL".into(),
        // Blocked by an orphan suspect or by a writer at work: the lease tells them apart.
        1 | 6 => "b.run_state IN ('queued', 'running', 'canceled') \
              AND b.checkpoint = 'pending_snapshot' AND l.id IS NOT NULL"
            .into(),
        // Expired past the grace, or just expired: the clock tells them apart.
        2 | 4 => "b.run_state = 'running' AND b.lease_expires_at <= $2".into(),
        3 => "b.run_state IN ('running', 'queued') \
              AND b.updated_at <= $2 - $3 * interval '1 microsecond'"
            .into(),
        5 => format!(
            "b.run_state = 'running' AND b.lease_expires_at > $2 AND {not_stuck} AND {LATE}"
        ),
        7 => format!(
            "b.run_state = 'running' AND b.lease_expires_at > $2 AND {not_stuck} \
             AND NOT ({LATE})"
        ),
        8 => "b.run_state = 'queued' AND b.lease_expires_at IS NULL".into(),
        9 => "b.run_state = 'canceled' AND b.lease_expires_at IS NULL".into(),
        _ => "b.run_state = 'succeeded' AND b.lease_expires_at IS NULL".into(),
    }
}

/// One keyset page of class `class`, in `(updated_at, id)` order after `$7, $8`. Only the
/// blocked classes join the leases (to find their rows); the others take each space's lease from
/// the leases read once per report.
pub fn page_sql(class: usize) -> String {
    // A class of one non-running state reads the claim index in its own order: with
    // `run_state` and `lease_expires_at` (NULL) fixed, that order is `(updated_at, id)`. Saying
    // so in full lets the planner walk the index page after page instead of sorting the class.
    let order = if matches!(class, 0 | 8 | 9 | 10) {
        "b.run_state, b.lease_expires_at, b.updated_at, b.id"
    } else {
        "b.updated_at, b.id"
    };
    let from = if matches!(class, 1 | 6) {
        // Blocked rows are found from the (small) lease table, one index lookup each; the
        // `OFFSET 0` keeps the planner from trading the lookups for a scan of every row.
        "FROM knowledge_space_mutation_leases l CROSS JOIN LATERAL ( \
           SELECT * FROM legacy_space_publication_bootstraps b \
           WHERE b.tenant_id = l.tenant_id AND b.knowledge_space_id = l.knowledge_space_id \
           OFFSET 0) b"
    } else {
        "FROM legacy_space_publication_bootstraps b"
    };
    format!(
        "SELECT {columns} {from} \
         WHERE ($1::text IS NULL OR b.tenant_id = $1) \
           AND ($5::text[] IS NULL OR b.run_state = ANY($5)) \
           AND ($6::text[] IS NULL OR b.checkpoint = ANY($6)) \
           AND {superset} \
           AND ($7::timestamptz IS NULL OR (b.updated_at, b.id) > ($7, $8)) \
         ORDER BY {order} LIMIT $9",
        columns = board_columns(Columns::Report),
        superset = superset(class),
    )
}

/// Where the next page of a class starts.
pub(crate) type Keyset = Option<(DateTime<Utc>, Uuid)>;

/// One page of class `class` after `after`; the page is full when it has `limit` rows.
pub(crate) async fn page(
    conn: &mut PgConnection,
    narrowing: &Narrowing,
    clock: &Clock,
    class: usize,
    after: Keyset,
    limit: i64,
) -> Result<Vec<BoardRecord>, StoreError> {
    Ok(
        crate::store::sql::query_as(sqlx::AssertSqlSafe(page_sql(class)))
            .bind(narrowing.tenant.as_deref())
            .bind(clock.now)
            .bind(clock.stuck_after_us)
            .bind(clock.heartbeat_late_fraction)
            .bind(narrowing.run_states.as_deref())
            .bind(narrowing.checkpoints.as_deref())
            .bind(after.map(|(at, _)| at))
            .bind(after.map(|(_, id)| id))
            .bind(limit)
            .fetch_all(&mut *conn)
            .await?,
    )
}
