//! Rows exactly as the database returns them: text where the schema has text. Turning them
//! into domain types (and rejecting impossible ones) is the domain's job, so an odd value in a
//! production database becomes a clear error instead of a decoding failure.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use uuid::Uuid;

/// Every column of `legacy_space_publication_bootstraps`.
#[derive(Debug, Clone, sqlx::FromRow, Deserialize)]
pub struct BootstrapRow {
    pub id: Uuid,
    pub tenant_id: String,
    pub knowledge_space_id: Uuid,
    pub idempotency_key: String,
    pub checkpoint: String,
    pub run_state: String,
    pub total_documents: i32,
    pub completed_documents: i32,
    pub worker_id: Option<String>,
    pub lease_token: Option<Uuid>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub heartbeat_at: Option<DateTime<Utc>>,
    pub last_error_code: Option<String>,
    pub last_error_message: Option<String>,
    pub row_version: i32,
    pub published_publication_id: Option<Uuid>,
    pub published_fingerprint: Option<String>,
    pub published_head_revision: Option<i32>,
    pub snapshot_metadata: serde_json::Value,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
}

/// A mutation lease. `heartbeat_at`/`expires_at` exist only on databases with the later lease
/// heartbeat columns; elsewhere they read as NULL.
#[derive(Debug, Clone, sqlx::FromRow, Deserialize)]
pub struct LeaseRow {
    pub id: Uuid,
    pub tenant_id: String,
    pub knowledge_space_id: Uuid,
    pub operation: String,
    pub acquired_at: DateTime<Utc>,
    pub heartbeat_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// One frozen document of a bootstrap.
#[derive(Debug, Clone, sqlx::FromRow, Deserialize)]
pub struct ItemRow {
    pub bootstrap_id: Uuid,
    pub(crate) document_asset_id: Uuid,
    pub(crate) document_version: i32,
    pub(crate) document_sha256: String,
    pub(crate) ordinal: i32,
    pub(crate) compilation_attempt_id: Option<Uuid>,
    pub status: String,
    pub(crate) last_error: Option<String>,
    pub(crate) updated_at: DateTime<Utc>,
}

/// One record of `bootstrap_console.audit_log`.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow, Deserialize)]
pub struct AuditRow {
    pub id: i64,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub host: String,
    pub ssh_client: Option<String>,
    pub action: String,
    pub tenant_id: String,
    pub knowledge_space_id: Uuid,
    pub bootstrap_id: Option<Uuid>,
    pub lease_id: Option<Uuid>,
    pub reason: String,
    pub row_before: Option<serde_json::Value>,
    pub row_after: Option<serde_json::Value>,
    pub outcome: String,
    /// The database role that wrote the record (console schema unit 0004; `None` before it):
    /// what the database saw, where `actor` and `host` are what the client reported.
    #[serde(default)]
    pub db_role: Option<String>,
}

impl AuditRow {
    /// Who acted, as shown: the database role when it was recorded, with what the client
    /// reported after it.
    pub(crate) fn who(&self) -> String {
        match &self.db_role {
            Some(role) => format!("{role} ({}@{})", self.actor, self.host),
            None => format!("{}@{}", self.actor, self.host),
        }
    }
}

/// The narrow columns of a bootstrap that the board shows, with the row's version (`xmin`,
/// which changes with every update). Wide columns (snapshot metadata, fingerprints, the whole
/// message) are read only for the detail of one space.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct BoardRecord {
    pub id: Uuid,
    pub tenant_id: String,
    pub knowledge_space_id: Uuid,
    pub checkpoint: String,
    pub run_state: String,
    pub total_documents: i32,
    pub completed_documents: i32,
    pub worker_id: Option<String>,
    /// `lease_token IS NOT NULL` (the token itself is the worker's secret to fence with).
    pub has_lease_token: bool,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub heartbeat_at: Option<DateTime<Utc>>,
    pub last_error_code: Option<String>,
    pub last_error_message: Option<String>,
    pub row_version: i32,
    pub updated_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    /// The transaction that wrote this version of the row.
    pub version: i64,
    /// The table page this version is on.
    pub page: i64,
}
