//! Every SQL statement the console runs lives under this module.
//!
//! [`Db`] is the handle on one server: a small pool whose sessions default to read-only
//! transactions, plus the table layout found at connect; every transaction opens through
//! [`Db::begin`]. Writes happen only in [`write`]: one call per operator action, each one
//! transaction, deciding through the domain's rules on the row it locked. Which servers are used, and when that changes, is the topology's business
//! (see [`crate::topology`]).

pub(crate) mod audit_chain;
pub mod capabilities;
pub(crate) mod conflict;
pub mod connect;
pub(crate) mod conninfo;
pub mod db;
pub mod fleet;
pub(crate) mod grants;
pub(crate) mod health;
pub(crate) mod hosts;
pub(crate) mod locks;
pub(crate) mod lookup;
pub(crate) mod pgpass;
pub(crate) mod primaries;
pub mod read;
pub mod replica;
pub mod report;
pub mod rows;
pub(crate) mod rules;
pub mod schema;
pub(crate) mod service;
pub(crate) mod sql;
pub mod sync;
pub mod write;

use sqlx::PgPool;

pub use capabilities::Capabilities;
use connect::{ConnectError, Target};
pub use db::Db;
use db::read_tx;

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
    #[error("{}", describe(.0))]
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
    /// The audit chain's head stayed locked past the lock timeout: another transaction wrote
    /// its record and has not committed (a stalled action, or a session left open), or the
    /// table is being altered. This one rolled back. `holder` is what the database said of it.
    #[error(
        "the audit log stayed locked past the lock timeout, {holder}; nothing was written: try \
         again, or end that transaction"
    )]
    AuditChainBusy { holder: String },
    /// The row an action locks stayed locked past the lock timeout; nothing was written.
    /// `holder` names the transaction holding it, when the catalog tells.
    #[error(
        "the row stayed locked past the lock timeout{}",
        holder.as_deref().map(|h| format!(", {h}")).unwrap_or_default()
    )]
    RowLocked { holder: Option<String> },
    /// A write transaction's lock or statement timeout was not what it opened with.
    #[error("{0}")]
    LimitsNotInForce(String),
    /// A write transaction landed on another cluster or timeline than the split-brain guard
    /// approved (a virtual IP that moved between the check and the write).
    #[error("{0}")]
    LineageChanged(String),
    /// The database's action function answered what its own verdict contradicts.
    #[error("{0}")]
    Disagreed(String),
    /// A server did not answer a question in time; nothing was sent.
    #[error("{0}")]
    NoAnswer(String),
}

/// A failed statement in words, the cause first: short lines (the status line at 80 columns)
/// must keep the part that matters.
fn describe(error: &sqlx::Error) -> String {
    match error {
        sqlx::Error::Io(io) => match connect::nothing_there(io) {
            Some(words) => format!("the database does not answer: {words}"),
            None => format!("the database does not answer ({io})"),
        },
        sqlx::Error::PoolTimedOut => "the database does not answer (no connection in time)".into(),
        sqlx::Error::Database(db) if connect::pooler_said(db.as_ref()).is_some() => format!(
            "the connection pooler in front of the database said: {}",
            connect::pooler_said(db.as_ref()).unwrap_or_default()
        ),
        sqlx::Error::Database(db) => match db.code() {
            Some(code) => format!("{} (SQLSTATE {code})", db.message()),
            None => db.message().to_string(),
        },
        other => format!("database error: {other}"),
    }
}

/// SQLSTATE of a lock wait that ran out (`lock_timeout`).
pub(crate) const LOCK_NOT_AVAILABLE: &str = "55P03";

/// Whether `error` is a lock wait that ran out.
pub(crate) fn is_lock_timeout(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(e) if e.code().as_deref() == Some(LOCK_NOT_AVAILABLE))
}

impl StoreError {
    /// A lock wait that ran out (`lock_timeout`).
    pub(crate) fn is_lock_timeout(&self) -> bool {
        matches!(self, Self::Database(e) if is_lock_timeout(e))
    }

    /// The SQLSTATE, when the database itself refused.
    pub(crate) fn sqlstate(&self) -> Option<String> {
        match self {
            Self::Database(sqlx::Error::Database(e)) => e.code().map(|c| c.to_string()),
            Self::NotGranted(_) => Some("42501".into()),
            _ => None,
        }
    }
}

/// A server connected to, what the role may do there, and why other listed hosts were passed
/// over when the one used is not the kind wanted (a primary that refused TLS or the login is
/// worth naming).
pub struct Opened {
    pub db: Db,
    pub capabilities: Capabilities,
    pub passed_over: Option<String>,
}

/// The console keeps its footprint small: a couple of sessions are enough for polling and one
/// action at a time.
const POOL_SIZE: u32 = 3;

/// Connects as an observer to the host `wanted` among those `target` lists: every session's
/// transactions are read-only unless a write transaction asks otherwise.
pub async fn connect(target: &Target, wanted: Wanted) -> Result<Opened, ConnectError> {
    let (host, pool, passed_over) = open_host(target, wanted).await?;
    let unknown = Layout {
        lease_heartbeats: false,
        audit_table: false,
        updated_at_index: false,
    };
    let db = Db::new(pool, host, unknown, false);
    let capabilities = match read_tx!(&db, |c| Capabilities::detect(c)) {
        Ok(caps) => caps,
        Err(e) => {
            db.close().await;
            return Err(ConnectError::Unreachable {
                target: target.to_string(),
                reason: e.to_string(),
            });
        }
    };
    let db = db.found(Layout::from(&capabilities), capabilities.in_recovery);
    Ok(Opened {
        db,
        capabilities,
        passed_over,
    })
}

/// After a failover: the host among those `listed` that is the primary now, with a pool on
/// it. `None` when `in_use` is still the primary, or no listed host is one (yet).
pub(crate) async fn find_primary(listed: &Target, in_use: &Db) -> Option<Db> {
    if !listed.has_alternates() {
        return None;
    }
    // The host in use first: while it is a primary it is kept, so that an old primary
    // restarted without fencing never draws the console back to its timeline.
    if is_primary(in_use.host()).await {
        return None;
    }
    // The others at once, each within a short bound: a host that drops packets must not
    // hold the search.
    let in_use_name = in_use.host().to_string();
    let others: Vec<Target> = listed
        .hosts()
        .into_iter()
        .filter(|host| host.to_string() != in_use_name)
        .collect();
    let answers = futures::future::join_all(others.iter().map(is_primary)).await;
    let found = others
        .into_iter()
        .zip(answers)
        .filter(|(_, primary)| *primary)
        .map(|(host, _)| host);
    for host in found {
        let Ok(pool) = host.pool(POOL_SIZE).await else {
            continue;
        };
        // The same catalog: a promoted standby has replayed its primary's.
        return Some(Db::new(pool, host, *in_use.layout(), false));
    }
    None
}

/// The standby `target` names, which does not answer now: a handle whose pool connects when
/// first used, with the catalog of `primary` (a standby's is its primary's).
pub(crate) fn standby_not_answering(target: &Target, primary: &Db) -> Db {
    Db::new(
        target.lazy_pool(POOL_SIZE),
        target.clone(),
        *primary.layout(),
        true,
    )
}

/// Which of several listed hosts a connection wants.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    Primary,
    Standby,
}

/// The host `wanted` among the target's and a pool on it: the first listed that is (not) in
/// recovery, else the first that answers (for actions, a standby: the console is then
/// read-only, and says why — with what the hosts that did not answer said), else the first
/// host's error.
async fn open_host(
    target: &Target,
    wanted: Wanted,
) -> Result<(Target, PgPool, Option<String>), ConnectError> {
    let hosts = target.hosts();
    if hosts.len() == 1 {
        return Ok((target.clone(), target.pool(POOL_SIZE).await?, None));
    }
    let mut errors: Vec<ConnectError> = Vec::new();
    let mut other = None;
    for host in hosts {
        match in_recovery(&host).await {
            Ok(in_recovery) if in_recovery == (wanted == Wanted::Standby) => {
                let pool = host.pool(POOL_SIZE).await?;
                return Ok((host, pool, None));
            }
            Ok(_) => {
                other.get_or_insert(host);
            }
            Err(e) => errors.push(e),
        }
    }
    match other {
        Some(host) => {
            let pool = host.pool(POOL_SIZE).await?;
            let passed_over = (!errors.is_empty()).then(|| {
                let said: Vec<String> = errors.iter().map(ToString::to_string).collect();
                let role = match wanted {
                    Wanted::Primary => "primary",
                    Wanted::Standby => "standby",
                };
                tracing::warn!("no listed host is a {role}: {}", said.join("; "));
                said.join("; ")
            });
            Ok((host, pool, passed_over))
        }
        None => Err(errors
            .into_iter()
            .next()
            .expect("a target lists at least one host")),
    }
}

/// Whether `host` is a standby, asked over one connection of its own (a listed host is
/// probed before any pool is made on it) — the question the split-brain guard asks too.
async fn in_recovery(host: &Target) -> Result<bool, ConnectError> {
    Ok(primaries::facts_of(host).await?.primary.is_none())
}

/// Whether `host` answers as a primary, within 3 s.
async fn is_primary(host: &Target) -> bool {
    let asked = tokio::time::timeout(std::time::Duration::from_secs(3), in_recovery(host));
    matches!(asked.await, Ok(Ok(false)))
}

/// Closes a pool's connections — closed, not dropped, so the server sees a goodbye and not a
/// lost client — within 2 s: a pool stuck on a stalled server is abandoned.
pub(crate) async fn close_pool(pool: &PgPool) {
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), pool.close()).await;
}
