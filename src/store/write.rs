//! The only statements that write: one call per operator action.
//!
//! [`write_bootstrap`] (retry, cancel) and [`remove_lease`] each run one transaction: lock the
//! row, look the request id up, hand the locked row to the caller's decision, write, append
//! the audit record and commit — or roll back and write nothing. The decision is the domain's
//! (a pure function of the locked row); the statements, their order and how the transaction
//! ends are this module's, so moving an action into a SQL function is a change here alone.

use std::sync::Mutex;

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{FromRow, Postgres, Row, Transaction};
use uuid::Uuid;

use super::audit_chain::ChainHead;
use super::db::{Db, TxKind};
use super::locks::RowOf;
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
    /// Written to the primary `--primary` named, past the split-brain guard.
    AppliedPrimaryForced,
    /// Both: a forced lease removal on a forced primary.
    AppliedForcedPrimaryForced,
}

impl AuditOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::AppliedForced => "applied_forced",
            Self::AppliedPrimaryForced => "applied_primary_forced",
            Self::AppliedForcedPrimaryForced => "applied_forced_primary_forced",
        }
    }

    /// Whether a recorded outcome overrode a safeguard (any of the forced ones).
    pub fn is_forced(recorded: &str) -> bool {
        recorded.starts_with("applied_") && recorded.contains("forced")
    }
}

/// Who asks for an action, and which request it is: what every audit record of it carries
/// besides the row (which the store takes from the row it locked).
#[derive(Debug, Clone)]
pub(crate) struct Stamp<'a> {
    pub(crate) actor: &'a str,
    pub(crate) host: &'a str,
    pub(crate) ssh_client: Option<&'a str>,
    /// The action's name as the audit table records it.
    pub(crate) action: &'a str,
    /// The operator's request, as printed.
    pub(crate) request_id: Uuid,
    /// Unique: the same action of a request applied once is never applied again.
    pub(crate) action_id: Uuid,
    pub(crate) reason: &'a str,
    /// The cluster and timeline the split-brain guard approved: each write transaction checks
    /// it lands there (`None`: not checked).
    pub(crate) lineage: Option<crate::topology::Lineage>,
    /// `--primary` named the primary: the record's outcome says so.
    pub(crate) primary_forced: bool,
}

impl Stamp<'_> {
    /// How an action applied as `outcome` is recorded, a forced primary included.
    fn recorded(&self, outcome: AuditOutcome) -> AuditOutcome {
        match (self.primary_forced, outcome) {
            (false, outcome) => outcome,
            (true, AuditOutcome::Applied) => AuditOutcome::AppliedPrimaryForced,
            (true, _) => AuditOutcome::AppliedForcedPrimaryForced,
        }
    }
}

/// One audit record to append.
struct NewAudit<'a> {
    stamp: &'a Stamp<'a>,
    tenant_id: &'a str,
    knowledge_space_id: Uuid,
    subject: AuditSubject,
    row_before: &'a serde_json::Value,
    row_after: Option<&'a serde_json::Value>,
    outcome: AuditOutcome,
}

/// What one action's call found, and what it did.
#[derive(Debug)]
pub(crate) enum Written<Gone, Declined, Done> {
    /// This request was applied before (the audit record's id): nothing written.
    AppliedBefore(i64),
    /// The row is not there (with what the caller needs to say so): nothing written.
    Gone(Gone),
    /// The caller's decision declined the locked row: nothing written.
    Declined(Declined),
    /// Written, audited and committed.
    Applied(Done),
}

/// What a bootstrap action writes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum BootstrapWrite<'a> {
    /// Back to `queued` in place; failed or running items back to pending.
    Retry,
    /// `canceled` with this error code and message; the worker's lease cleared.
    Cancel {
        error_code: &'a str,
        message: &'a str,
    },
}

/// A bootstrap action as committed.
#[derive(Debug)]
pub(crate) struct BootstrapWritten<D> {
    /// What the caller's decision said.
    pub(crate) decided: D,
    pub(crate) before: Locked<BootstrapRow>,
    pub(crate) after: Locked<BootstrapRow>,
    /// Items sent back to pending (retry).
    pub(crate) items_reset: u64,
    pub(crate) head: ChainHead,
}

/// A lease removal as committed.
#[derive(Debug)]
pub(crate) struct LeaseRemoved<D> {
    pub(crate) decided: D,
    pub(crate) before: Locked<LeaseRow>,
    pub(crate) head: ChainHead,
}

/// Retry or cancel bootstrap `id` in one transaction. `decide` sees the locked row (after the
/// request id was looked up under that lock) with the database's verdict on the action `seen`
/// describes (see [`super::rules`]), and says whether to write; `Err` declines it and nothing
/// is written.
pub(crate) async fn write_bootstrap<D, R>(
    db: &Db,
    backend: &BackendSlot,
    (id, seen): (Uuid, &super::rules::BootstrapSeen<'_>),
    write: BootstrapWrite<'_>,
    stamp: &Stamp<'_>,
    decide: impl FnOnce(&BootstrapRow, Option<&str>) -> Result<D, R>,
) -> Result<Written<(), R, BootstrapWritten<D>>, StoreError> {
    let mut tx = WriteTx::begin(db, backend, stamp.lineage).await?;
    let written = async {
        let locked = tx.lock_bootstrap(id, seen).await?;
        // After the row lock, so a first attempt still committing is waited for, not overtaken.
        if let Some(audit_id) = tx.audit_of_action(stamp.action_id).await? {
            return Ok(Written::AppliedBefore(audit_id));
        }
        let Some((before, refusal)) = locked else {
            return Ok(Written::Gone(()));
        };
        let decided = match decide(&before.row, refusal.as_deref()) {
            Ok(decided) => decided,
            Err(declined) => return Ok(Written::Declined(declined)),
        };
        let (after, items_reset) = match write {
            BootstrapWrite::Retry => {
                let items_reset = tx.reset_items_for_retry(id).await?;
                (tx.retry_bootstrap(id).await?, items_reset)
            }
            BootstrapWrite::Cancel {
                error_code,
                message,
            } => (tx.cancel_bootstrap(id, error_code, message).await?, 0),
        };
        let head = tx
            .insert_audit(&NewAudit {
                stamp,
                tenant_id: &before.row.tenant_id,
                knowledge_space_id: before.row.knowledge_space_id,
                subject: AuditSubject::Bootstrap(id),
                row_before: &before.json,
                row_after: Some(&after.json),
                outcome: stamp.recorded(AuditOutcome::Applied),
            })
            .await?;
        Ok(Written::Applied(BootstrapWritten {
            decided,
            before,
            after,
            items_reset,
            head,
        }))
    }
    .await;
    let ended = tx.end(written).await;
    name_row_holder(db, ended, RowOf::Bootstrap, id).await
}

/// `ended`, with a row lock that ran out said as [`StoreError::RowLocked`], naming the
/// transaction that holds row `id` when the catalog tells.
async fn name_row_holder<T>(
    db: &Db,
    ended: Result<T, StoreError>,
    row: RowOf,
    id: Uuid,
) -> Result<T, StoreError> {
    match ended {
        Err(StoreError::Database(e)) if super::is_lock_timeout(&e) => Err(StoreError::RowLocked {
            holder: super::locks::row_holder(db, row, id).await,
        }),
        other => other,
    }
}

/// Remove mutation lease `id` in one transaction. `decide` sees the lease as it was, the
/// transaction's clock and the database's verdict on the removal `seen` describes (see
/// [`super::rules`]), and says how the removal is audited; `Err` declines it and the deletion
/// is rolled back. A lease already gone comes back with the lease now on its space.
pub(crate) async fn remove_lease<D, R>(
    db: &Db,
    backend: &BackendSlot,
    (id, seen): (Uuid, &super::rules::LeaseSeen<'_>),
    stamp: &Stamp<'_>,
    decide: impl FnOnce(&LeaseRow, DateTime<Utc>, Option<&str>) -> Result<(D, AuditOutcome), R>,
) -> Result<Written<Option<LeaseRow>, R, LeaseRemoved<D>>, StoreError> {
    let (tenant, space) = (seen.tenant_id, seen.knowledge_space_id);
    let mut tx = WriteTx::begin(db, backend, stamp.lineage).await?;
    let written = async {
        // Deleted first — the row lock comes with it — and decided on the row as it was:
        // anything declined below rolls the deletion back.
        let taken = tx.take_lease(id, seen).await?;
        // After the row lock, so a first attempt still committing is waited for, not overtaken.
        if let Some(audit_id) = tx.audit_of_action(stamp.action_id).await? {
            return Ok(Written::AppliedBefore(audit_id));
        }
        let Some((before, refusal)) = taken else {
            return Ok(Written::Gone(tx.lease_of_space(tenant, space).await?));
        };
        let now = tx.now().await?;
        let (decided, outcome) = match decide(&before.row, now, refusal.as_deref()) {
            Ok(decided) => decided,
            Err(declined) => return Ok(Written::Declined(declined)),
        };
        let head = tx
            .insert_audit(&NewAudit {
                stamp,
                tenant_id: &before.row.tenant_id,
                knowledge_space_id: before.row.knowledge_space_id,
                subject: AuditSubject::Lease(id),
                row_before: &before.json,
                row_after: None,
                outcome: stamp.recorded(outcome),
            })
            .await?;
        Ok(Written::Applied(LeaseRemoved {
            decided,
            before,
            head,
        }))
    }
    .await;
    let ended = tx.end(written).await;
    name_row_holder(db, ended, RowOf::Lease, id).await
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

/// The statement that takes the row lock an action on `subject` takes, taken the way it
/// takes it, for the lookup of an outcome left unknown (see [`super::lookup`]), whose
/// transaction is always rolled back. A lease's lock is its DELETE's, so the DELETE grant is
/// all it asks for.
pub(super) fn row_lock(subject: AuditSubject) -> (&'static str, Uuid) {
    match subject {
        AuditSubject::Bootstrap(id) => (
            "SELECT 1 FROM legacy_space_publication_bootstraps WHERE id = $1 FOR UPDATE",
            id,
        ),
        AuditSubject::Lease(id) => (
            "DELETE FROM knowledge_space_mutation_leases WHERE id = $1",
            id,
        ),
    }
}

/// Whether a write transaction is on the cluster and timeline the split-brain guard approved:
/// a virtual IP or a pooler may reach another server than the one the guard asked.
fn lineage_kept(
    approved: Option<crate::topology::Lineage>,
    system_id: Option<i64>,
    timeline: Option<u32>,
    address: &str,
) -> Result<(), StoreError> {
    let Some(approved) = approved else {
        return Ok(());
    };
    if system_id.is_none_or(|id| id == approved.system_id)
        && timeline.is_none_or(|t| t == approved.timeline)
    {
        return Ok(());
    }
    Err(StoreError::LineageChanged(format!(
        "the server behind {address} is not the one checked (system {}{}, checked: system {} \
         timeline {:08X}); nothing was written — run the request again",
        system_id.map_or_else(|| "unknown".to_string(), |id| id.to_string()),
        timeline.map_or(String::new(), |t| format!(" timeline {t:08X}")),
        approved.system_id,
        approved.timeline
    )))
}

/// An open read-write transaction. Dropping it without `end` rolls back.
struct WriteTx {
    tx: Transaction<'static, Postgres>,
    layout: Layout,
}

impl WriteTx {
    /// A write transaction ([`TxKind::Write`]). Its server process and start are written to
    /// `backend` at once, so that a caller who stops waiting can still find exactly this
    /// transaction. Nothing is written unless its lock and statement timeouts are in force:
    /// an action that could wait on a row without bound is refused before it locks one. Nor
    /// unless it is on the cluster and timeline `lineage` names, when given (see
    /// [`lineage_kept`]).
    async fn begin(
        db: &Db,
        backend: &BackendSlot,
        lineage: Option<crate::topology::Lineage>,
    ) -> Result<Self, StoreError> {
        let mut tx = db.begin(TxKind::Write).await?;
        // `now()` is the transaction's start, as `pg_stat_activity.xact_start` shows it. The
        // limits are read back as the server keeps them, in milliseconds. A standby has no
        // timeline of its own to write to: its write fails as on any standby.
        let sql = format!(
            "SELECT pg_backend_pid(), now(), \
               (SELECT setting::bigint FROM pg_settings WHERE name = 'lock_timeout'), \
               (SELECT setting::bigint FROM pg_settings WHERE name = 'statement_timeout'), \
               {}, {}",
            super::primaries::SYSTEM_ID,
            super::primaries::TIMELINE
        );
        let (pid, xact_start, lock_ms, statement_ms, system_id, timeline): (
            i32,
            DateTime<Utc>,
            i64,
            i64,
            Option<i64>,
            Option<String>,
        ) = crate::store::sql::query_as(sqlx::AssertSqlSafe(sql))
            .fetch_one(&mut *tx)
            .await?;
        backend.set(Backend { pid, xact_start });
        let timeline = timeline
            .as_deref()
            .map(super::primaries::timeline)
            .transpose();
        let refused = super::db::limits_in_force(lock_ms, statement_ms)
            .map_err(StoreError::LimitsNotInForce)
            .and(timeline)
            .and_then(|timeline| lineage_kept(lineage, system_id, timeline, &db.host().address()));
        if let Err(refused) = refused {
            let _ = tx.rollback().await;
            return Err(refused);
        }
        Ok(Self {
            tx,
            layout: *db.layout(),
        })
    }

    /// The database clock of this transaction.
    async fn now(&mut self) -> Result<DateTime<Utc>, StoreError> {
        Ok(crate::store::sql::query_scalar("SELECT now()")
            .fetch_one(&mut *self.tx)
            .await?)
    }

    /// Locks one bootstrap row for the rest of the transaction, with the database's verdict
    /// on the action `seen` describes over the locked row.
    async fn lock_bootstrap(
        &mut self,
        id: Uuid,
        seen: &super::rules::BootstrapSeen<'_>,
    ) -> Result<Option<(Locked<BootstrapRow>, Option<String>)>, StoreError> {
        let sql = format!(
            "SELECT {BOOTSTRAP_COLUMNS}, to_jsonb(b) AS row_json, {} \
             FROM legacy_space_publication_bootstraps b WHERE b.id = $1 FOR UPDATE",
            super::rules::BOOTSTRAP_REFUSAL
        );
        let query = crate::store::sql::query(sqlx::AssertSqlSafe(sql));
        let row = super::rules::bind_bootstrap(query, id, seen)
            .fetch_optional(&mut *self.tx)
            .await?;
        Ok(row
            .as_ref()
            .map(|row| Ok::<_, sqlx::Error>((Locked::from_pg(row)?, row.try_get("refusal")?)))
            .transpose()?)
    }

    /// Retry (domain contract §3), job row: back to `queued` in place, keeping the checkpoint.
    async fn retry_bootstrap(&mut self, id: Uuid) -> Result<Locked<BootstrapRow>, StoreError> {
        let sql = format!(
            "UPDATE legacy_space_publication_bootstraps AS b SET \
               run_state = 'queued', worker_id = NULL, lease_token = NULL, \
               lease_expires_at = NULL, heartbeat_at = NULL, completed_at = NULL, \
               last_error_code = NULL, last_error_message = NULL, \
               row_version = b.row_version + 1, updated_at = now() \
             WHERE b.id = $1 \
             RETURNING {BOOTSTRAP_COLUMNS}, to_jsonb(b) AS row_json"
        );
        let row = crate::store::sql::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_one(&mut *self.tx)
            .await?;
        Ok(Locked::from_pg(&row)?)
    }

    /// Retry (domain contract §3), items: failed or running items go back to pending.
    async fn reset_items_for_retry(&mut self, bootstrap_id: Uuid) -> Result<u64, StoreError> {
        let done = crate::store::sql::query(
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
    async fn cancel_bootstrap(
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
        let row = crate::store::sql::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .bind(error_code)
            .bind(reason)
            .fetch_one(&mut *self.tx)
            .await?;
        Ok(Locked::from_pg(&row)?)
    }

    /// Deletes one mutation lease and returns it as it was, with the database's verdict on
    /// the removal `seen` describes over it: the row lock a removal needs is the one its
    /// DELETE takes, so the DELETE grant is all it asks for (`FOR UPDATE` would need UPDATE).
    /// The caller decides on the returned row and rolls back if the removal no longer holds.
    async fn take_lease(
        &mut self,
        id: Uuid,
        seen: &super::rules::LeaseSeen<'_>,
    ) -> Result<Option<(Locked<LeaseRow>, Option<String>)>, StoreError> {
        let sql = format!(
            "DELETE FROM knowledge_space_mutation_leases l WHERE l.id = $1 \
             RETURNING {}, to_jsonb(l) AS row_json, {}",
            lease_columns(&self.layout),
            super::rules::lease_refusal(&self.layout)
        );
        let query = crate::store::sql::query(sqlx::AssertSqlSafe(sql));
        let row = super::rules::bind_lease(query, id, seen)
            .fetch_optional(&mut *self.tx)
            .await?;
        Ok(row
            .as_ref()
            .map(|row| Ok::<_, sqlx::Error>((Locked::from_pg(row)?, row.try_get("refusal")?)))
            .transpose()?)
    }

    /// The lease now on a space (to tell the operator what replaced the one they saw).
    async fn lease_of_space(
        &mut self,
        tenant: &str,
        space: Uuid,
    ) -> Result<Option<LeaseRow>, StoreError> {
        super::read::lease_of_space(&mut *self.tx, &self.layout, tenant, space).await
    }

    /// The audit record of an applied request, if this request id was applied before.
    async fn audit_of_action(&mut self, action_id: Uuid) -> Result<Option<i64>, StoreError> {
        super::read::audit_of_action(&mut *self.tx, action_id).await
    }

    /// Appends the audit record of this action; returns it as the chain's new head. The
    /// database chains it (console schema unit 0004) under the head's row lock, held until
    /// this transaction ends, which is why this is the transaction's last statement: another
    /// console's action waits for it only from here to COMMIT, and at most the lock timeout.
    async fn insert_audit(&mut self, record: &NewAudit<'_>) -> Result<ChainHead, StoreError> {
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
            crate::store::sql::query_as(sqlx::AssertSqlSafe(sql))
                .bind(record.stamp.actor)
                .bind(record.stamp.host)
                .bind(record.stamp.ssh_client)
                .bind(record.stamp.action)
                .bind(record.tenant_id)
                .bind(record.knowledge_space_id)
                .bind(bootstrap_id)
                .bind(lease_id)
                .bind(record.stamp.request_id)
                .bind(record.stamp.action_id)
                .bind(record.stamp.reason)
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

    /// Ends the transaction as `written` says — explicitly, an error included, so the
    /// connection goes back to the pool clean and is closed in good order at exit (the server
    /// never sees it vanish mid-reply): commit what was applied, roll back everything else.
    async fn end<G, R, D>(
        self,
        written: Result<Written<G, R, D>, StoreError>,
    ) -> Result<Written<G, R, D>, StoreError> {
        match written {
            Ok(written @ Written::Applied(_)) => {
                self.tx.commit().await?;
                Ok(written)
            }
            Ok(written) => {
                self.tx.rollback().await?;
                Ok(written)
            }
            Err(error) => {
                let _ = self.tx.rollback().await;
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::lineage_kept;
    use crate::topology::Lineage;

    #[test]
    fn a_write_lands_only_on_the_cluster_and_timeline_the_guard_approved() {
        let approved = Some(Lineage {
            system_id: 7,
            timeline: 2,
        });
        assert!(lineage_kept(approved, Some(7), Some(2), "vip:5432").is_ok());
        assert!(lineage_kept(None, Some(8), Some(1), "vip:5432").is_ok());
        // A standby has no timeline to write to: its write fails as on any standby.
        assert!(lineage_kept(approved, Some(7), None, "vip:5432").is_ok());
        let moved = lineage_kept(approved, Some(7), Some(1), "vip:5432")
            .expect_err("the old primary behind the address")
            .to_string();
        assert!(
            moved.contains("vip:5432 is not the one checked")
                && moved.contains("system 7 timeline 00000001")
                && moved.contains("checked: system 7 timeline 00000002"),
            "{moved}"
        );
        assert!(lineage_kept(approved, Some(9), Some(2), "vip:5432").is_err());
    }
}
