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
//! with recovery"), which the next statement sees as a broken connection. So on a standby, a
//! connection the server ended counts as a conflict if the standby still answers within 2 s:
//! one that is really gone is left to the caller at once (polls then read the primary).

use std::time::{Duration, Instant};

use super::{Db, StoreError};

/// How long after the first conflict a read keeps being tried again: past this, the conflicts
/// are said like any other failure (a standby that cancels everything is worth knowing about).
/// Counted from the first conflict, not the start: a long first load cancelled after a minute
/// is read again too.
const RETRY_FOR: Duration = Duration::from_secs(3);
const FIRST_WAIT: Duration = Duration::from_millis(20);
const LONGEST_WAIT: Duration = Duration::from_millis(320);
/// How long a standby whose session ended has to answer before it counts as gone.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// An error that may be a recovery conflict.
pub(crate) trait MaybeConflict {
    /// The standby cancelled the statement (SQLSTATE 40001 or 40P01).
    fn is_recovery_conflict(&self) -> bool;
    /// The server ended the session (how a conflict between statements shows).
    fn is_session_ended(&self) -> bool;
}

impl MaybeConflict for StoreError {
    fn is_recovery_conflict(&self) -> bool {
        matches!(self.sqlstate().as_deref(), Some("40001" | "40P01"))
    }

    fn is_session_ended(&self) -> bool {
        use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
        matches!(
            self,
            Self::Database(sqlx::Error::Io(e))
                if matches!(e.kind(), BrokenPipe | ConnectionReset | ConnectionAborted | UnexpectedEof)
        )
    }
}

/// When to read again after a conflict: soon at first, then less often, within [`RETRY_FOR`]
/// of the first one.
pub(crate) struct ConflictRetry<'a> {
    /// The standby read, when it is one: only there does an ended session count as a conflict.
    standby: Option<&'a Db>,
    first_conflict: Option<Instant>,
    wait: Duration,
    sessions_ended: u32,
}

impl<'a> ConflictRetry<'a> {
    /// Retries of reads on `db`: only a standby's reads meet recovery conflicts.
    pub fn new(db: &'a Db) -> Self {
        Self {
            standby: db.is_standby().then_some(db),
            first_conflict: None,
            wait: FIRST_WAIT,
            sessions_ended: 0,
        }
    }

    /// Whether to read again after `error`, having waited: after a recovery conflict while
    /// there is time left — a session the standby ended counting as one when the standby still
    /// answers within [`ANSWER_WITHIN`].
    pub(crate) async fn again(&mut self, error: &impl MaybeConflict, what: &str) -> bool {
        let ended = self.standby.filter(|_| error.is_session_ended());
        if let Some(standby) = ended {
            if !standby.answers(ANSWER_WITHIN).await {
                return false;
            }
            self.sessions_ended += 1;
        } else if !error.is_recovery_conflict() {
            return false;
        }
        self.after_conflict(what).await
    }

    async fn after_conflict(&mut self, what: &str) -> bool {
        let first = *self.first_conflict.get_or_insert_with(Instant::now);
        if first.elapsed() + self.wait > RETRY_FOR {
            return false;
        }
        tracing::info!(
            "{what} cancelled by a recovery conflict on the standby ({} session(s) ended); \
             reading again",
            self.sessions_ended
        );
        tokio::time::sleep(self.wait).await;
        self.wait = (self.wait * 2).min(LONGEST_WAIT);
        true
    }
}
