//! What each listed host says of itself before the console writes: which cluster it belongs
//! to, whether it is a primary, and — for a primary — its timeline, WAL position and start
//! time. The split-brain guard ([`crate::topology::lineage`]) judges the answers.
//!
//! The timeline is the first 8 hex digits of the WAL file the primary writes now
//! (`pg_walfile_name(pg_current_wal_lsn())`): a promoted server writes its new timeline's
//! files at once, while `pg_control_checkpoint()` goes on reporting the old timeline until the
//! first checkpoint after the promotion, minutes later. Every function asked here is open to
//! every role.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use super::StoreError;
use super::connect::{ConnectError, Target};
use super::db::{Db, TxKind, read_tx};
use super::replica::Lsn;

/// How long a listed host other than the one in use has to answer.
const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// What one server says of itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFacts {
    /// `pg_control_system()`'s system identifier: one per cluster, shared by its standbys.
    /// `None` where the function's EXECUTE was revoked (some managed databases): the guard
    /// then counts primaries only.
    pub system_id: Option<i64>,
    /// `None` for a standby (in recovery).
    pub primary: Option<PrimaryFacts>,
    /// `pg_postmaster_start_time()`.
    pub started: DateTime<Utc>,
}

/// What a primary says of the history it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimaryFacts {
    pub timeline: u32,
    pub wal: Lsn,
}

/// One listed host's answer, or why there was none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostAnswer {
    /// `host:port` (a socket directory as the host).
    pub host: String,
    /// The host the console writes to.
    pub in_use: bool,
    pub facts: Result<HostFacts, String>,
}

/// The server's system identifier, or NULL where the role may not ask.
pub(crate) const SYSTEM_ID: &str = "CASE WHEN pg_catalog.has_function_privilege(\
    'pg_catalog.pg_control_system()', 'EXECUTE') \
    THEN (SELECT system_identifier FROM pg_catalog.pg_control_system()) END";

/// The timeline a primary writes (8 hex digits), NULL on a standby, whose WAL functions would
/// fail.
pub(crate) const TIMELINE: &str = "CASE WHEN pg_catalog.pg_is_in_recovery() THEN NULL ELSE \
    pg_catalog.substr(pg_catalog.pg_walfile_name(pg_catalog.pg_current_wal_lsn()), 1, 8) END";

/// Parses [`TIMELINE`]'s answer.
pub(crate) fn timeline(text: &str) -> Result<u32, StoreError> {
    u32::from_str_radix(text, 16)
        .map_err(|e| StoreError::Replication(format!("timeline {text:?}: {e}")))
}

/// What the server `conn` is on says of itself.
pub(crate) async fn facts(conn: &mut PgConnection) -> Result<HostFacts, StoreError> {
    let sql = format!(
        "SELECT {SYSTEM_ID}, {TIMELINE}, \
           CASE WHEN pg_catalog.pg_is_in_recovery() THEN NULL \
                ELSE pg_catalog.pg_current_wal_lsn()::text END, \
           pg_catalog.pg_postmaster_start_time()"
    );
    let (system_id, timeline_text, wal, started): (
        Option<i64>,
        Option<String>,
        Option<String>,
        DateTime<Utc>,
    ) = super::sql::query_as(sqlx::AssertSqlSafe(sql))
        .fetch_one(conn)
        .await?;
    let primary = match (timeline_text, wal) {
        (Some(text), Some(wal)) => Some(PrimaryFacts {
            timeline: timeline(&text)?,
            wal: wal.parse().map_err(StoreError::Replication)?,
        }),
        _ => None,
    };
    Ok(HostFacts {
        system_id,
        primary,
        started,
    })
}

/// Asks every host `listed` names, each within 3 s and all at once: the one `in_use` is on
/// through its pool (its failure is the action's: the write would fail the same way), every
/// other over a connection of its own. A host listed twice is asked once.
pub(crate) async fn survey(listed: &Target, in_use: &Db) -> Result<Vec<HostAnswer>, StoreError> {
    let in_use_address = in_use.host().address();
    let own = async {
        match tokio::time::timeout(ANSWER_WITHIN, async { read_tx!(in_use, |c| facts(c)) }).await {
            Ok(answer) => answer,
            Err(_) => Err(StoreError::NoAnswer(format!(
                "{} did not answer within {} s whether it is the primary; nothing was sent",
                in_use.host().address(),
                ANSWER_WITHIN.as_secs()
            ))),
        }
    };
    let mut asked = vec![in_use_address.clone()];
    let mut others = Vec::new();
    for host in listed.hosts() {
        let address = host.address();
        if !asked.contains(&address) {
            asked.push(address);
            others.push(host);
        }
    }
    let others = others.into_iter().map(|host| async move {
        let asked = tokio::time::timeout(ANSWER_WITHIN, facts_of(&host)).await;
        HostAnswer {
            host: host.address(),
            in_use: false,
            facts: match asked {
                Ok(answer) => answer.map_err(|e| e.to_string()),
                Err(_) => Err("no answer within 3 s".into()),
            },
        }
    });
    let (own, others) = tokio::join!(own, futures::future::join_all(others));
    let mut answers = vec![HostAnswer {
        host: in_use_address,
        in_use: true,
        facts: Ok(own?),
    }];
    answers.extend(others);
    Ok(answers)
}

/// What `host` says of itself, over a connection of its own (closed after the answer).
pub(crate) async fn facts_of(host: &Target) -> Result<HostFacts, ConnectError> {
    let mut conn = host.connect().await?;
    let answer = async {
        super::db::begin_on(&mut conn, TxKind::Read, None).await?;
        let facts = facts(&mut conn).await?;
        sqlx::raw_sql("ROLLBACK").execute(&mut conn).await?;
        Ok::<_, StoreError>(facts)
    }
    .await;
    let _ = sqlx::Connection::close(conn).await;
    answer.map_err(|e| match e {
        StoreError::Database(e) => ConnectError::classify(host, e),
        other => ConnectError::Unreachable {
            target: host.to_string(),
            reason: other.to_string(),
        },
    })
}
