//! Every SQL statement the console runs lives under this module.
//!
//! [`Store`] is the handle the domain uses: a small pool whose sessions default to read-only
//! transactions, plus the table layout found at connect. Writes happen only inside
//! [`write::WriteTx`], which the domain's actions open explicitly.

pub mod capabilities;
pub mod connect;
pub mod fleet;
pub mod lookup;
pub mod read;
pub mod replica;
pub mod report;
pub mod rows;
pub mod schema;
pub mod sync;
pub mod write;

use sqlx::PgPool;

pub use capabilities::Capabilities;
use connect::{ConnectError, Target};

/// Which optional parts of the schema the queries may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The lease table has `heartbeat_at` and `expires_at`.
    pub lease_heartbeats: bool,
    /// `bootstrap_console.audit_log` exists and this role may read it.
    pub audit_table: bool,
    /// An index led by `updated_at` exists on the bootstrap table.
    pub updated_at_index: bool,
}

impl From<&Capabilities> for Layout {
    fn from(caps: &Capabilities) -> Self {
        Self {
            lease_heartbeats: caps.lease_heartbeats,
            audit_table: caps.has_audit_table && caps.can_read_audit,
            updated_at_index: caps.updated_at_index,
        }
    }
}

/// A failed query.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("unreadable JSON from the database: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the database returned no clock reading")]
    NoClock,
    /// A replication function answered something the console cannot read.
    #[error("replication state: {0}")]
    Replication(String),
    /// Known before asking: the role lacks a grant (the sentence names it).
    #[error("{0}")]
    NotGranted(String),
}

impl StoreError {
    /// The SQLSTATE, when the database itself refused.
    pub fn sqlstate(&self) -> Option<String> {
        match self {
            Self::Database(sqlx::Error::Database(e)) => e.code().map(|c| c.to_string()),
            Self::NotGranted(_) => Some("42501".into()),
            _ => None,
        }
    }
}

/// The connection pool and the schema layout it was opened against.
#[derive(Clone)]
pub struct Store {
    pool: PgPool,
    target: Target,
    layout: Layout,
}

/// The console keeps its footprint small: a couple of sessions are enough for polling and one
/// action at a time.
const POOL_SIZE: u32 = 3;

impl Store {
    /// Connects as an observer: every session's transactions are read-only unless a write
    /// transaction asks otherwise.
    pub async fn connect(target: &Target) -> Result<(Self, Capabilities), ConnectError> {
        let pool = target.observer_pool(POOL_SIZE).await?;
        let caps = match Capabilities::detect(&pool).await {
            Ok(caps) => caps,
            Err(e) => {
                close_pool(&pool).await;
                return Err(ConnectError::Unreachable {
                    target: target.to_string(),
                    reason: e.to_string(),
                });
            }
        };
        let store = Self {
            pool,
            target: target.clone(),
            layout: Layout::from(&caps),
        };
        Ok((store, caps))
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Closes the pool's connections (see [`close_pool`]).
    pub async fn close(&self) {
        close_pool(&self.pool).await;
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }
}

/// Closes a pool's connections — closed, not dropped, so the server sees a goodbye and not a
/// lost client — within 2 s: a pool stuck on a stalled server is abandoned.
pub async fn close_pool(pool: &PgPool) {
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), pool.close()).await;
}
