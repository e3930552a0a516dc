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
