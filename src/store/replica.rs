//! Streaming replication as the console sees it: WAL positions on the primary and how far a
//! hot standby has replayed them, so polls of a standby can say how old their data is and judge
//! time-driven signals as of the data, not as of the standby's clock.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use super::StoreError;

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

/// Where the primary's WAL ends now: every transaction committed before this call is at or
/// below it.
pub async fn primary_position(pool: &PgPool) -> Result<Lsn, StoreError> {
    let text: Option<String> = sqlx::query_scalar("SELECT pg_current_wal_lsn()::text")
        .fetch_one(pool)
        .await?;
    parse(text)?.ok_or_else(|| StoreError::Replication("no WAL position".into()))
}

/// How far a standby has replayed (`None` on a primary, which replays nothing).
pub async fn replay_position(pool: &PgPool) -> Result<Option<Lsn>, StoreError> {
    let text: Option<String> = sqlx::query_scalar("SELECT pg_last_wal_replay_lsn()::text")
        .fetch_one(pool)
        .await?;
    parse(text)
}

/// What a poll of a standby learned about replication, read with the poll's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replication {
    /// The standby's own clock at the poll.
    pub standby_now: DateTime<Utc>,
    /// How far it had replayed, and when the last transaction replayed committed.
    pub replayed: Option<Lsn>,
    pub replayed_at: Option<DateTime<Utc>>,
    /// Where the primary's WAL ended just before the poll (`None`: the primary did not answer).
    pub primary: Option<Lsn>,
}

impl Replication {
    /// Everything the primary had written before the poll was replayed: the data is as of the
    /// standby's clock (even when the primary has been quiet for long and the last replayed
    /// commit is old).
    pub fn caught_up(&self) -> bool {
        matches!((self.replayed, self.primary), (Some(replayed), Some(primary)) if replayed >= primary)
    }

    /// The instant the data read is as of: the standby's clock when caught up, otherwise the
    /// last replayed commit — never later than the standby's clock.
    pub fn as_of(&self) -> DateTime<Utc> {
        if self.caught_up() {
            return self.standby_now;
        }
        self.replayed_at
            .map_or(self.standby_now, |at| at.min(self.standby_now))
    }

    /// How far behind the data is (zero when caught up).
    pub fn delay(&self) -> chrono::Duration {
        self.standby_now - self.as_of()
    }

    /// WAL bytes the standby had still to replay (`None` when the primary did not answer).
    pub fn bytes_behind(&self) -> Option<u64> {
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

    #[test]
    fn a_caught_up_standby_is_as_of_its_clock_a_lagging_one_as_of_its_replay() {
        let caught_up = Replication {
            standby_now: at(100),
            replayed: Some(Lsn(500)),
            // The primary has been quiet for a minute: the last commit is old.
            replayed_at: Some(at(40)),
            primary: Some(Lsn(500)),
        };
        assert!(caught_up.caught_up());
        assert_eq!(caught_up.as_of(), at(100));
        assert_eq!(caught_up.delay(), chrono::Duration::zero());
        assert_eq!(caught_up.bytes_behind(), Some(0));

        let lagging = Replication {
            primary: Some(Lsn(900)),
            replayed_at: Some(at(70)),
            ..caught_up
        };
        assert!(!lagging.caught_up());
        assert_eq!(lagging.as_of(), at(70));
        assert_eq!(lagging.delay(), chrono::Duration::seconds(30));
        assert_eq!(lagging.bytes_behind(), Some(400));

        let primary_unknown = Replication {
            primary: None,
            ..lagging
        };
        assert!(!primary_unknown.caught_up());
        assert_eq!(primary_unknown.bytes_behind(), None);
        // A replay stamp ahead of the standby's clock (clock skew) is not the future.
        let skewed = Replication {
            replayed_at: Some(at(130)),
            ..lagging
        };
        assert_eq!(skewed.as_of(), at(100));
    }
}
