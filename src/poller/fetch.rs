//! The IO half of the poller: polls on its cadence, fetches the focused view, reports health.
//!
//! A change of focus is answered at once with that view's query alone (opening a detail never
//! waits for a poll); a regular poll runs the incremental sync plus the focused view's query.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use uuid::Uuid;

use super::cadence::Cadence;
use super::model::Input;
use super::{AUDIT_SHOWN, Extra, Focus, Focused, PollHealth, PollerOptions, REPLAY_WAIT};
use crate::domain::reads::Reads;
use crate::domain::session::Session;
use crate::store::db::read_tx;
use crate::store::replica::{self, ReplayMark, Replication};
use crate::store::sync::LedgerSync;
use crate::topology::{Topology, TopologyHandle};

/// The longest a regular poll may take before it counts as failed.
const POLL_TIMEOUT: Duration = Duration::from_secs(8);
/// The first load reads the whole ledger, so it may take longer.
const LOAD_TIMEOUT: Duration = Duration::from_secs(60);

/// Requests from the UI.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Request {
    PollNow,
    Pause(bool),
    Interval(Duration),
    Focus(Focus),
    AwaitReplay(ReplayMark),
    Messages(Vec<Uuid>),
}

struct Fetcher {
    session: Session,
    sync: LedgerSync,
    cadence: Cadence,
    polling: PollHealth,
    focus: Focus,
    model: mpsc::UnboundedSender<Input>,
    /// The topology polls run on, watched for changes.
    topology: TopologyHandle,
    /// The server polls read, as last published.
    reads_from: Option<String>,
    /// An action the standby had not replayed when the bounded wait ended.
    unreplayed: Option<ReplayMark>,
}

pub(super) async fn run(
    session: Session,
    options: PollerOptions,
    mut inbox: mpsc::UnboundedReceiver<Request>,
    model: mpsc::UnboundedSender<Input>,
) {
    let tenant = session.tenant_scope().map(str::to_string);
    let cadence = Cadence::new(options.interval);
    let mut fetcher = Fetcher {
        topology: session.topology_handle().clone(),
        reads_from: None,
        sync: LedgerSync::new(tenant, options.sync),
        polling: PollHealth {
            interval: cadence.interval(),
            loading: true,
            ..PollHealth::default()
        },
        cadence,
        session,
        focus: Focus::Board,
        model,
        unreplayed: None,
    };
    fetcher.note_servers(&fetcher.session.topology());
    let mut poll_now = false;
    let mut focus_changed = false;
    let mut wanted_messages: Option<Vec<Uuid>> = None;
    // Waits for a standby to replay an action run beside the loop (pause and focus requests
    // are not held behind them); polls wait for them, and the poll after one shows the action.
    let (replayed, mut replay_answers) = mpsc::unbounded_channel::<(ReplayMark, bool)>();
    let mut replays_awaited = 0usize;
    loop {
        let due = if poll_now {
            Instant::now()
        } else {
            fetcher.cadence.next_start(Instant::now())
        };
        let polling = (poll_now || !fetcher.polling.paused) && replays_awaited == 0;
        tokio::select! {
            topology = fetcher.topology.changed() => {
                // Polls moved to another server, or actions became (im)possible: shown with
                // a poll at once, not one poll late.
                poll_now |= fetcher.note_servers(&topology);
                fetcher.report();
            }
            Some((mark, held)) = replay_answers.recv() => {
                replays_awaited = replays_awaited.saturating_sub(1);
                fetcher.replay_answered(mark, held);
                poll_now = true;
            }
            request = inbox.recv() => {
                let Some(request) = request else { return };
                match request {
                    Request::PollNow => poll_now = true,
                    Request::Pause(paused) => {
                        fetcher.polling.paused = paused;
                        fetcher.report();
                    }
                    Request::Interval(interval) => {
                        fetcher.cadence.set_interval(interval);
                        fetcher.polling.interval = fetcher.cadence.interval();
                        fetcher.polling.period = fetcher.cadence.period();
                        fetcher.polling.slowed = fetcher.cadence.slowed();
                        fetcher.report();
                    }
                    Request::Focus(focus) => {
                        focus_changed |= focus != fetcher.focus;
                        fetcher.focus = focus;
                    }
                    Request::Messages(ids) => wanted_messages = Some(ids),
                    Request::AwaitReplay(mark) => {
                        replays_awaited += 1;
                        let (topology, replayed) = (fetcher.session.topology(), replayed.clone());
                        tokio::spawn(async move {
                            let held = await_replay(&topology, &mark).await;
                            let _ = replayed.send((mark, held));
                        });
                    }
                }
            }
            _ = std::future::ready(()), if wanted_messages.is_some() => {
                if let Some(ids) = wanted_messages.take() {
                    fetcher.fetch_messages(&ids).await;
                }
            }
            _ = std::future::ready(()), if focus_changed => {
                focus_changed = false;
                fetcher.fetch_focus().await;
            }
            _ = tokio::time::sleep_until(due.into()), if polling => {
                // A poll asked for at once is this one: the next keeps the cadence.
                (poll_now, focus_changed) = (false, false);
                fetcher.poll().await;
            }
        }
    }
}

impl Fetcher {
    fn report(&self) {
        let _ = self.model.send(Input::Polling(self.polling.clone()));
    }

    /// One poll: the changes, and the focused view's data.
    async fn poll(&mut self) {
        self.recheck_unreplayed().await;
        let started = Instant::now();
        self.cadence.started(started);
        let limit = if self.polling.loading {
            LOAD_TIMEOUT
        } else {
            POLL_TIMEOUT
        };
        let spacing = self.cadence.spacing();
        // The sync alone is bounded by the poll's limit: once it returns, the copy has learned
        // its changes (the leases gone among them, said only once), so they are delivered
        // whatever the focused view's read does — that read has its own bound.
        let outcome = tokio::time::timeout(limit, async {
            match self.session.reads().sync(&mut self.sync, spacing).await {
                Ok(changes) => Ok(changes),
                Err(e) => Err(self.said_of(e).await),
            }
        })
        .await;
        let outcome = match outcome {
            Ok(Ok(changes)) => {
                let reads = self.session.reads().as_of(&self.sync);
                let focused = tokio::time::timeout(POLL_TIMEOUT, fetch_extra(&reads, &self.focus))
                    .await
                    .unwrap_or_else(|_| {
                        Some(Extra::Unavailable(format!(
                            "no answer within {}s",
                            POLL_TIMEOUT.as_secs()
                        )))
                    });
                Ok(Ok((changes, focused)))
            }
            Ok(Err(e)) => Ok(Err(e)),
            Err(elapsed) => Err(elapsed),
        };
        let took = started.elapsed();
        match outcome {
            Ok(Ok((changes, extra))) => {
                self.cadence
                    .finished(took, true, !changes.reset, Instant::now());
                let h = &mut self.polling;
                h.loading = false;
                h.period = self.cadence.period();
                h.poll_time = self.cadence.shown_poll_time();
                h.slowed = self.cadence.slowed();
                h.polled_at = Some(started);
                if let Some(since) = h.failing_since.take() {
                    tracing::info!(
                        "polls recovered after {}s of failures",
                        since.elapsed().as_secs()
                    );
                }
                h.last_error = None;
                h.locked = false;
                log_lag_changes(h.replication.as_ref(), changes.replication.as_ref());
                h.replication = changes.replication;
                h.sync = Some(changes.report);
                let focused = extra.map(|extra| Focused {
                    focus: self.focus.clone(),
                    extra,
                });
                tracing::debug!(
                    took_ms = took.as_millis() as u64,
                    statements = changes.report.statements,
                    rows = changes.report.rows_read,
                    "poll"
                );
                let _ = self.model.send(Input::Polled {
                    changes: Box::new(changes),
                    focused,
                    started,
                    polling: self.polling.clone(),
                });
            }
            Ok(Err((error, locked))) => {
                self.polling.locked = locked;
                self.fail(error, took);
            }
            Err(_) => {
                self.session.reads().poll_unanswered();
                self.polling.locked = false;
                self.fail(format!("no answer within {}s", limit.as_secs()), took);
            }
        }
    }

    /// Takes what the topology says of the servers into what polling shows; `true` when polls
    /// should run again at once: they read another server now, or actions became possible or
    /// impossible.
    fn note_servers(&mut self, topology: &Topology) -> bool {
        let h = &mut self.polling;
        let access = topology.access().clone();
        let primary = topology.primary().host().to_string();
        let reads = topology.reads().host().to_string();
        let moved = h.primary.as_ref().is_some_and(|p| *p != primary)
            || self.reads_from.as_ref().is_some_and(|r| *r != reads);
        let access_changed = h.access.as_ref().is_some_and(|a| *a != access);
        if access_changed {
            match access.read_only_reason() {
                Some(reason) => tracing::warn!("access: read-only — {reason}"),
                None => tracing::warn!("access: read-write"),
            }
        }
        h.access = Some(access);
        h.reader_promoted = topology.reader_promoted();
        h.reader_down = topology.reader_is_down();
        h.primary_silent = topology.has_reader() && topology.primary_silent();
        h.primary = Some(primary);
        self.reads_from = Some(reads);
        moved || access_changed
    }

    /// What the wait for a standby to replay `mark` found.
    fn replay_answered(&mut self, mark: ReplayMark, held: bool) {
        if held {
            self.polling.replay_confirmed = Some(Instant::now());
        } else {
            tracing::warn!(
                "the standby did not hold the action's records ({}) after {}s",
                mark.position,
                REPLAY_WAIT.as_secs()
            );
            // Asked again before each poll, so the poll that first shows it says so.
            self.unreplayed = Some(mark);
        }
    }

    /// Before a poll: whether the action the bounded wait gave up on is there now.
    async fn recheck_unreplayed(&mut self) {
        let Some(mark) = self.unreplayed.clone() else {
            return;
        };
        let topology = self.session.topology();
        let asked = tokio::time::timeout(Duration::from_secs(2), holds(&topology, &mark));
        if matches!(asked.await, Ok(true)) {
            self.unreplayed = None;
            self.polling.replay_confirmed = Some(Instant::now());
            tracing::info!(
                "the standby holds the action's records ({}) now",
                mark.position
            );
        }
    }

    /// The messages of the board's rows on screen; a failure is logged, and the rows show
    /// none until they are asked for again.
    async fn fetch_messages(&mut self, ids: &[Uuid]) {
        let reads = self.session.reads();
        match tokio::time::timeout(POLL_TIMEOUT, reads.messages(ids)).await {
            Ok(Ok(rows)) => {
                let _ = self.model.send(Input::Messages(rows));
            }
            Ok(Err(error)) => tracing::warn!("the messages could not be read: {error}"),
            Err(_) => tracing::warn!("the messages: no answer within {}s", POLL_TIMEOUT.as_secs()),
        }
    }

    /// Just the focused view's data, right after the focus changed.
    async fn fetch_focus(&mut self) {
        let focus = self.focus.clone();
        let reads = self.session.reads().as_of(&self.sync);
        let extra = tokio::time::timeout(POLL_TIMEOUT, fetch_extra(&reads, &focus))
            .await
            .unwrap_or_else(|_| {
                Some(Extra::Unavailable(format!(
                    "no answer within {}s",
                    POLL_TIMEOUT.as_secs()
                )))
            });
        if let Some(extra) = extra {
            let _ = self.model.send(Input::Focused(Focused { focus, extra }));
        }
    }

    /// A failed poll in words: a lock wait that ran out names who holds the ledger, rather
    /// than reading as a connection problem.
    async fn said_of(&self, error: crate::store::StoreError) -> (String, bool) {
        if error.is_lock_timeout() {
            let db = self.session.topology().reads().clone();
            if let Some(holders) = crate::store::locks::table_holders(&db).await {
                return (format!("the ledger is locked: {holders}"), true);
            }
        }
        (error.to_string(), false)
    }

    fn fail(&mut self, error: String, took: Duration) {
        tracing::warn!("poll failed: {error}");
        self.cadence.finished(took, false, true, Instant::now());
        self.polling.failing_since.get_or_insert_with(Instant::now);
        self.polling.last_error = Some(error);
        self.report();
    }
}

/// The focused view's query; `None` for views that need only the board. A failure is the
/// view's to show, not a failed poll.
async fn fetch_extra(reads: &Reads<'_>, focus: &Focus) -> Option<Extra> {
    let extra = match focus {
        Focus::Board | Focus::Tenants => return None,
        Focus::Detail(id) => reads
            .detail(*id)
            .await
            .map(|detail| Extra::Detail(Box::new(detail)))
            .map_err(|e| e.to_string()),
        Focus::Leases => reads
            .leases()
            .await
            .map(Extra::Leases)
            .map_err(|e| e.to_string()),
        Focus::Audit => reads
            .recent_audit(AUDIT_SHOWN)
            .await
            .map(Extra::Audit)
            .map_err(|e| e.to_string()),
    };
    Some(extra.unwrap_or_else(|error| {
        tracing::warn!("the {focus:?} view could not be read: {error}");
        Extra::Unavailable(error)
    }))
}

/// Logs a standby falling behind past [`replica::LAG_WARNING`], and catching up again.
fn log_lag_changes(before: Option<&Replication>, now: Option<&Replication>) {
    // Only a lag measured against the primary's position: a silent primary's standby is
    // not behind, it has nothing newer to replay.
    let behind = |r: Option<&Replication>| {
        r.filter(|r| r.primary.is_some())
            .and_then(|r| r.delay())
            .filter(|delay| *delay >= replica::LAG_WARNING)
    };
    match (behind(before), behind(now)) {
        (None, Some(delay)) => tracing::warn!(
            "the standby is {}s behind the primary: ages are judged as of its data",
            delay.num_seconds()
        ),
        (Some(_), None) if now.is_some() => tracing::info!("the standby has caught up"),
        _ => {}
    }
}

/// Waits until where polls read holds what an action wrote (checked every 50 ms): its audit
/// records, or else its WAL position replayed; at most [`REPLAY_WAIT`]. A primary has nothing
/// to replay. Whether it was held in time.
async fn await_replay(topology: &Topology, mark: &ReplayMark) -> bool {
    let replayed = async {
        while !holds(topology, mark).await {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(REPLAY_WAIT, replayed).await.is_ok()
}

/// Whether where polls read holds `mark`: its audit records, or else its WAL position.
async fn holds(topology: &Topology, mark: &ReplayMark) -> bool {
    let reads = topology.reads();
    let by_audit: Result<_, sqlx::Error> = read_tx!(reads, |c| async {
        Ok(replica::holds_audit(c, &mark.audit_ids).await)
    });
    match by_audit.ok().flatten() {
        Some(held) => held,
        None => match read_tx!(reads, |c| replica::replay_position(c)) {
            Ok(Some(replayed)) => replayed >= mark.position,
            // A primary (the standby gone or promoted) has it.
            Ok(None) => true,
            Err(e) => {
                tracing::debug!("the standby's replay position: {e}");
                false
            }
        },
    }
}
