//! Operator signals (SPEC §2): what each bootstrap needs from a human, derived from one snapshot.
//!
//! Every age and expiry is computed against the **database clock** read in the same snapshot
//! (`now` here), never the local clock: the console often runs on a jump host whose clock
//! drifts.

use chrono::{DateTime, Duration, Utc};

use super::model::{Bootstrap, Checkpoint, MutationLease, RunState};

/// The thresholds behind the signals; the defaults are SPEC §2's.
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
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            orphan_after: Duration::minutes(15),
            stuck_after: Duration::minutes(10),
            heartbeat_late_fraction: 1.0 / 3.0,
            rate_window: Duration::minutes(5),
        }
    }
}

/// Why a row is where it is on the board: the first of these that applies, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Attention {
    Failed,
    Blocked,
    LeaseExpired,
    Stuck,
    HeartbeatLate,
    Running,
    Queued,
    Canceled,
    Succeeded,
}

impl Attention {
    pub const ALL: [Attention; 9] = [
        Self::Failed,
        Self::Blocked,
        Self::LeaseExpired,
        Self::Stuck,
        Self::HeartbeatLate,
        Self::Running,
        Self::Queued,
        Self::Canceled,
        Self::Succeeded,
    ];

    /// A short label, the same on screen and in `--json`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Failed => "failed",
            Self::Blocked => "blocked",
            Self::LeaseExpired => "lease-expired",
            Self::Stuck => "stuck",
            Self::HeartbeatLate => "heartbeat-late",
            Self::Running => "running",
            Self::Queued => "queued",
            Self::Canceled => "canceled",
            Self::Succeeded => "succeeded",
        }
    }

    /// Whether a human should look now (everything above plain running).
    pub fn needs_attention(self) -> bool {
        self < Self::Running
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.label() == text)
    }
}

/// Progress of one job through its frozen document set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub completed: i32,
    pub total: i32,
    /// Documents per minute over the rate window, when there is enough history.
    pub rate_per_minute: Option<f64>,
    /// Time to finish at that rate.
    pub eta: Option<Duration>,
}

impl Progress {
    /// 0.0–1.0; a job with nothing to do is complete only once it succeeded.
    pub fn fraction(&self) -> f64 {
        if self.total > 0 {
            f64::from(self.completed) / f64::from(self.total)
        } else {
            0.0
        }
    }
}

/// Everything the board shows about one bootstrap besides its columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Signals {
    pub readable: bool,
    pub failed: bool,
    pub blocked_by_lease: bool,
    /// The space's mutation lease is older than the orphan threshold.
    pub lease_orphan_suspect: bool,
    pub lease_expired: bool,
    pub heartbeat_late: bool,
    pub stuck: bool,
    pub attention: Attention,
    /// Worker lease time left (negative once expired); running jobs only.
    pub lease_remaining: Option<Duration>,
    /// Time since the worker's last heartbeat; running jobs only.
    pub heartbeat_age: Option<Duration>,
    /// Time since the row last changed.
    pub idle_for: Duration,
    /// Age of the space's mutation lease, if any.
    pub mutation_lease_age: Option<Duration>,
    pub progress: Progress,
}

/// Whether a mutation lease looks abandoned (SPEC §2: older than the orphan threshold).
pub fn lease_is_orphan_suspect(lease: &MutationLease, now: DateTime<Utc>, t: &Thresholds) -> bool {
    now - lease.acquired_at > t.orphan_after
}

/// The signals of one bootstrap at `now` (database clock).
pub fn assess(
    bootstrap: &Bootstrap,
    lease: Option<&MutationLease>,
    now: DateTime<Utc>,
    thresholds: &Thresholds,
    rate_per_minute: Option<f64>,
) -> Signals {
    let state = bootstrap.run_state;
    let readable = state == RunState::Succeeded;
    let failed = state == RunState::Failed;
    let blocked_by_lease =
        !readable && bootstrap.checkpoint == Checkpoint::PendingSnapshot && lease.is_some();
    let worker = bootstrap
        .worker
        .as_ref()
        .filter(|_| state == RunState::Running);
    let lease_remaining = worker.map(|w| w.expires_at - now);
    let lease_expired = lease_remaining.is_some_and(|left| left <= Duration::zero());
    let heartbeat_late = worker.is_some_and(|w| {
        let window = w.expires_at - w.heartbeat_at;
        let left = w.expires_at - now;
        !lease_expired
            && window > Duration::zero()
            && ratio(left, window) < thresholds.heartbeat_late_fraction
    });
    let idle_for = now - bootstrap.updated_at;
    let stuck =
        matches!(state, RunState::Running | RunState::Queued) && idle_for >= thresholds.stuck_after;

    let attention = if failed {
        Attention::Failed
    } else if blocked_by_lease {
        Attention::Blocked
    } else if lease_expired {
        Attention::LeaseExpired
    } else if stuck {
        Attention::Stuck
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

    let remaining = bootstrap.total_documents - bootstrap.completed_documents;
    // Only a job that is being worked on is heading anywhere.
    let eta = rate_per_minute
        .filter(|rate| *rate > 0.0 && state == RunState::Running)
        .map(|rate| minutes(f64::from(remaining) / rate));
    Signals {
        readable,
        failed,
        blocked_by_lease,
        lease_orphan_suspect: lease.is_some_and(|l| lease_is_orphan_suspect(l, now, thresholds)),
        lease_expired,
        heartbeat_late,
        stuck,
        attention,
        lease_remaining,
        heartbeat_age: worker.map(|w| now - w.heartbeat_at),
        idle_for,
        mutation_lease_age: lease.map(|l| now - l.acquired_at),
        progress: Progress {
            completed: bootstrap.completed_documents,
            total: bootstrap.total_documents,
            rate_per_minute,
            eta,
        },
    }
}

fn ratio(part: Duration, whole: Duration) -> f64 {
    part.num_milliseconds() as f64 / whole.num_milliseconds() as f64
}

/// A fractional number of minutes as a duration (saturating at one year).
pub fn minutes(value: f64) -> Duration {
    let millis = (value * 60_000.0).clamp(0.0, 365.0 * 24.0 * 3_600_000.0);
    Duration::milliseconds(millis as i64)
}
