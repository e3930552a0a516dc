//! The poller: a background task that reads the ledger on an interval and publishes whole
//! snapshots. A slow or dead database only delays snapshots; it never blocks input or drawing.
//!
//! Who holds what: the UI keeps the [`PollerHandle`] (commands in, snapshots out through a
//! `watch` channel, which always holds the latest value). The task owns the session's reads and
//! the progress history. On failure it keeps polling with exponential backoff; the session's
//! pool reconnects by itself once the database is back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use uuid::Uuid;

use crate::domain::board::Board;
use crate::domain::model::AuditRecord;
use crate::domain::progress::ProgressTracker;
use crate::domain::session::{Detail, Session};
use crate::domain::signals::Thresholds;
use crate::store::read::LeaseRows;

/// The longest a single poll may take before it counts as failed.
const POLL_TIMEOUT: Duration = Duration::from_secs(8);
/// Backoff ceiling while the database is unreachable.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
pub const MIN_INTERVAL: Duration = Duration::from_millis(500);
pub const MAX_INTERVAL: Duration = Duration::from_secs(60);
pub const AUDIT_SHOWN: i64 = 200;

/// What, besides the board, the UI is looking at (so only that is fetched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Focus {
    Board,
    Detail(Uuid),
    Leases,
    Audit,
}

/// The extra data of the focused view.
#[derive(Debug, Clone)]
pub enum Extra {
    None,
    /// `None`: the bootstrap no longer exists in scope.
    Detail(Box<Option<Detail>>),
    Leases(LeaseRows),
    Audit(Vec<AuditRecord>),
}

/// One successful poll.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub board: Board,
    pub extra: Extra,
    pub focus: Focus,
}

/// The latest state of polling, as the UI sees it.
#[derive(Debug, Clone, Default)]
pub struct PollStatus {
    /// The last good snapshot (kept on screen while the database is away).
    pub snapshot: Option<Arc<Snapshot>>,
    /// When it arrived (local monotonic clock: only for "how long ago").
    pub received_at: Option<Instant>,
    /// How long that poll took.
    pub latency: Option<Duration>,
    /// Set while polls fail: since when, and why.
    pub failing_since: Option<Instant>,
    pub last_error: Option<String>,
    /// Counts every published status, so the UI can tell a new one from the last.
    pub sequence: u64,
    pub paused: bool,
    pub interval: Duration,
}

/// Requests to the poller.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    PollNow,
    Pause(bool),
    Interval(Duration),
    Focus(Focus),
}

/// The UI's end: send commands, watch statuses. Dropping it stops the task.
pub struct PollerHandle {
    pub commands: mpsc::UnboundedSender<Command>,
    pub status: watch::Receiver<PollStatus>,
}

impl PollerHandle {
    pub fn send(&self, command: Command) {
        // The task only ends when this handle is dropped, so a send cannot fail while we
        // still hold it; ignore the impossible error.
        let _ = self.commands.send(command);
    }
}

/// Starts polling `session` every `interval`.
pub fn start(session: Session, interval: Duration, thresholds: Thresholds) -> PollerHandle {
    let (commands, receiver) = mpsc::unbounded_channel();
    let initial = PollStatus {
        interval,
        ..PollStatus::default()
    };
    let (publisher, status) = watch::channel(initial.clone());
    let task = Poller {
        session,
        thresholds,
        tracker: ProgressTracker::new(thresholds.rate_window),
        focus: Focus::Board,
        status: initial,
        publisher,
    };
    tokio::spawn(task.run(receiver));
    PollerHandle { commands, status }
}

struct Poller {
    session: Session,
    thresholds: Thresholds,
    tracker: ProgressTracker,
    focus: Focus,
    status: PollStatus,
    publisher: watch::Sender<PollStatus>,
}

impl Poller {
    async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Command>) {
        let mut failures = 0u32;
        let mut next = tokio::time::Instant::now();
        loop {
            tokio::select! {
                command = commands.recv() => {
                    let Some(command) = command else { return };
                    if self.apply(command) {
                        next = tokio::time::Instant::now();
                    }
                }
                _ = tokio::time::sleep_until(next), if !self.status.paused => {
                    failures = if self.poll_once().await { 0 } else { failures + 1 };
                    next = tokio::time::Instant::now() + self.delay(failures);
                }
            }
        }
    }

    /// Applies a command; returns whether to poll right away.
    fn apply(&mut self, command: Command) -> bool {
        match command {
            Command::PollNow => true,
            Command::Pause(paused) => {
                self.status.paused = paused;
                self.publish();
                !paused
            }
            Command::Interval(interval) => {
                self.status.interval = interval.clamp(MIN_INTERVAL, MAX_INTERVAL);
                self.publish();
                false
            }
            Command::Focus(focus) => {
                let changed = focus != self.focus;
                self.focus = focus;
                changed
            }
        }
    }

    fn delay(&self, failures: u32) -> Duration {
        if failures == 0 {
            return self.status.interval;
        }
        let backoff = Duration::from_secs(1) * 2u32.saturating_pow(failures.min(6) - 1);
        backoff.min(MAX_BACKOFF)
    }

    async fn poll_once(&mut self) -> bool {
        let started = Instant::now();
        let focus = self.focus.clone();
        let result = tokio::time::timeout(POLL_TIMEOUT, fetch(&self.session, &focus)).await;
        match result {
            Ok(Ok((rows, extra))) => {
                let board = Board::assess(rows, &mut self.tracker, &self.thresholds);
                self.status.snapshot = Some(Arc::new(Snapshot {
                    board,
                    extra,
                    focus,
                }));
                self.status.received_at = Some(Instant::now());
                self.status.latency = Some(started.elapsed());
                self.status.failing_since = None;
                self.status.last_error = None;
                self.publish();
                true
            }
            Ok(Err(error)) => {
                self.fail(error);
                false
            }
            Err(_) => {
                self.fail(format!("no answer within {}s", POLL_TIMEOUT.as_secs()));
                false
            }
        }
    }

    fn fail(&mut self, error: String) {
        tracing::warn!("poll failed: {error}");
        self.status.failing_since.get_or_insert_with(Instant::now);
        self.status.last_error = Some(error);
        self.publish();
    }

    fn publish(&mut self) {
        self.status.sequence += 1;
        // No receiver left means the UI is gone; the command channel ends the task next.
        let _ = self.publisher.send(self.status.clone());
    }
}

async fn fetch(
    session: &Session,
    focus: &Focus,
) -> Result<(crate::store::read::BoardRows, Extra), String> {
    let rows = session.board_rows().await.map_err(|e| e.to_string())?;
    let extra = match focus {
        Focus::Board => Extra::None,
        Focus::Detail(id) => Extra::Detail(Box::new(
            session.detail(*id).await.map_err(|e| e.to_string())?,
        )),
        Focus::Leases => Extra::Leases(session.leases().await.map_err(|e| e.to_string())?),
        Focus::Audit => Extra::Audit(
            session
                .recent_audit(AUDIT_SHOWN)
                .await
                .map_err(|e| e.to_string())?,
        ),
    };
    Ok((rows, extra))
}
