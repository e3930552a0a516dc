//! The pipeline gate (`status --until CHECKPOINT`): whether every space in scope has reached a
//! checkpoint, and whether something happened that waiting will not fix.
//!
//! Judged from the summary (one aggregate statement) and the lease table (small), so a gate
//! polling every few seconds costs what a `status` summary costs.

use uuid::Uuid;

use super::board::Summary;
use super::leases::LeaseBoard;
use super::model::{Checkpoint, RunState};

/// Where the rollout stands against the gate, at one poll.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GateReading {
    pub(crate) until: Checkpoint,
    /// Spaces at `until` or past it.
    pub(crate) reached: u32,
    pub spaces: u32,
    /// Failed and canceled spaces short of the checkpoint.
    pub(crate) failed: u32,
    pub(crate) canceled: u32,
    /// Rows the console cannot read (a state or combination the protocol forbids): in scope,
    /// never reached, and a reason to stop.
    pub unreadable: u32,
    /// Spaces held at `pending_snapshot` by a mutation lease suspected orphaned: no writer
    /// will release them. A routine writer's lease is not counted.
    pub(crate) orphan_blocked: Vec<Uuid>,
    /// Documents still to rebuild in captured spaces.
    pub(crate) documents_remaining: i64,
}

/// What the gate decides at one poll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GateVerdict {
    /// Every space in scope has reached the checkpoint.
    Done,
    /// Waiting will not get there: a space failed, was canceled or is blocked by an orphan.
    Stuck(String),
    /// Not yet.
    Waiting,
}

impl GateReading {
    /// From the summary, the rows it could not read, and the leases.
    pub fn new(until: Checkpoint, summary: &Summary, unreadable: u32, leases: &LeaseBoard) -> Self {
        let reached = Checkpoint::ALL
            .iter()
            .filter(|c| c.index() >= until.index())
            .flat_map(|c| RunState::ALL.iter().map(|s| summary.in_state(*c, *s)))
            .sum();
        // Only what keeps a space from the checkpoint stops the gate: a space that failed or
        // was canceled past it has reached it (its snapshot was captured, say).
        let short_of = |state: RunState| -> u32 {
            Checkpoint::ALL
                .iter()
                .filter(|c| c.index() < until.index())
                .map(|c| summary.in_state(*c, state))
                .sum()
        };
        // A failed or canceled space is counted as that, not again as blocked.
        let orphan_blocked = leases
            .leases
            .iter()
            .filter(|l| {
                l.orphan_suspect()
                    && l.job.as_ref().is_some_and(|j| {
                        j.is_blocked()
                            && matches!(j.run_state, RunState::Queued | RunState::Running)
                    })
            })
            .map(|l| l.lease.knowledge_space_id)
            .collect();
        Self {
            until,
            reached,
            spaces: summary.spaces + unreadable,
            failed: short_of(RunState::Failed),
            canceled: short_of(RunState::Canceled),
            unreadable,
            orphan_blocked,
            documents_remaining: summary.documents_remaining,
        }
    }

    /// Done, stuck (unless `keep_going`), or still waiting. A space that cannot reach the
    /// checkpoint by waiting (failed, canceled or orphan-blocked short of it, or unreadable)
    /// stops the gate, whether or not the others are there yet: the same ledger gives the same
    /// answer whenever it is read.
    pub(crate) fn verdict(&self, keep_going: bool) -> GateVerdict {
        if !keep_going && let Some(why) = self.stop_reasons() {
            return GateVerdict::Stuck(why);
        }
        if self.reached == self.spaces {
            GateVerdict::Done
        } else {
            GateVerdict::Waiting
        }
    }

    /// What waiting will not fix, said in one phrase; `None` when nothing is.
    fn stop_reasons(&self) -> Option<String> {
        let mut reasons = Vec::new();
        if self.failed > 0 {
            reasons.push(format!("{} failed", self.failed));
        }
        if self.canceled > 0 {
            reasons.push(format!("{} canceled", self.canceled));
        }
        if !self.orphan_blocked.is_empty() {
            reasons.push(format!(
                "{} blocked by an orphan-suspect mutation lease",
                self.orphan_blocked.len()
            ));
        }
        if self.unreadable > 0 {
            reasons.push(format!(
                "{} unreadable (a state the protocol forbids)",
                self.unreadable
            ));
        }
        (!reasons.is_empty()).then(|| reasons.join(", "))
    }

    /// How far along, 0.0–1.0 (1.0 for an empty scope: nothing to wait for).
    pub(crate) fn fraction(&self) -> f64 {
        if self.spaces == 0 {
            1.0
        } else {
            f64::from(self.reached) / f64::from(self.spaces)
        }
    }

    /// The counts first, for a line that may be cut at 80 columns: `1234/100000 · failed 0 ·
    /// canceled 0 · orphan 0 · published`.
    pub(crate) fn short_line(&self) -> String {
        format!(
            "{}/{} · failed {} · canceled {} · orphan {} · {}",
            self.reached,
            self.spaces,
            self.failed,
            self.canceled,
            self.orphan_blocked.len(),
            self.until.as_str()
        )
    }

    /// `published 1234/100000 (1.2%) · failed 0 · canceled 0 · orphan-blocked 0 · 5120 docs
    /// to rebuild` (the failed and canceled short of the checkpoint).
    pub(crate) fn line(&self) -> String {
        format!(
            "{} {}/{} ({:.1}%) · failed {} · canceled {} · orphan-blocked {} · {} docs to rebuild",
            self.until.as_str(),
            self.reached,
            self.spaces,
            self.fraction() * 100.0,
            self.failed,
            self.canceled,
            self.orphan_blocked.len(),
            self.documents_remaining
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::signals::Attention;

    fn summary(cells: &[(Checkpoint, RunState, u32)], failed: u32) -> Summary {
        let mut summary = Summary::default();
        for (c, s, n) in cells {
            summary.matrix[c.index()][s.index()] += n;
            summary.spaces += n;
        }
        summary.by_attention[Attention::Failed.index()] = failed;
        summary
    }

    fn leases() -> LeaseBoard {
        LeaseBoard {
            db_now: chrono::Utc::now(),
            leases: Vec::new(),
        }
    }

    #[test]
    fn spaces_past_the_checkpoint_count_as_reached() {
        let s = summary(
            &[
                (Checkpoint::Rebuilding, RunState::Running, 2),
                (Checkpoint::Verifying, RunState::Running, 1),
                (Checkpoint::Published, RunState::Succeeded, 3),
            ],
            0,
        );
        let at = |until| GateReading::new(until, &s, 0, &leases());
        assert_eq!(at(Checkpoint::Rebuilding).verdict(false), GateVerdict::Done);
        let published = at(Checkpoint::Published);
        assert_eq!((published.reached, published.spaces), (3, 6));
        assert_eq!(published.verdict(false), GateVerdict::Waiting);
    }

    #[test]
    fn a_failure_or_a_cancel_stops_the_gate_unless_it_keeps_going() {
        let s = summary(
            &[
                (Checkpoint::Rebuilding, RunState::Failed, 1),
                (Checkpoint::SnapshotCaptured, RunState::Canceled, 2),
                (Checkpoint::Published, RunState::Succeeded, 3),
            ],
            1,
        );
        let reading = GateReading::new(Checkpoint::Published, &s, 0, &leases());
        assert_eq!(
            reading.verdict(false),
            GateVerdict::Stuck("1 failed, 2 canceled".into())
        );
        assert_eq!(reading.verdict(true), GateVerdict::Waiting);
        // Past the checkpoint they have reached it: every snapshot is captured.
        let past = GateReading::new(Checkpoint::SnapshotCaptured, &s, 0, &leases());
        assert_eq!(past.reached, past.spaces);
        assert_eq!(past.verdict(false), GateVerdict::Done);
        // Short of it they stop the gate, whether or not the rest is there yet.
        let short = GateReading::new(Checkpoint::Verifying, &s, 0, &leases());
        assert_eq!(
            short.verdict(false),
            GateVerdict::Stuck("1 failed, 2 canceled".into())
        );
    }

    #[test]
    fn an_unreadable_row_is_never_reached_and_stops_the_gate() {
        let s = summary(&[(Checkpoint::Published, RunState::Succeeded, 3)], 0);
        let reading = GateReading::new(Checkpoint::Published, &s, 1, &leases());
        assert_eq!((reading.reached, reading.spaces), (3, 4));
        assert_eq!(
            reading.verdict(false),
            GateVerdict::Stuck("1 unreadable (a state the protocol forbids)".into())
        );
        assert_eq!(reading.verdict(true), GateVerdict::Waiting);
    }

    #[test]
    fn an_empty_scope_has_nothing_to_wait_for() {
        let reading = GateReading::new(Checkpoint::Published, &Summary::default(), 0, &leases());
        assert_eq!(reading.verdict(false), GateVerdict::Done);
        assert_eq!(reading.fraction(), 1.0);
    }
}
