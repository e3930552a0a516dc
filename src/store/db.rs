//! One server the console talks to, and the one way SQL runs on it: [`Db::begin`].
//!
//! A [`Db`] never changes: it is one host, its pool and the schema layout found there. When
//! the connections move (a failover, a standby that stops answering), the topology publishes
//! another `Db`; nothing holding the old one is surprised by a pool that changed under it.
//!
//! Every statement the console runs on a pool runs inside a transaction opened by
//! [`Db::begin`], whatever its kind: how a transaction opens (its isolation, read-only or not,
//! the settings a pooler needs per transaction) is decided here and nowhere else. The two
//! connections of their own — probing a listed host, looking an action's outcome up — open
//! theirs with [`begin_on`], from the same words. [`in_recovery`] asks whether a server is a
//! standby, for a host probed and for the topology's recheck alike.
//! [`read_tx!`] runs one read in such a transaction and ends it; [`read_retried!`] also reads
//! again while a standby's recovery conflicts cancel it. They are macros rather than
//! functions taking a closure because a future that borrows its connection through a closure
//! cannot be proven `Send` (the poller's reads run on spawned tasks).

use std::time::Duration;

use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use super::Layout;
use super::connect::Target;

/// One server: its host, a small pool of observer sessions on it, and its schema layout.
/// Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct Db {
    pool: PgPool,
    host: Target,
    layout: Layout,
    /// In recovery when connected to: a standby, where reads may meet recovery conflicts.
    standby: bool,
}

/// An open transaction (see [`Db::begin`]).
pub type Tx = Transaction<'static, Postgres>;

/// What a transaction is for, which decides how it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxKind {
    /// A read: the sessions default to read-only, so a read can never write by mistake.
    Read,
    /// A poll: every statement sees the same snapshot.
    Snapshot,
    /// An action. READ COMMITTED whatever the database's default: the audit chain's head is
    /// one row that every action moves, and under REPEATABLE READ two overlapping actions
    /// would fail on it.
    Write,
}

/// How long a statement may run before the server cancels it: a console never holds the
/// database hostage.
pub(crate) const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a statement waits for a lock: a worker holding a row must not freeze the console.
pub(crate) const LOCK_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a transaction may sit idle before the server ends it.
pub(crate) const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(60);

impl TxKind {
    fn begin(self) -> &'static str {
        match self {
            Self::Read => "BEGIN READ ONLY",
            Self::Snapshot => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            Self::Write => "BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE",
        }
    }

    /// The statements that open a transaction of this kind, sent as one message (one round
    /// trip). The limits are `SET LOCAL`, so they end with the transaction: no startup
    /// parameter is needed (a pooler refuses those it does not track), and a pooled server
    /// connection's next client never inherits them. Read-only comes from `BEGIN READ ONLY`
    /// itself: `SET LOCAL default_transaction_read_only` would leave this transaction
    /// writable. Every statement is planned for its actual parameters (see [`super::sql`]).
    pub(crate) fn opening(self, lock_wait: Duration) -> String {
        format!(
            "{}; SET LOCAL statement_timeout = {}; SET LOCAL lock_timeout = {}; \
             SET LOCAL idle_in_transaction_session_timeout = {}; \
             SET LOCAL plan_cache_mode = force_custom_plan",
            self.begin(),
            STATEMENT_TIMEOUT.as_millis(),
            lock_wait.as_millis(),
            IDLE_IN_TRANSACTION_TIMEOUT.as_millis()
        )
    }
}

impl Db {
    pub(super) fn new(pool: PgPool, host: Target, layout: Layout, standby: bool) -> Self {
        Self {
            pool,
            host,
            layout,
            standby,
        }
    }

    /// The same server, with what was found on it at connect.
    pub(super) fn found(self, layout: Layout, standby: bool) -> Self {
        Self {
            layout,
            standby,
            ..self
        }
    }

    /// Opens a transaction of `kind`: the only way the console starts one on a pool.
    pub async fn begin(&self, kind: TxKind) -> Result<Tx, sqlx::Error> {
        self.pool
            .begin_with(sqlx::AssertSqlSafe(kind.opening(LOCK_TIMEOUT)))
            .await
    }

    /// Whether the server answers within `within`.
    pub(crate) async fn answers(&self, within: Duration) -> bool {
        let asked = async { read_tx!(self, |c| crate::store::sql::query("SELECT 1").execute(c)) };
        matches!(tokio::time::timeout(within, asked).await, Ok(Ok(_)))
    }

    /// Whether the server is in recovery now; `None` when it does not answer within `within`.
    pub(crate) async fn in_recovery(&self, within: Duration) -> Option<bool> {
        let asked = async { read_tx!(self, |c| in_recovery(c)) };
        match tokio::time::timeout(within, asked).await {
            Ok(Ok(in_recovery)) => Some(in_recovery),
            _ => None,
        }
    }

    /// The host, as `user@host:port/database`.
    pub fn host(&self) -> &Target {
        &self.host
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Whether it was a standby when connected to.
    pub(crate) fn is_standby(&self) -> bool {
        self.standby
    }

    /// Whether `other` is a handle on the same server.
    pub(crate) fn same_host(&self, other: &Db) -> bool {
        self.host.to_string() == other.host.to_string()
    }

    /// Closes the pool's connections (see [`super::close_pool`]).
    pub async fn close(&self) {
        super::close_pool(&self.pool).await;
    }
}

/// Whether the limits a write transaction opened with are the ones the server keeps
/// (`lock_ms`, `statement_ms`, as `pg_settings` shows them): a limit that is off (0) or longer
/// than asked is refused with a sentence.
pub(crate) fn limits_in_force(lock_ms: i64, statement_ms: i64) -> Result<(), String> {
    let kept =
        |in_force: i64, asked: Duration| in_force > 0 && in_force as u128 <= asked.as_millis();
    let mut off = Vec::new();
    for (name, in_force, asked) in [
        ("lock_timeout", lock_ms, LOCK_TIMEOUT),
        ("statement_timeout", statement_ms, STATEMENT_TIMEOUT),
    ] {
        if !kept(in_force, asked) {
            off.push(format!(
                "{name} is {in_force} ms, not {} ms",
                asked.as_millis()
            ));
        }
    }
    if off.is_empty() {
        return Ok(());
    }
    Err(format!(
        "this transaction's limits are not in force ({}): nothing was written — a pooler or \
         proxy in front of the database may be dropping SET LOCAL",
        off.join(", ")
    ))
}

/// Ends a read transaction and passes `outcome` on. A failed statement has aborted it: it is
/// ended either way, and the statement's error comes first.
pub(crate) async fn ended<T, E: From<sqlx::Error>>(tx: Tx, outcome: Result<T, E>) -> Result<T, E> {
    let ended = tx.commit().await;
    let value = outcome?;
    ended?;
    Ok(value)
}

/// Opens a transaction of `kind` on a connection of its own (no pool), as [`Db::begin`] opens
/// one, its lock waits bounded by `lock_wait` when given. The caller ends it.
pub(crate) async fn begin_on(
    conn: &mut PgConnection,
    kind: TxKind,
    lock_wait: Option<Duration>,
) -> Result<(), sqlx::Error> {
    let opening = kind.opening(lock_wait.unwrap_or(LOCK_TIMEOUT));
    sqlx::raw_sql(sqlx::AssertSqlSafe(opening))
        .execute(conn)
        .await?;
    Ok(())
}

/// Whether the server `conn` is on is in recovery (a standby): the topology's recheck of its
/// primary. A listed host probed on its own is asked more (see `store::primaries`).
pub(crate) async fn in_recovery(conn: &mut PgConnection) -> Result<bool, sqlx::Error> {
    crate::store::sql::query_scalar("SELECT pg_is_in_recovery()")
        .fetch_one(conn)
        .await
}

/// `read_tx!(db, |conn| statement)`: awaits `statement` — which uses `conn`, a
/// `&mut PgConnection` — in a read-only transaction on `db` ([`Db::begin`]), and ends it.
macro_rules! read_tx {
    // `match`, not `let`: a temporary in `$db` lives as long as the transaction.
    ($db:expr, |$conn:ident| $read:expr) => {
        match $db {
            db => match $crate::store::Db::begin(db, $crate::store::db::TxKind::Read).await {
                Err(e) => Err(e.into()),
                Ok(mut tx) => {
                    let outcome = {
                        let $conn: &mut sqlx::PgConnection = &mut tx;
                        $read.await
                    };
                    $crate::store::db::ended(tx, outcome).await
                }
            },
        }
    };
}
pub(crate) use read_tx;

/// `read_retried!(db, "what", |conn| statement)`: [`read_tx!`], read again while recovery
/// conflicts on a standby cancel it (see [`crate::store::conflict`]).
macro_rules! read_retried {
    ($db:expr, $what:expr, |$conn:ident| $read:expr) => {
        match $db {
            db => {
                let mut retry = $crate::store::conflict::ConflictRetry::new(db);
                loop {
                    let outcome = $crate::store::db::read_tx!(db, |$conn| $read);
                    match outcome {
                        Err(e) if retry.again(&e, $what).await => {}
                        done => break done,
                    }
                }
            }
        }
    };
}
pub(crate) use read_retried;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_needs_its_lock_and_statement_timeouts_in_force() {
        assert_eq!(limits_in_force(5000, 10_000), Ok(()));
        // Stricter than asked is still bounded.
        assert_eq!(limits_in_force(1000, 10_000), Ok(()));
        let off = limits_in_force(0, 10_000).expect_err("no lock timeout");
        assert!(off.contains("lock_timeout is 0 ms, not 5000 ms"), "{off}");
        assert!(off.contains("nothing was written"), "{off}");
        let long = limits_in_force(5000, 600_000).expect_err("a longer statement timeout");
        assert!(long.contains("statement_timeout is 600000 ms"), "{long}");
    }

    #[test]
    fn a_transaction_opens_in_one_message_with_its_limits() {
        let opening = TxKind::Read.opening(LOCK_TIMEOUT);
        assert!(opening.starts_with("BEGIN READ ONLY; "), "{opening}");
        for limit in [
            "SET LOCAL statement_timeout = 10000",
            "SET LOCAL lock_timeout = 5000",
            "SET LOCAL idle_in_transaction_session_timeout = 60000",
        ] {
            assert!(opening.contains(limit), "{opening}");
        }
        assert!(
            TxKind::Write
                .opening(LOCK_TIMEOUT)
                .starts_with("BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE; ")
        );
    }
}
