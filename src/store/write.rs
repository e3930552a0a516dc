//! The only statements that write: one call of a database function per operator action.
//!
//! Retry, cancel and the removal of an orphaned lease are functions of the database (console
//! schema unit 0006): each locks its row, looks the request id up, judges the row by the
//! action's rule, applies and appends the audit record in that one call, and a call that does
//! not apply holds nothing. An operator role holds EXECUTE on them and no write grant on any
//! table. [`write_bootstrap`] and [`remove_lease`] each run one transaction around that call:
//! the lineage and limits checked first, the caller's decision over the row as the function
//! found it, then commit — or roll back and write nothing.

use std::sync::Mutex;

use chrono::{DateTime, Utc};
use sqlx::{FromRow, Postgres, Row, Transaction};
use uuid::Uuid;

use super::StoreError;
use super::audit_chain::ChainHead;
use super::db::{Db, TxKind};
use super::locks::RowOf;
use super::read::{BOOTSTRAP_COLUMNS, lease_columns};
use super::rows::{BootstrapRow, LeaseRow};

/// A row as locked or written, with its JSON image for the audit record.
#[derive(Debug, Clone)]
pub(crate) struct Locked<T> {
    pub row: T,
    pub(crate) json: serde_json::Value,
}

/// What an audit record is about: a bootstrap (retry, cancel) or a mutation lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuditSubject {
    Bootstrap(Uuid),
    Lease(Uuid),
}

/// Whether a recorded outcome overrode a safeguard: a lease that was not an orphan suspect
/// (`applied_forced`), the split-brain guard (`applied_primary_forced`), or both. The outcomes
/// are the database's to write (console schema units 0005 and 0006).
pub fn outcome_is_forced(recorded: &str) -> bool {
    recorded.starts_with("applied_") && recorded.contains("forced")
}

/// Who asks for an action, and which request it is: what every audit record of it carries
/// besides the row (which the database takes from the row it locked).
#[derive(Debug, Clone)]
pub(crate) struct Stamp<'a> {
    pub(crate) actor: &'a str,
    pub(crate) host: &'a str,
    pub(crate) ssh_client: Option<&'a str>,
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

/// What one action's call found, and what it did.
#[derive(Debug)]
pub(crate) enum Written<Gone, Declined, Done> {
    /// This request was applied before (the audit record's id): nothing written.
    AppliedBefore(i64),
    /// The row is not there (with what the caller needs to say so): nothing written.
    Gone(Gone),
    /// The database's rule or the caller's decision declined the row: nothing written.
    Declined(Declined),
    /// Written, audited and committed.
    Applied(Done),
}

/// A bootstrap action as committed.
#[derive(Debug)]
pub(crate) struct BootstrapWritten<D> {
    /// What the caller's decision said.
    pub(crate) decided: D,
    pub(crate) before: Locked<BootstrapRow>,
    /// The row as written, as its audit record keeps it.
    pub(crate) after: serde_json::Value,
    /// Items sent back to pending (retry).
    pub(crate) items_reset: i64,
    pub(crate) head: ChainHead,
}

/// A lease removal as committed.
#[derive(Debug)]
pub(crate) struct LeaseRemoved<D> {
    pub(crate) decided: D,
    pub(crate) before: Locked<LeaseRow>,
    pub(crate) head: ChainHead,
}

/// What every action function answers besides the row (console schema unit 0006).
#[derive(Debug, FromRow)]
struct Called {
    applied: bool,
    refusal: Option<String>,
    audit_id: Option<i64>,
    chain_seq: Option<i64>,
    chain_hash: Option<Vec<u8>>,
    row_json: Option<serde_json::Value>,
}

impl Called {
    /// The audit record it appended, when it applied.
    fn head(&self) -> Result<ChainHead, StoreError> {
        match (
            self.applied,
            self.audit_id,
            self.chain_seq,
            &self.chain_hash,
        ) {
            (true, Some(id), Some(seq), Some(hash)) => Ok(ChainHead {
                id,
                seq,
                hash: hash.clone(),
            }),
            _ => Err(StoreError::Disagreed(format!(
                "the database did not apply the action ({}) that its verdict allowed; nothing \
                 was written",
                self.refusal.as_deref().unwrap_or("no verdict")
            ))),
        }
    }
}

/// Retry or cancel bootstrap `id` in one transaction: one call of the action's function, which
/// locks the row, looks the request id up and judges the row by the action's rule (see
/// [`super::rules`]) before it writes. `decide` sees the row as the function found it and its
/// verdict; `Err` declines it, and nothing is written.
pub(crate) async fn write_bootstrap<D, R>(
    db: &Db,
    backend: &BackendSlot,
    (id, seen): (Uuid, &super::rules::BootstrapSeen<'_>),
    stamp: &Stamp<'_>,
    decide: impl FnOnce(&BootstrapRow, Option<&str>) -> Result<D, R>,
) -> Result<Written<(), R, BootstrapWritten<D>>, StoreError> {
    let mut tx = WriteTx::begin(db, backend, stamp.lineage).await?;
    let written = async {
        let function = match seen.action {
            "retry" => "retry_bootstrap",
            _ => "cancel_bootstrap",
        };
        let sql = format!(
            "SELECT f.applied, f.refusal, f.audit_id, f.chain_seq, f.chain_hash, \
               f.row_before AS row_json, f.row_after, f.items_reset, {BOOTSTRAP_COLUMNS} \
             FROM bootstrap_console.{function}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
               f \
             LEFT JOIN LATERAL jsonb_populate_record(\
               NULL::legacy_space_publication_bootstraps, f.row_before) b ON true"
        );
        let query = crate::store::sql::query(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .bind(seen.run_state)
            .bind(seen.completed_at)
            .bind(seen.exact_row_version);
        let (row, called) = tx.call(db, backend, bind_stamp(query, stamp)).await?;
        if called.refusal.as_deref() == Some("applied_before") {
            return Ok(Written::AppliedBefore(called.audit_id.unwrap_or_default()));
        }
        let Some(json) = called.row_json.clone() else {
            return Ok(Written::Gone(()));
        };
        let before = Locked {
            row: BootstrapRow::from_row(&row)?,
            json,
        };
        let decided = match decide(&before.row, called.refusal.as_deref()) {
            Ok(decided) => decided,
            Err(declined) => return Ok(Written::Declined(declined)),
        };
        let head = called.head()?;
        Ok(Written::Applied(BootstrapWritten {
            decided,
            before,
            after: row.try_get("row_after")?,
            items_reset: row.try_get("items_reset")?,
            head,
        }))
    }
    .await;
    let blocker = tx.blocker.take();
    let ended = tx.end(written).await;
    name_lock_holder(db, ended, (RowOf::Bootstrap, id), blocker).await
}

/// A statement with some of its arguments bound.
type Bound<'q> = sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>;

/// Binds what `stamp` tells an action function, after the subject's arguments, in the order
/// every action function takes it.
fn bind_stamp<'q>(query: Bound<'q>, stamp: &Stamp<'q>) -> Bound<'q> {
    query
        .bind(stamp.actor)
        .bind(stamp.host)
        .bind(stamp.ssh_client)
        .bind(stamp.request_id)
        .bind(stamp.action_id)
        .bind(stamp.reason)
        .bind(stamp.primary_forced)
}

/// How long into an action's lock wait its blocker is asked for: well before the lock timeout
/// ends the wait, leaving the question time to be answered.
const ASK_BLOCKER_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// How long the question may take: it must be answered while the call still waits.
const BLOCKER_ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_millis(2500);
const _: () = assert!(
    ASK_BLOCKER_AFTER.as_millis() + BLOCKER_ANSWER_WITHIN.as_millis()
        < super::db::LOCK_TIMEOUT.as_millis()
);

/// `call`, and who it waited behind when it waited long: asked from another session while it
/// still waits (see [`super::locks::blocker_of`]), within [`BLOCKER_ANSWER_WITHIN`].
async fn naming_the_blocker<T>(
    db: &Db,
    backend: &BackendSlot,
    call: impl std::future::Future<Output = T>,
) -> (T, Option<String>) {
    tokio::pin!(call);
    tokio::select! {
        done = &mut call => (done, None),
        () = tokio::time::sleep(ASK_BLOCKER_AFTER) => {
            let asked = async {
                super::locks::blocker_of(db, backend.get()?.pid).await
            };
            let blocker = tokio::time::timeout(BLOCKER_ANSWER_WITHIN, asked)
                .await
                .ok()
                .flatten();
            (call.await, blocker)
        }
    }
}

/// `ended`, with a lock wait that ran out said as what it waited for: the audit chain's head
/// (its trigger names the holder) or the action's row, naming the transaction that held it —
/// `blocker`, as asked while the call waited, else the row's locker as the catalog tells.
async fn name_lock_holder<T>(
    db: &Db,
    ended: Result<T, StoreError>,
    (row, id): (RowOf, Uuid),
    blocker: Option<String>,
) -> Result<T, StoreError> {
    let on_the_log = |e: &sqlx::Error| {
        let db = e.as_database_error()?;
        let message = db.message();
        if message.starts_with("held by ") {
            return Some(Some(message.to_string()));
        }
        // A lock on the audit table itself (a schema change) has only the server's words.
        let context = db
            .try_downcast_ref::<sqlx::postgres::PgDatabaseError>()?
            .r#where()?;
        context
            .contains("\"bootstrap_console\".\"audit_log\"")
            .then_some(None)
    };
    match ended {
        Err(StoreError::Database(e)) if super::is_lock_timeout(&e) => match on_the_log(&e) {
            Some(said) => Err(StoreError::AuditChainBusy {
                holder: said
                    .or(blocker)
                    .unwrap_or_else(|| "held by another transaction".into()),
            }),
            None => Err(StoreError::RowLocked {
                holder: match blocker {
                    Some(blocker) => Some(blocker),
                    None => super::locks::row_holder(db, row, id).await,
                },
            }),
        },
        other => other,
    }
}

/// Remove mutation lease `id` in one transaction: one call of the removal's function, which
/// locks the lease, looks the request id up and judges it by the removal's rule (see
/// [`super::rules`]) before it deletes. `decide` sees the lease as it was, the transaction's
/// clock and the verdict; `Err` declines it and the deletion is rolled back. A lease already
/// gone comes back with the lease now on its space.
pub(crate) async fn remove_lease<D, R>(
    db: &Db,
    backend: &BackendSlot,
    (id, seen): (Uuid, &super::rules::LeaseSeen<'_>),
    stamp: &Stamp<'_>,
    decide: impl FnOnce(&LeaseRow, DateTime<Utc>, Option<&str>) -> Result<D, R>,
) -> Result<Written<Option<LeaseRow>, R, LeaseRemoved<D>>, StoreError> {
    let (tenant, space) = (seen.tenant_id, seen.knowledge_space_id);
    let layout = *db.layout();
    let mut tx = WriteTx::begin(db, backend, stamp.lineage).await?;
    let written = async {
        let sql = format!(
            "SELECT f.applied, f.refusal, f.audit_id, f.chain_seq, f.chain_hash, \
               f.row_before AS row_json, now() AS judged_at, {} \
             FROM bootstrap_console.remove_mutation_lease($1, $2, $3, $4, $5, \
               $6 * interval '1 microsecond', $7, $8, $9, $10, $11, $12, $13) f \
             LEFT JOIN LATERAL jsonb_populate_record(\
               NULL::knowledge_space_mutation_leases, f.row_before) l ON true",
            lease_columns(&layout)
        );
        let query = crate::store::sql::query(sqlx::AssertSqlSafe(sql));
        let query = super::rules::bind_lease(query, id, seen);
        let (row, called) = tx.call(db, backend, bind_stamp(query, stamp)).await?;
        if called.refusal.as_deref() == Some("applied_before") {
            return Ok(Written::AppliedBefore(called.audit_id.unwrap_or_default()));
        }
        let Some(json) = called.row_json.clone() else {
            let now = super::read::lease_of_space(&mut *tx.tx, &layout, tenant, space).await?;
            return Ok(Written::Gone(now));
        };
        let before = Locked {
            row: LeaseRow::from_row(&row)?,
            json,
        };
        let judged_at = row.try_get("judged_at")?;
        let decided = match decide(&before.row, judged_at, called.refusal.as_deref()) {
            Ok(decided) => decided,
            Err(declined) => return Ok(Written::Declined(declined)),
        };
        let head = called.head()?;
        Ok(Written::Applied(LeaseRemoved {
            decided,
            before,
            head,
        }))
    }
    .await;
    let blocker = tx.blocker.take();
    let ended = tx.end(written).await;
    name_lock_holder(db, ended, (RowOf::Lease, id), blocker).await
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

/// The call that waits, as an action on `subject` would, until no transaction holds its row,
/// looks the action id up under that lock and holds nothing after (console schema unit 0006):
/// for the lookup of an outcome left unknown (see [`super::lookup`]). It answers whether the
/// row was free, and the action's audit record if it was applied.
pub(super) fn await_row(subject: AuditSubject) -> (&'static str, &'static str, Uuid) {
    let sql = "SELECT free, audit_id FROM bootstrap_console.await_action_row($1, $2, $3)";
    match subject {
        AuditSubject::Bootstrap(id) => (sql, "bootstrap", id),
        AuditSubject::Lease(id) => (sql, "lease", id),
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
    /// Who the last call waited behind, when it waited long: named if its wait ran out.
    blocker: Option<String>,
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
        Ok(Self { tx, blocker: None })
    }

    /// Calls an action function (`query`, every argument bound): its row and what it answered.
    /// Who it waited behind, if it waited long, is kept in `blocker` (see
    /// [`naming_the_blocker`]).
    async fn call(
        &mut self,
        db: &Db,
        backend: &BackendSlot,
        query: Bound<'_>,
    ) -> Result<(sqlx::postgres::PgRow, Called), StoreError> {
        let (row, blocker) = naming_the_blocker(db, backend, query.fetch_one(&mut *self.tx)).await;
        self.blocker = blocker;
        let row = row?;
        let called = Called::from_row(&row)?;
        Ok((row, called))
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
