//! Mutation leases as the operator judges them: how long each has been held against the orphan
//! threshold, whether its writer still heartbeats, and which bootstrap it blocks. Assessed once
//! per poll for the leases view, and by lease removal for its plan and its guard.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::ids::IdNames;
use super::model::{Checkpoint, MutationLease, RowError, RunState};
use super::signals::{self, Thresholds};
use super::text;
use crate::store::read::{LeaseLine, LeaseRows};

/// The bootstrap of a lease's space, as far as the lease's judgement needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeasedJob {
    pub bootstrap_id: Uuid,
    pub(crate) run_state: RunState,
    pub(crate) checkpoint: Checkpoint,
}

impl LeasedJob {
    /// A job waiting for its snapshot cannot take it while a writer holds the space (domain
    /// contract §2).
    pub(crate) fn is_blocked(&self) -> bool {
        self.checkpoint == Checkpoint::PendingSnapshot && self.run_state != RunState::Succeeded
    }
}

/// What removing a lease rests on, measured on the database clock.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseEvidence {
    pub lease: MutationLease,
    pub(crate) job: Option<LeasedJob>,
    pub db_now: DateTime<Utc>,
    pub(crate) thresholds: Thresholds,
}

impl LeaseEvidence {
    pub fn new(
        lease: MutationLease,
        job: Option<LeasedJob>,
        db_now: DateTime<Utc>,
        thresholds: &Thresholds,
    ) -> Self {
        Self {
            lease,
            job,
            db_now,
            thresholds: *thresholds,
        }
    }

    pub(crate) fn held_for(&self) -> Duration {
        self.db_now - self.lease.acquired_at
    }

    /// Where the lease table has heartbeat columns: the writer renewed it and it has not
    /// expired yet.
    pub(crate) fn live_until(&self) -> Option<DateTime<Utc>> {
        self.lease.expires_at.filter(|at| *at > self.db_now)
    }

    /// Domain contract §2 and §3: older than the orphan threshold and not kept live by a
    /// heartbeat.
    pub(crate) fn orphan_suspect(&self) -> bool {
        signals::lease_is_orphan_suspect(
            self.lease.acquired_at,
            self.lease.expires_at,
            self.db_now,
            &self.thresholds,
        )
    }

    /// Why it is, or is not, an orphan suspect, in a few words.
    pub fn summary(&self) -> String {
        let mut words = format!(
            "held {} against an orphan threshold of {}",
            crate::domain::duration::human(self.held_for()),
            crate::domain::duration::human(self.thresholds.orphan_after)
        );
        match (self.lease.expires_at, self.live_until()) {
            (_, Some(until)) => words.push_str(&format!(
                ", heartbeat live for {}",
                crate::domain::duration::human(until - self.db_now)
            )),
            (Some(expired), None) => words.push_str(&format!(
                ", heartbeat expired {} ago",
                crate::domain::duration::human(self.db_now - expired)
            )),
            (None, None) => {}
        }
        words
    }

    /// The lines a removal plan shows before its changes.
    pub(crate) fn lines(&self, names: &IdNames) -> Vec<String> {
        let verdict = if self.orphan_suspect() {
            "orphan suspect"
        } else {
            "NOT an orphan suspect"
        };
        let mut lines = vec![
            format!(
                "operation {} by tenant {}",
                text::clean(&self.lease.operation, 32),
                text::clean(&self.lease.tenant_id, 40)
            ),
            format!("{verdict}: {}", self.summary()),
        ];
        lines.push(match &self.job {
            Some(job) if job.is_blocked() => format!(
                "blocks space {}: its bootstrap {} is {} at {}",
                names.short(&self.lease.knowledge_space_id),
                names.short(&job.bootstrap_id),
                job.run_state,
                job.checkpoint
            ),
            Some(job) => format!(
                "space {} is not blocked by it (bootstrap {} at {})",
                names.short(&self.lease.knowledge_space_id),
                job.run_state,
                job.checkpoint
            ),
            None => format!(
                "space {} has no bootstrap",
                names.short(&self.lease.knowledge_space_id)
            ),
        });
        lines
    }
}

/// The leases view's data: every lease in scope, judged once per poll.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseBoard {
    pub db_now: DateTime<Utc>,
    pub leases: Vec<LeaseEvidence>,
}

impl LeaseBoard {
    /// Parses and judges the rows; a job state the console does not know is an error naming
    /// the row, never a guess.
    pub fn assess(rows: LeaseRows, thresholds: &Thresholds) -> Result<Self, RowError> {
        let db_now = rows.db_now;
        let leases = rows
            .lines
            .into_iter()
            .map(|line| {
                let job = leased_job(&line)?;
                Ok(LeaseEvidence::new(
                    MutationLease::from(line.lease),
                    job,
                    db_now,
                    thresholds,
                ))
            })
            .collect::<Result<_, RowError>>()?;
        Ok(Self { db_now, leases })
    }
}

fn leased_job(line: &LeaseLine) -> Result<Option<LeasedJob>, RowError> {
    let (Some(id), Some(state), Some(checkpoint)) = (
        line.bootstrap_id,
        line.bootstrap_run_state.as_deref(),
        line.bootstrap_checkpoint.as_deref(),
    ) else {
        return Ok(None);
    };
    let unknown = |column: &str, value: &str| {
        RowError::new(
            "bootstrap",
            id,
            format!("unknown {column} {:?}", text::clip(value, 40)),
        )
    };
    Ok(Some(LeasedJob {
        bootstrap_id: id,
        run_state: RunState::parse(state).ok_or_else(|| unknown("run_state", state))?,
        checkpoint: Checkpoint::parse(checkpoint)
            .ok_or_else(|| unknown("checkpoint", checkpoint))?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn lease(
        acquired_mins_ago: i64,
        expires_in_mins: Option<i64>,
    ) -> (MutationLease, DateTime<Utc>) {
        let now = Utc
            .with_ymd_and_hms(2026, 12, 1, 9, 0, 0)
            .single()
            .expect("a valid instant");
        let lease = MutationLease {
            id: Uuid::from_u128(7),
            tenant_id: "acme".into(),
            knowledge_space_id: Uuid::from_u128(8),
            operation: "upload".into(),
            acquired_at: now - Duration::minutes(acquired_mins_ago),
            heartbeat_at: None,
            expires_at: expires_in_mins.map(|m| now + Duration::minutes(m)),
        };
        (lease, now)
    }

    #[test]
    fn young_or_live_leases_are_not_orphan_suspects() {
        let t = Thresholds::default();
        let (young, now) = lease(2, None);
        assert!(!LeaseEvidence::new(young, None, now, &t).orphan_suspect());
        let (old_but_live, now) = lease(120, Some(1));
        let live = LeaseEvidence::new(old_but_live, None, now, &t);
        assert!(!live.orphan_suspect());
        assert!(
            live.summary().contains("heartbeat live for 1m00s"),
            "{}",
            live.summary()
        );
        let (old_expired, now) = lease(120, Some(-3));
        let orphan = LeaseEvidence::new(old_expired, None, now, &t);
        assert!(orphan.orphan_suspect());
        assert_eq!(
            orphan.summary(),
            "held 2h00m against an orphan threshold of 15m00s, heartbeat expired 3m00s ago"
        );
    }

    #[test]
    fn the_lines_name_the_operation_and_what_is_blocked() {
        let (old, now) = lease(120, None);
        let job = LeasedJob {
            bootstrap_id: Uuid::from_u128(9),
            run_state: RunState::Queued,
            checkpoint: Checkpoint::PendingSnapshot,
        };
        let lines =
            LeaseEvidence::new(old, Some(job), now, &Thresholds::default()).lines(&IdNames::EMPTY);
        assert_eq!(lines[0], "operation upload by tenant acme");
        assert!(
            lines[1].starts_with("orphan suspect: held 2h00m"),
            "{}",
            lines[1]
        );
        assert_eq!(
            lines[2],
            "blocks space 00000000: its bootstrap 00000000 is queued at pending_snapshot"
        );
    }
}
