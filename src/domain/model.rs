//! The ledger as domain types: checkpoints, run states, bootstraps, items, mutation leases and
//! audit records, parsed from database rows. An unknown enum value or a row the constraints
//! should have made impossible is a [`RowError`] naming the row — never a panic.

use std::fmt;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::store::rows::{BootstrapRow, ItemRow, LeaseRow};

macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every value, in the order of the lifecycle.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value as stored in the database.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the stored value; `None` for anything else.
            pub(crate) fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some($name::$variant),)+ _ => None }
            }

            /// Position in [`Self::ALL`].
            pub fn index(self) -> usize {
                self as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // `pad` so that `{:<17}` lines up columns.
                f.pad(self.as_str())
            }
        }
    };
}

text_enum!(
    /// Where a bootstrap is in its pipeline; monotonic within one job.
    Checkpoint {
        PendingSnapshot = "pending_snapshot",
        SnapshotCaptured = "snapshot_captured",
        Rebuilding = "rebuilding",
        Verifying = "verifying",
        Published = "published",
    }
);

impl Checkpoint {
    /// Its name in ten characters at most, for 80-column tables: `pending`, `captured`, the
    /// others as they are.
    pub fn short_name(self) -> &'static str {
        match self {
            Self::PendingSnapshot => "pending",
            Self::SnapshotCaptured => "captured",
            other => other.as_str(),
        }
    }
}

text_enum!(
    /// Whether a bootstrap is waiting, being worked on, or finished.
    RunState {
        Queued = "queued",
        Running = "running",
        Succeeded = "succeeded",
        Failed = "failed",
        Canceled = "canceled",
    }
);

text_enum!(
    /// The state of one frozen document.
    ItemStatus {
        Pending = "pending",
        Running = "running",
        Succeeded = "succeeded",
        Failed = "failed",
    }
);

/// A row the console cannot make sense of.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{table} row {id}: {problem}")]
pub struct RowError {
    pub(crate) table: &'static str,
    pub(crate) id: String,
    pub(crate) problem: String,
}

impl RowError {
    pub fn new(table: &'static str, id: impl fmt::Display, problem: impl Into<String>) -> Self {
        Self {
            table,
            id: id.to_string(),
            problem: problem.into(),
        }
    }
}

fn parse_enum<T>(
    table: &'static str,
    id: impl fmt::Display,
    column: &str,
    value: &str,
    parse: fn(&str) -> Option<T>,
) -> Result<T, RowError> {
    parse(value).ok_or_else(|| {
        RowError::new(
            table,
            id,
            format!(
                "unknown {column} {:?}",
                crate::domain::text::clip(value, 40)
            ),
        )
    })
}

/// The worker lease of a running bootstrap.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerLease {
    pub(crate) worker_id: String,
    pub(crate) token: Uuid,
    pub(crate) expires_at: DateTime<Utc>,
    pub(crate) heartbeat_at: DateTime<Utc>,
}

/// What a succeeded, non-empty bootstrap published.
#[derive(Debug, Clone, PartialEq)]
pub struct Publication {
    pub(crate) publication_id: Uuid,
    pub(crate) fingerprint: String,
    pub(crate) head_revision: i32,
}

/// One bootstrap job: the query-readiness latch of one space.
#[derive(Debug, Clone, PartialEq)]
pub struct Bootstrap {
    pub id: Uuid,
    pub tenant_id: String,
    pub knowledge_space_id: Uuid,
    pub idempotency_key: String,
    pub checkpoint: Checkpoint,
    pub run_state: RunState,
    pub total_documents: i32,
    pub completed_documents: i32,
    /// Present exactly when `run_state` is running.
    pub worker: Option<WorkerLease>,
    pub last_error_code: Option<String>,
    pub last_error_message: Option<String>,
    pub row_version: i32,
    pub publication: Option<Publication>,
    pub snapshot_metadata: serde_json::Value,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
}

impl TryFrom<BootstrapRow> for Bootstrap {
    type Error = RowError;

    fn try_from(row: BootstrapRow) -> Result<Self, RowError> {
        const TABLE: &str = "bootstrap";
        let id = row.id;
        let checkpoint = parse_enum(TABLE, id, "checkpoint", &row.checkpoint, Checkpoint::parse)?;
        let run_state = parse_enum(TABLE, id, "run_state", &row.run_state, RunState::parse)?;
        if row.total_documents < 0
            || row.completed_documents < 0
            || row.completed_documents > row.total_documents
        {
            return Err(RowError::new(
                TABLE,
                id,
                format!(
                    "impossible counts {}/{}",
                    row.completed_documents, row.total_documents
                ),
            ));
        }
        let worker = match (
            row.worker_id,
            row.lease_token,
            row.lease_expires_at,
            row.heartbeat_at,
        ) {
            (Some(worker_id), Some(token), Some(expires_at), Some(heartbeat_at)) => {
                Some(WorkerLease {
                    worker_id,
                    token,
                    expires_at,
                    heartbeat_at,
                })
            }
            (None, None, None, None) => None,
            _ => return Err(RowError::new(TABLE, id, "partially set worker lease")),
        };
        if worker.is_some() != (run_state == RunState::Running) {
            return Err(RowError::new(
                TABLE,
                id,
                format!("run_state {run_state} with a worker lease that does not match it"),
            ));
        }
        let publication = match (
            row.published_publication_id,
            row.published_fingerprint,
            row.published_head_revision,
        ) {
            (Some(publication_id), Some(fingerprint), Some(head_revision)) => Some(Publication {
                publication_id,
                fingerprint,
                head_revision,
            }),
            _ => None,
        };
        Ok(Self {
            id,
            tenant_id: row.tenant_id,
            knowledge_space_id: row.knowledge_space_id,
            idempotency_key: row.idempotency_key,
            checkpoint,
            run_state,
            total_documents: row.total_documents,
            completed_documents: row.completed_documents,
            worker,
            last_error_code: row.last_error_code,
            last_error_message: row.last_error_message,
            row_version: row.row_version,
            publication,
            snapshot_metadata: row.snapshot_metadata,
            created_at: row.created_at,
            updated_at: row.updated_at,
            completed_at: row.completed_at,
        })
    }
}

/// A document writer's space-exclusive lease. It never expires by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutationLease {
    pub id: Uuid,
    pub tenant_id: String,
    pub knowledge_space_id: Uuid,
    pub operation: String,
    pub acquired_at: DateTime<Utc>,
    /// Only on databases with the later lease heartbeat columns.
    pub heartbeat_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// The operations a document writer may hold a lease for.
pub(crate) const KNOWN_OPERATIONS: &[&str] = &[
    "upload",
    "bulk-upload",
    "bulk-delete",
    "bulk-reindex",
    "knowledge-fs-write",
    "page-index-upgrade",
    "source-delete",
    "source-materialize",
];

impl MutationLease {
    /// The identity an operator confirms when removing it.
    pub fn identity(&self) -> LeaseIdentity {
        LeaseIdentity {
            id: self.id,
            tenant_id: self.tenant_id.clone(),
            knowledge_space_id: self.knowledge_space_id,
            acquired_at: self.acquired_at,
        }
    }
}

impl From<LeaseRow> for MutationLease {
    fn from(row: LeaseRow) -> Self {
        Self {
            id: row.id,
            tenant_id: row.tenant_id,
            knowledge_space_id: row.knowledge_space_id,
            operation: row.operation,
            acquired_at: row.acquired_at,
            heartbeat_at: row.heartbeat_at,
            expires_at: row.expires_at,
        }
    }
}

/// Exactly which lease the operator saw: removal deletes this lease and no other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseIdentity {
    pub(crate) id: Uuid,
    pub(crate) tenant_id: String,
    pub(crate) knowledge_space_id: Uuid,
    pub(crate) acquired_at: DateTime<Utc>,
}

/// One frozen document of a bootstrap.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub bootstrap_id: Uuid,
    pub document_asset_id: Uuid,
    pub document_version: i32,
    pub document_sha256: String,
    pub ordinal: i32,
    pub compilation_attempt_id: Option<Uuid>,
    pub status: ItemStatus,
    pub last_error: Option<String>,
    pub updated_at: DateTime<Utc>,
}

impl TryFrom<ItemRow> for Item {
    type Error = RowError;

    fn try_from(row: ItemRow) -> Result<Self, RowError> {
        let id = format!("{}/{}", row.bootstrap_id, row.document_asset_id);
        let status = parse_enum("item", &id, "status", &row.status, ItemStatus::parse)?;
        Ok(Self {
            bootstrap_id: row.bootstrap_id,
            document_asset_id: row.document_asset_id,
            document_version: row.document_version,
            document_sha256: row.document_sha256,
            ordinal: row.ordinal,
            compilation_attempt_id: row.compilation_attempt_id,
            status,
            last_error: row.last_error,
            updated_at: row.updated_at,
        })
    }
}

/// An operator action recorded by the console: the audit row as stored (its fields are
/// already typed; no state needs parsing).
pub use crate::store::rows::AuditRow as AuditRecord;

#[cfg(test)]
mod tests {
    use super::*;

    fn row(run_state: &str) -> BootstrapRow {
        BootstrapRow {
            id: Uuid::nil(),
            tenant_id: "t".into(),
            knowledge_space_id: Uuid::nil(),
            idempotency_key: "k".into(),
            checkpoint: "rebuilding".into(),
            run_state: run_state.into(),
            total_documents: 2,
            completed_documents: 1,
            worker_id: None,
            lease_token: None,
            lease_expires_at: None,
            heartbeat_at: None,
            last_error_code: None,
            last_error_message: None,
            row_version: 1,
            published_publication_id: None,
            published_fingerprint: None,
            published_head_revision: None,
            snapshot_metadata: serde_json::json!({}),
            created_at: Utc::now(),
            updated_at: Utc::now(),
            completed_at: None,
        }
    }

    #[test]
    fn every_stored_value_round_trips() {
        for c in Checkpoint::ALL {
            assert_eq!(Checkpoint::parse(c.as_str()), Some(*c));
        }
        for s in RunState::ALL {
            assert_eq!(RunState::parse(s.as_str()), Some(*s));
        }
        for s in ItemStatus::ALL {
            assert_eq!(ItemStatus::parse(s.as_str()), Some(*s));
        }
        assert_eq!(Checkpoint::Published.index(), 4);
    }

    #[test]
    fn an_unknown_run_state_is_an_error_naming_the_row() {
        let error = Bootstrap::try_from(row("paused")).expect_err("unknown");
        assert_eq!(
            error.to_string(),
            "bootstrap row 00000000-0000-0000-0000-000000000000: unknown run_state \"paused\""
        );
    }

    #[test]
    fn a_running_row_without_a_worker_lease_is_impossible() {
        let error = Bootstrap::try_from(row("running")).expect_err("impossible");
        assert!(error.problem.contains("worker lease"), "{error}");
    }

    #[test]
    fn impossible_counts_are_rejected() {
        let mut bad = row("queued");
        bad.completed_documents = 3;
        assert!(Bootstrap::try_from(bad).is_err());
    }

    #[test]
    fn a_hostile_value_is_clipped_and_escaped_in_the_error() {
        let error = Bootstrap::try_from(row("\u{1b}]0;owned\u{7}paused")).expect_err("unknown");
        assert!(!error.to_string().contains('\u{1b}'));
    }
}
