//! Finding out what became of a request whose answer never came (a deadline passed, the
//! operator stopped waiting, the connection was lost). On a connection of its own — the pool's
//! may be the one that is stuck — it takes the same row lock the request took, so it cannot
//! overtake a transaction still committing, then looks for the request id in the audit table.

use std::time::Duration;

use sqlx::{Connection, PgConnection};
use uuid::Uuid;

use super::StoreError;
use super::connect::{ConnectError, Target};
use super::write::AuditSubject;

/// SQLSTATE of a lock wait that ran out (`lock_timeout`).
const LOCK_NOT_AVAILABLE: &str = "55P03";

/// An open lookup: its own connection, inside a transaction that is always rolled back.
pub struct LookupTx {
    conn: PgConnection,
}

impl LookupTx {
    pub async fn open(target: &Target) -> Result<Self, ConnectError> {
        let mut conn = target.connect().await?;
        sqlx::raw_sql("BEGIN READ WRITE")
            .execute(&mut conn)
            .await
            .map_err(|e| ConnectError::Unreachable {
                target: target.to_string(),
                reason: e.to_string(),
            })?;
        Ok(Self { conn })
    }

    /// Asks the abandoned request's own backend to end: whatever it had not committed rolls
    /// back, and it cannot commit later behind the operator's back.
    pub async fn end_backend(&mut self, pid: i32) -> Result<(), StoreError> {
        sqlx::query("SELECT pg_terminate_backend($1)")
            .bind(pid)
            .execute(&mut self.conn)
            .await?;
        Ok(())
    }

    /// Takes the row lock the request took, waiting at most `wait`; `false` when another
    /// transaction still holds it. A row that no longer exists needs no lock.
    pub async fn lock(
        &mut self,
        subject: AuditSubject,
        wait: Duration,
    ) -> Result<bool, StoreError> {
        let timeout = format!("SET LOCAL lock_timeout = '{}ms'", wait.as_millis());
        sqlx::raw_sql(sqlx::AssertSqlSafe(timeout))
            .execute(&mut self.conn)
            .await?;
        let (sql, id) = match subject {
            AuditSubject::Bootstrap(id) => (
                "SELECT 1 FROM legacy_space_publication_bootstraps WHERE id = $1 FOR UPDATE",
                id,
            ),
            AuditSubject::Lease(id) => (
                "SELECT 1 FROM knowledge_space_mutation_leases WHERE id = $1 FOR UPDATE",
                id,
            ),
        };
        match sqlx::query(sql).bind(id).execute(&mut self.conn).await {
            Ok(_) => Ok(true),
            Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(LOCK_NOT_AVAILABLE) => {
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The audit record of the request, if it was applied. (After a refused lock the
    /// transaction is aborted; this is only asked with the lock held.)
    pub async fn audit_of_request(&mut self, request_id: Uuid) -> Result<Option<i64>, StoreError> {
        super::read::audit_of_request(&mut self.conn, request_id).await
    }

    /// Whether `pid` is still inside a transaction, after waiting up to `wait` for it to end.
    pub async fn backend_still_open(
        &mut self,
        pid: i32,
        wait: Duration,
    ) -> Result<bool, StoreError> {
        let started = std::time::Instant::now();
        loop {
            let open: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM pg_stat_activity \
                                WHERE pid = $1 AND xact_start IS NOT NULL)",
            )
            .bind(pid)
            .fetch_one(&mut self.conn)
            .await?;
            if !open || started.elapsed() >= wait {
                return Ok(open);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn close(mut self) {
        let _ = sqlx::raw_sql("ROLLBACK").execute(&mut self.conn).await;
        let _ = self.conn.close().await;
    }
}
