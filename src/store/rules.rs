//! The actions' rules as the database holds them (console schema unit 0005): the plan asks
//! them over the row it reads, the action over the row it locks, with the same expression.

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// What a bootstrap action rests on: the action and what the operator saw.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BootstrapSeen<'a> {
    /// `retry` or `cancel`, as the audit log names it.
    pub(crate) action: &'a str,
    pub(crate) run_state: &'a str,
    pub(crate) completed_at: Option<DateTime<Utc>>,
    /// `--row-version`: the row must still be at exactly this version.
    pub(crate) exact_row_version: Option<i32>,
}

/// The verdict over row `b`, its inputs bound as `$2`…`$5` (`$1` is the bootstrap's id).
pub(crate) const BOOTSTRAP_REFUSAL: &str = "bootstrap_console.bootstrap_action_refusal(\
    $2, $3, $4, $5, b.run_state::text, b.completed_at, b.row_version) AS refusal";

/// Binds `id` and what `seen` says, in the order [`BOOTSTRAP_REFUSAL`] reads them.
pub(crate) fn bind_bootstrap<'q>(
    query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    id: Uuid,
    seen: &BootstrapSeen<'q>,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    query
        .bind(id)
        .bind(seen.action)
        .bind(seen.run_state)
        .bind(seen.completed_at)
        .bind(seen.exact_row_version)
}

/// What a lease removal rests on: the lease the operator saw, whether they forced it, and the
/// orphan threshold judged by.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeaseSeen<'a> {
    pub(crate) tenant_id: &'a str,
    pub(crate) knowledge_space_id: Uuid,
    pub(crate) acquired_at: DateTime<Utc>,
    pub(crate) force: bool,
    pub(crate) orphan_after: chrono::Duration,
}

/// The verdict over lease row `l` as of the transaction's clock, its inputs bound as
/// `$2`…`$6` (`$1` is the lease's id).
pub(crate) fn lease_refusal(layout: &super::Layout) -> String {
    let (_, expires) = super::read::heartbeat_columns(layout);
    format!(
        "bootstrap_console.lease_removal_refusal($2, $3, $4, $5, l.tenant_id, \
         l.knowledge_space_id, l.acquired_at, {expires}, now(), \
         $6 * interval '1 microsecond') AS refusal"
    )
}

/// Binds `id` and what `seen` says, in the order [`lease_refusal`] reads them.
pub(crate) fn bind_lease<'q>(
    query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    id: Uuid,
    seen: &LeaseSeen<'q>,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    query
        .bind(id)
        .bind(seen.tenant_id)
        .bind(seen.knowledge_space_id)
        .bind(seen.acquired_at)
        .bind(seen.force)
        .bind(seen.orphan_after.num_microseconds().unwrap_or(i64::MAX))
}
