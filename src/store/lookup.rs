//! Finding out what became of a request whose answer never came (a deadline passed, the
//! operator stopped waiting, the connection was lost). On a connection of its own — the pool's
//! may be the one that is stuck — it ends exactly the abandoned transaction and waits for it to
//! be over, or waits until the row the request would have locked is free (so it cannot overtake
//! a transaction still committing), then looks for the action's id in the audit table.

use std::time::Duration;

use sqlx::{Connection, PgConnection};
use uuid::Uuid;

use super::StoreError;
use super::connect::{ConnectError, Target};
use super::db::TxKind;
use super::write::{AuditSubject, Backend};

/// An open lookup: its own connection. Each check of the server's activity is a transaction
/// of its own (activity is read once per transaction, and behind a transaction pooler only a
/// transaction keeps an unnamed statement's two round trips on one server connection); the
/// wait for the row and the search after it share a transaction that is always rolled back.
pub(crate) struct LookupTx {
    conn: PgConnection,
    /// Whether the row wait's transaction was begun (and must be rolled back).
    locking: bool,
    /// What the row wait found of the action, when it got the row.
    found_under_lock: Option<Option<i64>>,
}

impl LookupTx {
    pub async fn open(target: &Target) -> Result<Self, ConnectError> {
        Ok(Self {
            conn: target.connect().await?,
            locking: false,
            found_under_lock: None,
        })
    }

    /// Asks the abandoned transaction's backend to end — only while it is still in that very
    /// transaction, never a later one the connection went on to serve. Whatever it had not
    /// committed rolls back; it cannot commit later behind the operator's back.
    pub(crate) async fn end_transaction(&mut self, backend: Backend) -> Result<(), StoreError> {
        self.begin_read().await?;
        let ended = crate::store::sql::query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE pid = $1 AND xact_start = $2",
        )
        .bind(backend.pid)
        .bind(backend.xact_start)
        .execute(&mut self.conn)
        .await;
        self.end_read(ended).await?;
        Ok(())
    }

    /// Whether `backend` is still inside the abandoned transaction, after waiting up to `wait`
    /// for it to end. A backend whose activity is not tracked (`track_activities` off) cannot
    /// be told apart from one still in it: it counts as open.
    pub(crate) async fn still_open(
        &mut self,
        backend: Backend,
        wait: Duration,
    ) -> Result<bool, StoreError> {
        let started = std::time::Instant::now();
        loop {
            self.begin_read().await?;
            let open = crate::store::sql::query_scalar::<bool>(
                "SELECT EXISTS (SELECT 1 FROM pg_stat_activity \
                                WHERE pid = $1 AND (xact_start = $2 OR state = 'disabled'))",
            )
            .bind(backend.pid)
            .bind(backend.xact_start)
            .fetch_one(&mut self.conn)
            .await;
            let open = self.end_read(open).await?;
            if !open || started.elapsed() >= wait {
                return Ok(open);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Opens a read transaction for one question (see [`Self::end_read`]).
    async fn begin_read(&mut self) -> Result<(), StoreError> {
        super::db::begin_on(&mut self.conn, TxKind::Read, None).await?;
        Ok(())
    }

    /// Ends the read transaction of one question and passes its answer on.
    async fn end_read<T, E>(&mut self, answer: Result<T, E>) -> Result<T, StoreError>
    where
        StoreError: From<E>,
    {
        let ended = sqlx::raw_sql("COMMIT").execute(&mut self.conn).await;
        let answer = answer?;
        ended?;
        Ok(answer)
    }

    /// Waits at most `wait` until no transaction holds the row the request locked, as the
    /// action would, and looks the action up under that lock (the database's function
    /// releases it at once); `false` when another transaction still holds the row. A row that
    /// no longer exists needs no wait.
    pub(crate) async fn lock(
        &mut self,
        subject: AuditSubject,
        action_id: Uuid,
        wait: Duration,
    ) -> Result<bool, StoreError> {
        super::db::begin_on(&mut self.conn, TxKind::Write, Some(wait)).await?;
        self.locking = true;
        let (sql, kind, id) = super::write::await_row(subject);
        let (free, audit_id): (bool, Option<i64>) = crate::store::sql::query_as(sql)
            .bind(kind)
            .bind(id)
            .bind(action_id)
            .fetch_one(&mut self.conn)
            .await?;
        if free {
            self.found_under_lock = Some(audit_id);
        }
        Ok(free)
    }

    /// The audit record of the request, if it was applied: as found under the row lock when
    /// [`Self::lock`] got it, else in a read transaction of its own.
    pub(crate) async fn audit_of_action(
        &mut self,
        action: (Uuid, &str, Uuid),
    ) -> Result<Option<i64>, StoreError> {
        if let Some(found) = self.found_under_lock {
            return Ok(found);
        }
        self.begin_read().await?;
        let found = super::read::audit_of_action(&mut self.conn, action).await;
        self.end_read(found).await
    }

    pub async fn close(mut self) {
        if self.locking {
            let _ = sqlx::raw_sql("ROLLBACK").execute(&mut self.conn).await;
        }
        let _ = self.conn.close().await;
    }
}
