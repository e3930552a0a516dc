//! Streaming replication as the console sees it: WAL positions on the primary and how far a
//! hot standby has replayed them, so polls of a standby can say how old their data is and judge
//! time-driven signals as of the data, not as of the standby's clock.
//!
//! Before each poll of a standby the console reads where the primary's WAL ends
//! (`pg_current_wal_lsn()`) and the primary's clock. When the standby has replayed everything
//! the primary had written before the poll, signals are judged by the standby's clock (a quiet
//! primary hides no dead worker fleet); otherwise as of the latest instant its data is known
//! complete to — the last replayed commit, or an earlier reading of the primary's position it
//! has replayed since — so a lease renewed on the primary 5 s ago never reads "expired" on a
//! standby 30 s behind, and ages wait for the next poll instead of running on with the local
//! clock. The header says `standby in sync` or `standby lag 31s 2.1MB, ages as of 12:03:04`,
//! in warning style past [`LAG_WARNING`]. A standby read with no primary named is judged by
//! its own clock and its lag is not measured (`"lag_measured": false` in `status --json`).
//!
//! Read your own writes: after an action commits, polls wait (at most 10 s,
//! `poller::REPLAY_WAIT`) until the standby holds the action's audit records, or, for a role
//! that may not read the audit table there, until it has replayed the primary's position after
//! the commit; the status line says `applied; waiting for the replica (N s)` meanwhile.
//!
//! The functions called here are open to every role: the standby needs only the observer's
//! grants, and a standby copies its primary's roles, so one role serves both.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use super::StoreError;

/// How far behind a standby may fall before it is worth saying: the header turns to warning
/// style and the log says so.
pub(crate) const LAG_WARNING: chrono::Duration = chrono::Duration::seconds(10);

/// A WAL position (`pg_lsn`), e.g. `16/B374D848`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

impl FromStr for Lsn {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (high, low) = text
            .split_once('/')
            .ok_or_else(|| format!("not a WAL position: {text:?}"))?;
        let part = |p: &str| u64::from_str_radix(p, 16).map_err(|e| format!("{text:?}: {e}"));
        Ok(Self((part(high)? << 32) | part(low)?))
    }
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xffff_ffff)
    }
}

fn parse(text: Option<String>) -> Result<Option<Lsn>, StoreError> {
    text.map(|t| t.parse().map_err(StoreError::Replication))
        .transpose()
}

/// Where the primary's WAL ends now (as written: what a standby can be sent), and its clock.
/// Under synchronous commit, every transaction committed before this call is at or below it.
pub(crate) async fn primary_position(
    conn: &mut PgConnection,
) -> Result<(Lsn, DateTime<Utc>), StoreError> {
    let (text, now): (Option<String>, DateTime<Utc>) =
        crate::store::sql::query_as("SELECT pg_current_wal_lsn()::text, now()")
            .fetch_one(&mut *conn)
            .await?;
    let position = parse(text)?.ok_or_else(|| StoreError::Replication("no WAL position".into()))?;
    Ok((position, now))
}

/// How far a standby has replayed (`None` on a primary, which replays nothing).
pub(crate) async fn replay_position(conn: &mut PgConnection) -> Result<Option<Lsn>, StoreError> {
    // A promoted standby keeps its last replay position: on a primary it means nothing.
    let text: Option<String> = crate::store::sql::query_scalar(
        "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()::text END",
    )
    .fetch_one(&mut *conn)
    .await?;
    parse(text)
}

/// What an action wrote, for a standby to be seen holding: its audit records (exact: written
/// in the action's transaction), and where the primary's WAL ended after it (for a role that
/// may not read the audit table there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayMark {
    pub(crate) audit_ids: Vec<i64>,
    pub(crate) position: Lsn,
}

/// Whether the standby at `conn` holds `mark`: `None` when it cannot tell by the audit records
/// (no audit table there, or no grant), and the position is all there is.
pub(crate) async fn holds_audit(conn: &mut PgConnection, audit_ids: &[i64]) -> Option<bool> {
    if audit_ids.is_empty() {
        return None;
    }
    let found: Result<i64, _> = crate::store::sql::query_scalar(
        "SELECT count(*) FROM bootstrap_console.audit_log WHERE id = ANY($1)",
    )
    .bind(audit_ids)
    .fetch_one(&mut *conn)
    .await;
    found.ok().map(|n| n == audit_ids.len() as i64)
}

/// What the console knows of the primary when it reads a standby.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Primary {
    /// There is no primary to ask (a standby named as the only database): the standby's clock
    /// is taken as it is, and its lag is not measured.
    #[default]
    NotAsked,
    /// The primary did not answer.
    Silent,
    /// Where the primary's WAL ended just before the poll, and earlier readings (position and
    /// the primary's clock then), newest last.
    At {
        position: Lsn,
        samples: Vec<(Lsn, DateTime<Utc>)>,
    },
}

impl Primary {
    /// What one reading of the primary says, with no readings before it (a one-shot report):
    /// `None` when it did not answer.
    pub(crate) fn once(reading: Option<(Lsn, DateTime<Utc>)>) -> Self {
        match reading {
            None => Self::Silent,
            Some((position, at)) => Self::At {
                position,
                samples: vec![(position, at)],
            },
        }
    }
}

/// What a poll of a standby learned about replication, read with the poll's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replication {
    /// The standby's own clock at the poll.
    pub standby_now: DateTime<Utc>,
    /// How far it had replayed, and when the last transaction replayed committed.
    pub replayed: Option<Lsn>,
    pub replayed_at: Option<DateTime<Utc>>,
    /// Where the primary's WAL ended just before the poll; `None` when it was not asked or did
    /// not answer (see `measured`).
    pub primary: Option<Lsn>,
    /// Whether a primary was asked at all.
    pub measured: bool,
    /// The newest instant (primary clock) of a reading of the primary's position that the
    /// standby had replayed: its data holds everything committed before then.
    pub complete_until: Option<DateTime<Utc>>,
}

impl Replication {
    /// The state read on a standby, judged against what is known of the primary.
    pub fn new(
        standby_now: DateTime<Utc>,
        replayed: Option<Lsn>,
        replayed_at: Option<DateTime<Utc>>,
        primary: &Primary,
    ) -> Self {
        let (position, measured, complete_until) = match primary {
            Primary::NotAsked => (None, false, None),
            Primary::Silent => (None, true, None),
            Primary::At { position, samples } => {
                let complete_until = samples
                    .iter()
                    .filter(|(at, _)| replayed.is_some_and(|r| r >= *at))
                    .map(|(_, when)| *when)
                    .max();
                (Some(*position), true, complete_until)
            }
        };
        Self {
            standby_now,
            replayed,
            replayed_at,
            primary: position,
            measured,
            complete_until,
        }
    }

    /// Everything the primary had written before the poll was replayed: the data is as of the
    /// standby's clock (even when the primary has been quiet for long and the last replayed
    /// commit is old).
    pub(crate) fn caught_up(&self) -> bool {
        matches!((self.replayed, self.primary), (Some(replayed), Some(primary)) if replayed >= primary)
    }

    /// The instant the data read is as of: the standby's clock when caught up (or when no
    /// primary was named, as before replication was known), otherwise the latest instant the
    /// data is known complete to — the last replayed commit, or an earlier reading of the
    /// primary's position already replayed — never later than the standby's clock. `None`
    /// when nothing tells (a standby that has replayed no commit since it started).
    pub(crate) fn as_of(&self) -> Option<DateTime<Utc>> {
        if self.caught_up() || !self.measured {
            return Some(self.standby_now);
        }
        let known = self
            .replayed_at
            .into_iter()
            .chain(self.complete_until)
            .max()?;
        Some(known.min(self.standby_now))
    }

    /// How far behind the data is (zero when caught up; `None` when unknown).
    pub(crate) fn delay(&self) -> Option<chrono::Duration> {
        self.as_of().map(|at| self.standby_now - at)
    }

    /// WAL bytes the standby had still to replay (`None` when the primary did not answer).
    pub(crate) fn bytes_behind(&self) -> Option<u64> {
        let primary = self.primary?;
        Some(primary.0.saturating_sub(self.replayed.map_or(0, |r| r.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).expect("time")
    }

    #[test]
    fn positions_read_and_print_as_postgresql_writes_them() {
        let lsn: Lsn = "16/B374D848".parse().expect("lsn");
        assert_eq!(lsn.0, 0x16_B374_D848);
        assert_eq!(lsn.to_string(), "16/B374D848");
        assert!("0/0".parse::<Lsn>().expect("zero") < lsn);
        assert!("16B374D848".parse::<Lsn>().is_err());
    }

    fn at_primary(position: u64, samples: &[(u64, i64)]) -> Primary {
        Primary::At {
            position: Lsn(position),
            samples: samples.iter().map(|(p, t)| (Lsn(*p), at(*t))).collect(),
        }
    }

    #[test]
    fn a_caught_up_standby_is_as_of_its_clock_a_lagging_one_as_of_what_it_is_known_to_hold() {
        // The primary has been quiet for a minute: the last commit replayed is old.
        let caught_up =
            Replication::new(at(100), Some(Lsn(500)), Some(at(40)), &at_primary(500, &[]));
        assert!(caught_up.caught_up());
        assert_eq!(caught_up.as_of(), Some(at(100)));
        assert_eq!(caught_up.delay(), Some(chrono::Duration::zero()));
        assert_eq!(caught_up.bytes_behind(), Some(0));

        let lagging =
            Replication::new(at(100), Some(Lsn(500)), Some(at(70)), &at_primary(900, &[]));
        assert!(!lagging.caught_up());
        assert_eq!(lagging.as_of(), Some(at(70)));
        assert_eq!(lagging.delay(), Some(chrono::Duration::seconds(30)));
        assert_eq!(lagging.bytes_behind(), Some(400));

        // One commit in flight after an hour of quiet: an earlier reading the standby has
        // replayed says its data is complete up to a second ago, not an hour ago.
        let in_flight = Replication::new(
            at(3600),
            Some(Lsn(500)),
            Some(at(0)),
            &at_primary(510, &[(500, 3598), (500, 3599), (510, 3600)]),
        );
        assert_eq!(in_flight.as_of(), Some(at(3599)));

        let silent = Replication::new(at(100), Some(Lsn(500)), Some(at(70)), &Primary::Silent);
        assert!(!silent.caught_up());
        assert_eq!(silent.bytes_behind(), None);
        assert_eq!(silent.as_of(), Some(at(70)));
        // No primary named: the standby's clock, as without replication.
        let alone = Replication::new(at(100), Some(Lsn(500)), Some(at(40)), &Primary::NotAsked);
        assert_eq!(alone.as_of(), Some(at(100)));
        // Nothing replayed since it started, and behind: unknown, not "now".
        let blank = Replication::new(at(100), Some(Lsn(500)), None, &at_primary(900, &[]));
        assert_eq!(blank.as_of(), None);
        // A replay stamp ahead of the standby's clock (clock skew) is not the future.
        let skewed = Replication::new(
            at(100),
            Some(Lsn(500)),
            Some(at(130)),
            &at_primary(900, &[]),
        );
        assert_eq!(skewed.as_of(), Some(at(100)));
    }
}
