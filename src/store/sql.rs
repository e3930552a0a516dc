//! How a statement is sent: as an unnamed statement, never a named prepared one.
//!
//! sqlx names its prepared statements `sqlx_s_N` per connection and keeps them on the server.
//! Behind a transaction pooler (PgBouncer's usual mode) the next transaction of the same
//! client may run on another server connection, where `sqlx_s_1` is already some other
//! client's statement (`42P05 prepared statement already exists`) — or not there at all. An
//! unnamed statement lives only until the next one, so nothing is left behind on any server
//! connection. It is safe only inside an explicit transaction: Parse/Describe and Bind/Execute
//! go in two round trips, and only a transaction keeps a pooler from handing the second to
//! another server connection. Every statement here runs in one ([`super::Db::begin`]).
//!
//! The cost is a parse per execution, which the console's statements — a few per poll — do
//! not notice; an unnamed statement is also planned for its actual parameters each time,
//! which is what a poll's `updated_at > $1` wants. These three functions are the only way
//! statements are built: `clippy.toml` disallows sqlx's own.

#![allow(clippy::disallowed_methods)]

use sqlx::postgres::{PgArguments, PgRow};
use sqlx::query::{Query, QueryAs, QueryScalar};
use sqlx::{FromRow, Postgres, SqlSafeStr};

/// `sqlx::query`, unnamed.
pub(crate) fn query<'q>(sql: impl SqlSafeStr) -> Query<'q, Postgres, PgArguments> {
    sqlx::query(sql).persistent(false)
}

/// `sqlx::query_as`, unnamed.
pub(crate) fn query_as<'q, O>(sql: impl SqlSafeStr) -> QueryAs<'q, Postgres, O, PgArguments>
where
    O: for<'r> FromRow<'r, PgRow>,
{
    sqlx::query_as(sql).persistent(false)
}

/// `sqlx::query_scalar`, unnamed.
pub(crate) fn query_scalar<'q, O>(sql: impl SqlSafeStr) -> QueryScalar<'q, Postgres, O, PgArguments>
where
    (O,): for<'r> FromRow<'r, PgRow>,
{
    sqlx::query_scalar(sql).persistent(false)
}
