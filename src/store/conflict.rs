//! Reads cancelled by a recovery conflict, read again.
//!
//! A hot standby that must replay a change some running statement still needs (a lock the
//! primary took, rows its vacuum removed) cancels that statement once
//! `max_standby_streaming_delay` runs out: SQLSTATE 40001 ("conflict with recovery"), or
//! 40P01 when the statement and replay wait on each other. That is replication at work, not
//! an outage: the console reads again, a little later, for a few seconds at most.
//!
//! A conflict that finds the session between two statements of a transaction (a poll reads
//! in one snapshot) ends the session instead (FATAL "terminating connection due to conflict
//! with recovery"), which the next statement sees as a broken connection. So a connection
//! the server ended is read again too, on another: a server that is really gone fails the
//! next connect, which is not retried.

use std::future::Future;
use std::time::{Duration, Instant};

use super::StoreError;

/// How long a read keeps being tried again after conflicts: past this, the conflicts are
/// said like any other failure (a standby that cancels everything is worth knowing about).
const RETRY_FOR: Duration = Duration::from_secs(3);
const FIRST_WAIT: Duration = Duration::from_millis(20);
const LONGEST_WAIT: Duration = Duration::from_millis(320);

/// An error that may be a recovery conflict.
pub trait MaybeConflict {
    fn is_recovery_conflict(&self) -> bool;
}

impl MaybeConflict for StoreError {
    fn is_recovery_conflict(&self) -> bool {
        use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
        match self {
            Self::Database(sqlx::Error::Io(e)) => matches!(
                e.kind(),
                BrokenPipe | ConnectionReset | ConnectionAborted | UnexpectedEof
            ),
            _ => matches!(self.sqlstate().as_deref(), Some("40001" | "40P01")),
        }
    }
}

/// When to read again after a conflict: soon at first, then less often, within
/// [`RETRY_FOR`].
pub struct ConflictRetry {
    started: Instant,
    wait: Duration,
    /// How many reads a conflict cancelled.
    pub conflicts: u32,
}

impl Default for ConflictRetry {
    fn default() -> Self {
        Self {
            started: Instant::now(),
            wait: FIRST_WAIT,
            conflicts: 0,
        }
    }
}

impl ConflictRetry {
    /// Whether to read again after `error`, having waited: only after a recovery conflict,
    /// and only while there is time left.
    pub async fn again(&mut self, error: &impl MaybeConflict, what: &str) -> bool {
        if !error.is_recovery_conflict() || self.started.elapsed() + self.wait > RETRY_FOR {
            return false;
        }
        self.conflicts += 1;
        tracing::info!(
            "{what} cancelled by a recovery conflict on the standby (#{}); reading again",
            self.conflicts
        );
        tokio::time::sleep(self.wait).await;
        self.wait = (self.wait * 2).min(LONGEST_WAIT);
        true
    }
}

/// `read`, read again while recovery conflicts cancel it (see [`ConflictRetry`]).
pub async fn retried<T, E, Fut>(what: &str, mut read: impl FnMut() -> Fut) -> Result<T, E>
where
    E: MaybeConflict,
    Fut: Future<Output = Result<T, E>>,
{
    let mut retry = ConflictRetry::default();
    loop {
        match read().await {
            Err(error) if retry.again(&error, what).await => {}
            done => return done,
        }
    }
}
