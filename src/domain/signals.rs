//! Operator signals (domain contract §2, see [`crate::domain`]): what each bootstrap needs
//! from a human.
//!
//! Every age and expiry is judged against the **database clock** (`now` here), never the local
//! clock: the console often runs on a jump host whose clock drifts.
//!
//! The signals of a row change in two ways: when the row (or its space's lease) changes, and
//! when time passes a threshold (a lease runs out, a job goes quiet for too long). The second
//! kind is predictable, so [`next_change`] says when it happens and the model re-judges only
//! the rows that are due, instead of every row on every tick.

use chrono::{DateTime, Duration, Utc};

use super::model::{Checkpoint, RunState};

/// The thresholds behind the signals; the defaults are those of domain contract §2.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// A mutation lease older than this is suspected to be an orphan.
    pub orphan_after: Duration,
    /// A running or queued job whose row has not changed for this long is stuck.
    pub stuck_after: Duration,
    /// A running job whose remaining lease is below this share of its lease window is late.
    pub heartbeat_late_fraction: f64,
    /// How far back progress rates look.
    pub rate_window: Duration,
    /// How long a worker lease may stay expired before an operator is needed: a live worker
    /// reclaims an expired job within moments (domain contract §1), so until then it is only
    /// watched.
    pub reclaim_grace: Duration,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            orphan_after: Duration::minutes(15),
            stuck_after: Duration::minutes(10),
            heartbeat_late_fraction: 1.0 / 3.0,
            rate_window: Duration::minutes(5),
            reclaim_grace: Duration::minutes(1),
        }
    }
}

/// Why a row is where it is on the board, in attention order (the board's, `status`'s). Each
/// class belongs to one [`Group`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Attention {
    Failed,
    /// Blocked by a mutation lease that is an orphan suspect.
    Blocked,
    /// A worker lease expired and not reclaimed within the reclaim grace.
    LeaseExpired,
    Stuck,
    /// A worker lease just expired: a live worker reclaims it within the grace.
    Reclaiming,
    HeartbeatLate,
    /// Blocked by a young mutation lease: a writer at work, which clears by itself.
    Writing,
    Running,
    Queued,
    Canceled,
    Succeeded,
}

/// What a class asks of the operator: the one vocabulary of the header, the tenants view,
/// `status`, `check`, the JSON and the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    /// Failed; blocked by an orphan-suspect lease; a worker lease expired past the grace;
    /// stuck.
    NeedsOperator,
    /// Heartbeat late; a worker lease just expired; blocked by a writer at work.
    Watch,
    /// Running; queued.
    Progressing,
    /// Succeeded; canceled (an operator's decision, counted apart).
    Done,
}

impl Group {
    pub const ALL: [Group; 4] = [
        Self::NeedsOperator,
        Self::Watch,
        Self::Progressing,
        Self::Done,
    ];

    /// Its name, the same on screen, in `status` and in the JSON.
    pub fn label(self) -> &'static str {
        match self {
            Self::NeedsOperator => "needs an operator",
            Self::Watch => "watch",
            Self::Progressing => "progressing or waiting",
            Self::Done => "done",
        }
    }

    /// Its name as a JSON key.
    pub fn key(self) -> &'static str {
        match self {
            Self::NeedsOperator => "needs_operator",
            Self::Watch => "watch",
            Self::Progressing => "progressing",
            Self::Done => "done",
        }
    }

    /// Its classes, in attention order.
    pub fn classes(self) -> impl Iterator<Item = Attention> {
        Attention::ALL
            .into_iter()
            .filter(move |a| a.group() == self)
    }
}

impl Attention {
    pub const ALL: [Attention; 11] = [
        Self::Failed,
        Self::Blocked,
        Self::LeaseExpired,
        Self::Stuck,
        Self::Reclaiming,
        Self::HeartbeatLate,
        Self::Writing,
        Self::Running,
        Self::Queued,
        Self::Canceled,
        Self::Succeeded,
    ];

    /// How many classes there are.
    pub const COUNT: usize = Self::ALL.len();

    /// A short label, the same on screen and in `--json`.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Failed => "failed",
            Self::Blocked => "blocked",
            Self::LeaseExpired => "lease-expired",
            Self::Stuck => "stuck",
            Self::Reclaiming => "reclaiming",
            Self::HeartbeatLate => "heartbeat-late",
            Self::Writing => "writing",
            Self::Running => "running",
            Self::Queued => "queued",
            Self::Canceled => "canceled",
            Self::Succeeded => "succeeded",
        }
    }

    /// The group it belongs to.
    pub fn group(self) -> Group {
        match self {
            Self::Failed | Self::Blocked | Self::LeaseExpired | Self::Stuck => Group::NeedsOperator,
            Self::Reclaiming | Self::HeartbeatLate | Self::Writing => Group::Watch,
            Self::Running | Self::Queued => Group::Progressing,
            Self::Canceled | Self::Succeeded => Group::Done,
        }
    }

    /// Whether an operator is needed now (the first group).
    pub fn needs_operator(self) -> bool {
        self.group() == Group::NeedsOperator
    }

    /// Position in [`Self::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What the signals of one bootstrap are judged from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Facts {
    pub(crate) run_state: RunState,
    pub(crate) checkpoint: Checkpoint,
    pub(crate) updated_at: DateTime<Utc>,
    /// The worker lease of a running job: (expires at, last heartbeat).
    pub(crate) worker: Option<(DateTime<Utc>, DateTime<Utc>)>,
    /// The space's mutation lease, if it has one: (acquired at, heartbeat expiry where the
    /// lease table has heartbeats).
    pub lease: Option<(DateTime<Utc>, Option<DateTime<Utc>>)>,
}

/// Everything the board shows about one bootstrap besides its columns. Ages are not stored:
/// they are computed against the clock of the moment they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signals {
    pub readable: bool,
    pub failed: bool,
    pub blocked_by_lease: bool,
    /// The space's mutation lease is an orphan suspect ([`lease_is_orphan_suspect`]).
    pub lease_orphan_suspect: bool,
    pub lease_expired: bool,
    pub heartbeat_late: bool,
    pub stuck: bool,
    pub attention: Attention,
}

impl Signals {
    /// Before a row is judged (the model always judges it before placing it).
    pub(crate) const UNJUDGED: Signals = Signals {
        readable: false,
        failed: false,
        blocked_by_lease: false,
        lease_orphan_suspect: false,
        lease_expired: false,
        heartbeat_late: false,
        stuck: false,
        attention: Attention::Queued,
    };
}

/// The instants at which a fact's signals flip, as the rules define them.
struct Instants {
    expires_at: Option<DateTime<Utc>>,
    /// The worker lease's expiry plus the reclaim grace.
    unreclaimed_at: Option<DateTime<Utc>>,
    late_at: Option<DateTime<Utc>>,
    stuck_at: Option<DateTime<Utc>>,
    orphan_at: Option<DateTime<Utc>>,
}

fn instants_of(facts: &Facts, t: &Thresholds) -> Instants {
    let worker = facts
        .worker
        .filter(|_| facts.run_state == RunState::Running);
    Instants {
        expires_at: worker.map(|(expires, _)| expires),
        unreclaimed_at: worker.map(|(expires, _)| expires + t.reclaim_grace),
        late_at: worker.and_then(|(expires, heartbeat)| late_at(expires, heartbeat, t)),
        stuck_at: matches!(facts.run_state, RunState::Running | RunState::Queued)
            .then(|| facts.updated_at + t.stuck_after),
        orphan_at: facts
            .lease
            .map(|(acquired_at, expires_at)| orphan_at(acquired_at, expires_at, t)),
    }
}

/// When a worker lease enters its last `heartbeat_late_fraction` of the lease window; `None`
/// for a lease without a window (renewed at or after its own expiry).
pub(crate) fn late_at(
    expires_at: DateTime<Utc>,
    heartbeat_at: DateTime<Utc>,
    t: &Thresholds,
) -> Option<DateTime<Utc>> {
    let window_us = (expires_at - heartbeat_at).num_microseconds()?;
    if window_us <= 0 {
        return None;
    }
    // Microseconds, floored: the SQL summary computes exactly the same instant.
    let late_us = (window_us as f64 * t.heartbeat_late_fraction).floor() as i64;
    Some(expires_at - Duration::microseconds(late_us))
}

/// From when a mutation lease looks abandoned (domain contract §2 and §3): past the orphan
/// threshold ("older than": the first instant after it) and, where leases have heartbeats,
/// past its expiry.
fn orphan_at(
    acquired_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    t: &Thresholds,
) -> DateTime<Utc> {
    let old = acquired_at + t.orphan_after + Duration::microseconds(1);
    expires_at.map_or(old, |expiry| old.max(expiry))
}

/// Whether a mutation lease looks abandoned: the rule the board, the detail and `status` judge
/// by as time passes. A lease removal is decided by the database's own copy
/// (`bootstrap_console.lease_orphan_at`, console schema unit 0005), which a test holds to the
/// same answer at every edge.
pub fn lease_is_orphan_suspect(
    acquired_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    t: &Thresholds,
) -> bool {
    now >= orphan_at(acquired_at, expires_at, t)
}

/// The signals of one bootstrap at `now` (database clock).
pub fn assess(facts: &Facts, now: DateTime<Utc>, thresholds: &Thresholds) -> Signals {
    let state = facts.run_state;
    let at = instants_of(facts, thresholds);
    let reached = |instant: Option<DateTime<Utc>>| instant.is_some_and(|i| now >= i);
    let readable = state == RunState::Succeeded;
    let failed = state == RunState::Failed;
    let blocked_by_lease =
        !readable && facts.checkpoint == Checkpoint::PendingSnapshot && facts.lease.is_some();
    let lease_expired = reached(at.expires_at);
    let heartbeat_late = !lease_expired && reached(at.late_at);
    let stuck = reached(at.stuck_at);
    let orphan_suspect = reached(at.orphan_at);

    let attention = if failed {
        Attention::Failed
    } else if blocked_by_lease && orphan_suspect {
        Attention::Blocked
    } else if blocked_by_lease {
        Attention::Writing
    } else if reached(at.unreclaimed_at) {
        Attention::LeaseExpired
    } else if stuck {
        Attention::Stuck
    } else if lease_expired {
        Attention::Reclaiming
    } else if heartbeat_late {
        Attention::HeartbeatLate
    } else {
        match state {
            RunState::Running => Attention::Running,
            RunState::Queued => Attention::Queued,
            RunState::Canceled => Attention::Canceled,
            RunState::Succeeded => Attention::Succeeded,
            RunState::Failed => Attention::Failed,
        }
    };
    Signals {
        readable,
        failed,
        blocked_by_lease,
        lease_orphan_suspect: orphan_suspect,
        lease_expired,
        heartbeat_late,
        stuck,
        attention,
    }
}

/// The first instant after `now` at which [`assess`] would say something else, if the row and
/// its lease stay as they are; `None` when time alone changes nothing any more.
pub(crate) fn next_change(
    facts: &Facts,
    now: DateTime<Utc>,
    thresholds: &Thresholds,
) -> Option<DateTime<Utc>> {
    let at = instants_of(facts, thresholds);
    [
        at.expires_at,
        at.unreclaimed_at,
        at.late_at,
        at.stuck_at,
        at.orphan_at,
    ]
    .into_iter()
    .flatten()
    .filter(|instant| *instant > now)
    .min()
}

/// Since when a row has been in its attention class, as far as the ledger tells: the ledger
/// records no time of entering a state, so this is the instant the class's own rule points at.
pub(crate) fn attention_since(
    facts: &Facts,
    attention: Attention,
    completed_at: Option<DateTime<Utc>>,
    thresholds: &Thresholds,
) -> Option<DateTime<Utc>> {
    let at = instants_of(facts, thresholds);
    match attention {
        Attention::Failed => completed_at.or(Some(facts.updated_at)),
        Attention::Blocked | Attention::Writing => facts.lease.map(|(acquired_at, _)| acquired_at),
        Attention::LeaseExpired | Attention::Reclaiming => at.expires_at,
        Attention::Stuck => at.stuck_at,
        Attention::HeartbeatLate => at.late_at,
        _ => None,
    }
}

/// A fractional number of minutes as a duration (saturating at one year).
pub(crate) fn minutes(value: f64) -> Duration {
    let millis = (value * 60_000.0).clamp(0.0, 365.0 * 24.0 * 3_600_000.0);
    Duration::milliseconds(millis as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(1_800_000_000 + seconds, 0).expect("valid")
    }

    fn running(expires: i64, heartbeat: i64, updated: i64) -> Facts {
        Facts {
            run_state: RunState::Running,
            checkpoint: Checkpoint::Rebuilding,
            updated_at: at(updated),
            worker: Some((at(expires), at(heartbeat))),
            lease: None,
        }
    }

    #[test]
    fn a_running_job_goes_late_then_expires_then_stuck_on_schedule() {
        let t = Thresholds::default();
        // A 30 s lease renewed at 0: late from 20 s, expired from 30 s (reclaiming), past the
        // grace from 90 s, stuck from 600 s.
        let facts = running(30, 0, 0);
        let mut now = at(1);
        let mut seen = vec![assess(&facts, now, &t).attention];
        while let Some(next) = next_change(&facts, now, &t) {
            now = next;
            seen.push(assess(&facts, now, &t).attention);
        }
        assert_eq!(
            seen,
            [
                Attention::Running,
                Attention::HeartbeatLate,
                Attention::Reclaiming,
                Attention::LeaseExpired,
                Attention::LeaseExpired
            ]
        );
        assert_eq!(now, at(600), "the last change is the stuck threshold");
        assert!(assess(&facts, now, &t).stuck);
    }

    #[test]
    fn between_changes_the_signals_do_not_move() {
        let t = Thresholds::default();
        let facts = running(30, 0, 0);
        let next = next_change(&facts, at(1), &t).expect("late at 20 s");
        assert_eq!(next, at(20));
        let before = next - Duration::microseconds(1);
        assert_eq!(assess(&facts, at(1), &t), assess(&facts, before, &t));
        assert_ne!(assess(&facts, before, &t), assess(&facts, next, &t));
    }

    #[test]
    fn a_lease_becomes_an_orphan_suspect_once_older_than_the_threshold() {
        let t = Thresholds::default();
        let facts = Facts {
            run_state: RunState::Succeeded,
            checkpoint: Checkpoint::Published,
            updated_at: at(0),
            worker: None,
            lease: Some((at(0), None)),
        };
        let past = at(900) + Duration::microseconds(1);
        assert_eq!(next_change(&facts, at(5), &t), Some(past));
        assert!(
            !assess(&facts, at(900), &t).lease_orphan_suspect,
            "not older yet"
        );
        assert!(assess(&facts, past, &t).lease_orphan_suspect);
        assert_eq!(next_change(&facts, past, &t), None);
    }

    #[test]
    fn a_lease_kept_live_by_its_heartbeat_is_no_orphan_suspect_until_it_expires() {
        let t = Thresholds::default();
        let facts = Facts {
            run_state: RunState::Queued,
            checkpoint: Checkpoint::PendingSnapshot,
            updated_at: at(0),
            worker: None,
            lease: Some((at(0), Some(at(2000)))),
        };
        assert!(
            !assess(&facts, at(1000), &t).lease_orphan_suspect,
            "old, but live"
        );
        assert_eq!(next_change(&facts, at(1000), &t), Some(at(2000)));
        assert!(assess(&facts, at(2000), &t).lease_orphan_suspect);
        assert!(lease_is_orphan_suspect(at(0), Some(at(2000)), at(2000), &t));
        assert!(!lease_is_orphan_suspect(
            at(0),
            Some(at(2000)),
            at(1999),
            &t
        ));
    }

    #[test]
    fn a_young_lease_is_a_writer_at_work_and_an_old_one_needs_an_operator() {
        let t = Thresholds::default();
        let facts = Facts {
            run_state: RunState::Queued,
            checkpoint: Checkpoint::PendingSnapshot,
            updated_at: at(0),
            worker: None,
            lease: Some((at(0), None)),
        };
        let young = assess(&facts, at(60), &t).attention;
        assert_eq!(young, Attention::Writing);
        assert_eq!(young.group(), Group::Watch);
        let old = assess(&facts, at(901), &t).attention;
        assert_eq!(old, Attention::Blocked);
        assert!(old.needs_operator());
    }

    #[test]
    fn every_class_is_in_one_group_in_attention_order() {
        let groups: Vec<Group> = Attention::ALL.iter().map(|a| a.group()).collect();
        assert!(groups.windows(2).all(|w| w[0] <= w[1]), "{groups:?}");
        let counted: usize = Group::ALL.iter().map(|g| g.classes().count()).sum();
        assert_eq!(counted, Attention::COUNT);
    }
}
