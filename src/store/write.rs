//! The only statements that write: one [`WriteTx`] per operator action.
//!
//! The domain opens the transaction, locks the row it is about to change, decides from what it
//! sees whether the action still applies, writes, appends the audit record and commits — or
//! rolls back and writes nothing. Each statement here is one step of that sequence.

use std::sync::Mutex;

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{FromRow, Postgres, Row, Transaction};
use uuid::Uuid;

use super::audit_chain::ChainHead;
use super::db::{Db, TxKind};
use super::read::{BOOTSTRAP_COLUMNS, lease_columns};
use super::rows::{BootstrapRow, LeaseRow};
use super::{Layout, StoreError};

/// The bootstrap columns an action writes (retry and cancel): the operator role's UPDATE grant
/// on the bootstrap table is exactly these.
pub(crate) const BOOTSTRAP_UPDATED_COLUMNS: [&str; 10] = [
    "run_state",
    "worker_id",
    "lease_token",
    "lease_expires_at",
    "heartbeat_at",
    "completed_at",
    "last_error_code",
    "last_error_message",
    "row_version",
    "updated_at",
];

/// The item columns a retry writes.
pub(crate) const ITEM_UPDATED_COLUMNS: [&str; 4] = [
    "status",
    "compilation_attempt_id",
    "last_error",
    "updated_at",
];

/// The audit columns a console fills in; the database fills in the rest (the id, the time and
/// the chain).
pub(crate) const AUDIT_INSERTED_COLUMNS: [&str; 14] = [
    "actor",
    "host",
    "ssh_client",
    "action",
    "tenant_id",
    "knowledge_space_id",
    "bootstrap_id",
    "lease_id",
    "request_id",
    "action_id",
    "reason",
    "row_before",
    "row_after",
    "outcome",
];

/// A row as locked or written, with its JSON image for the audit record.
#[derive(Debug, Clone)]
pub(crate) struct Locked<T> {
    pub row: T,
    pub(crate) json: serde_json::Value,
}

impl<T: for<'r> FromRow<'r, PgRow>> Locked<T> {
    fn from_pg(row: &PgRow) -> Result<Self, sqlx::Error> {
        Ok(Self {
            row: T::from_row(row)?,
            json: row.try_get("row_json")?,
        })
    }
}

/// What an audit record is about: a bootstrap (retry, cancel) or a mutation lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuditSubject {
    Bootstrap(Uuid),
    Lease(Uuid),
}

/// How an action was applied (the audit table's CHECK lists these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditOutcome {
    Applied,
    /// A safeguard was overridden on purpose (a lease that was not an orphan suspect).
    AppliedForced,
}

impl AuditOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::AppliedForced => "applied_forced",
        }
    }
}

/// One audit record to append.
#[derive(Debug, Clone)]
pub(crate) struct NewAudit<'a> {
    pub actor: &'a str,
    pub(crate) host: &'a str,
    pub(crate) ssh_client: Option<&'a str>,
    pub(crate) action: &'a str,
    pub(crate) tenant_id: &'a str,
    pub(crate) knowledge_space_id: Uuid,
    pub(crate) subject: AuditSubject,
    /// The operator's request, as printed.
    pub(crate) request_id: Uuid,
    /// Unique: the same action of a request applied once is never applied again.
    pub(crate) action_id: Uuid,
    pub(crate) reason: &'a str,
    pub(crate) row_before: Option<&'a serde_json::Value>,
    pub(crate) row_after: Option<&'a serde_json::Value>,
    pub(crate) outcome: AuditOutcome,
}

/// The server process of an action's transaction and the moment that transaction began:
/// enough to end exactly that transaction later, never a later one on the same connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backend {
    pub pid: i32,
    pub xact_start: DateTime<Utc>,
}

/// Where [`WriteTx::begin`] writes its [`Backend`] as soon as it is known.
#[derive(Debug, Default)]
pub(crate) struct BackendSlot(Mutex<Option<Backend>>);

impl BackendSlot {
    pub fn get(&self) -> Option<Backend> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, backend: Backend) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(backend);
    }
}

/// An open read-write transaction. Dropping it without `commit` rolls back.
pub(crate) struct WriteTx {
    tx: Transaction<'static, Postgres>,
    layout: Layout,
}

impl WriteTx {
    /// A write transaction ([`TxKind::Write`]): the pool's sessions default to read-only, so
    /// writing is explicit. Its server process and start are written to `backend` at once, so that a caller who
    /// stops waiting can still find exactly this transaction.
    pub(crate) async fn begin(db: &Db, backend: &BackendSlot) -> Result<Self, StoreError> {
        let mut tx = db.begin(TxKind::Write).await?;
        // `now()` is the transaction's start, as `pg_stat_activity.xact_start` shows it.
        let (pid, xact_start): (i32, DateTime<Utc>) =
            sqlx::query_as("SELECT pg_backend_pid(), now()")
                .fetch_one(&mut *tx)
                .await?;
        backend.set(Backend { pid, xact_start });
        Ok(Self {
            tx,
            layout: *db.layout(),
        })
    }

    /// The database clock of this transaction.
    pub async fn now(&mut self) -> Result<DateTime<Utc>, StoreError> {
        Ok(sqlx::query_scalar("SELECT now()")
            .fetch_one(&mut *self.tx)
            .await?)
    }

    /// Locks one bootstrap row for the rest of the transaction.
    pub(crate) async fn lock_bootstrap(
        &mut self,
        id: Uuid,
    ) -> Result<Option<Locked<BootstrapRow>>, StoreError> {
        let sql = format!(
            "SELECT {BOOTSTRAP_COLUMNS}, to_jsonb(b) AS row_json \
             FROM legacy_space_publication_bootstraps b WHERE b.id = $1 FOR UPDATE"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&mut *self.tx)
            .await?;
        Ok(row.as_ref().map(Locked::from_pg).transpose()?)
    }

    /// Retry (domain contract §3), job row: back to `queued` in place, keeping the checkpoint.
    pub(crate) async fn retry_bootstrap(
        &mut self,
        id: Uuid,
    ) -> Result<Locked<BootstrapRow>, StoreError> {
        let sql = format!(
            "UPDATE legacy_space_publication_bootstraps AS b SET \
               run_state = 'queued', worker_id = NULL, lease_token = NULL, \
               lease_expires_at = NULL, heartbeat_at = NULL, completed_at = NULL, \
               last_error_code = NULL, last_error_message = NULL, \
               row_version = b.row_version + 1, updated_at = now() \
             WHERE b.id = $1 \
             RETURNING {BOOTSTRAP_COLUMNS}, to_jsonb(b) AS row_json"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_one(&mut *self.tx)
            .await?;
        Ok(Locked::from_pg(&row)?)
    }

    /// Retry (domain contract §3), items: failed or running items go back to pending.
    pub(crate) async fn reset_items_for_retry(
        &mut self,
        bootstrap_id: Uuid,
    ) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "UPDATE legacy_space_publication_bootstrap_items SET \
               status = 'pending', compilation_attempt_id = NULL, last_error = NULL, \
               updated_at = now() \
             WHERE bootstrap_id = $1 AND status IN ('failed', 'running')",
        )
        .bind(bootstrap_id)
        .execute(&mut *self.tx)
        .await?;
        Ok(done.rows_affected())
    }

    /// Cancel (domain contract §3): `canceled`, lease cleared (which fences out a live worker).
    pub(crate) async fn cancel_bootstrap(
        &mut self,
        id: Uuid,
        error_code: &str,
        reason: &str,
    ) -> Result<Locked<BootstrapRow>, StoreError> {
        let sql = format!(
            "UPDATE legacy_space_publication_bootstraps AS b SET \
               run_state = 'canceled', worker_id = NULL, lease_token = NULL, \
               lease_expires_at = NULL, heartbeat_at = NULL, completed_at = now(), \
               last_error_code = $2, last_error_message = $3, \
               row_version = b.row_version + 1, updated_at = now() \
             WHERE b.id = $1 \
             RETURNING {BOOTSTRAP_COLUMNS}, to_jsonb(b) AS row_json"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .bind(error_code)
            .bind(reason)
            .fetch_one(&mut *self.tx)
            .await?;
        Ok(Locked::from_pg(&row)?)
    }

    /// Deletes one mutation lease and returns it as it was: the row lock a removal needs is
    /// the one its DELETE takes, so the DELETE grant is all it asks for (`FOR UPDATE` would
    /// need UPDATE). The caller decides on the returned row and rolls back if the removal no
    /// longer holds.
    pub(crate) async fn take_lease(
        &mut self,
        id: Uuid,
    ) -> Result<Option<Locked<LeaseRow>>, StoreError> {
        let sql = format!(
            "DELETE FROM knowledge_space_mutation_leases l WHERE l.id = $1 \
             RETURNING {}, to_jsonb(l) AS row_json",
            lease_columns(&self.layout)
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&mut *self.tx)
            .await?;
        Ok(row.as_ref().map(Locked::from_pg).transpose()?)
    }

    /// The lease now on a space (to tell the operator what replaced the one they saw).
    pub(crate) async fn lease_of_space(
        &mut self,
        tenant: &str,
        space: Uuid,
    ) -> Result<Option<LeaseRow>, StoreError> {
        super::read::lease_of_space(&mut *self.tx, &self.layout, tenant, space).await
    }

    /// The audit record of an applied request, if this request id was applied before.
    pub(crate) async fn audit_of_action(
        &mut self,
        action_id: Uuid,
    ) -> Result<Option<i64>, StoreError> {
        super::read::audit_of_action(&mut *self.tx, action_id).await
    }

    /// Appends the audit record of this action; returns it as the chain's new head. The
    /// database chains it (console schema unit 0004) under the head's row lock, held until
    /// this transaction ends, which is why this is the transaction's last statement: another
    /// console's action waits for it only from here to COMMIT, and at most the lock timeout.
    pub(crate) async fn insert_audit(
        &mut self,
        record: &NewAudit<'_>,
    ) -> Result<ChainHead, StoreError> {
        let (bootstrap_id, lease_id) = match record.subject {
            AuditSubject::Bootstrap(id) => (Some(id), None),
            AuditSubject::Lease(id) => (None, Some(id)),
        };
        let sql = format!(
            "INSERT INTO bootstrap_console.audit_log ({}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
             RETURNING id, chain_seq, hash",
            AUDIT_INSERTED_COLUMNS.join(", ")
        );
        let inserted: Result<(i64, i64, Vec<u8>), sqlx::Error> =
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(record.actor)
                .bind(record.host)
                .bind(record.ssh_client)
                .bind(record.action)
                .bind(record.tenant_id)
                .bind(record.knowledge_space_id)
                .bind(bootstrap_id)
                .bind(lease_id)
                .bind(record.request_id)
                .bind(record.action_id)
                .bind(record.reason)
                .bind(record.row_before)
                .bind(record.row_after)
                .bind(record.outcome.as_str())
                .fetch_one(&mut *self.tx)
                .await;
        match inserted {
            Ok((id, seq, hash)) => Ok(ChainHead { id, seq, hash }),
            // The row is already ours: what this statement waits for is the chain's head (or
            // the audit table itself, under a schema change).
            Err(e) if super::is_lock_timeout(&e) => Err(StoreError::AuditChainBusy {
                // The chain's trigger names the holder; a lock on the table itself (a schema
                // change) has only the server's generic words.
                holder: e
                    .as_database_error()
                    .map(|d| d.message().to_string())
                    .filter(|m| m.starts_with("held by "))
                    .unwrap_or_else(|| "held by another transaction".into()),
            }),
            Err(e) => Err(e.into()),
        }
    }

    pub(crate) async fn commit(self) -> Result<(), StoreError> {
        Ok(self.tx.commit().await?)
    }

    pub(crate) async fn rollback(self) -> Result<(), StoreError> {
        Ok(self.tx.rollback().await?)
    }
}
