//! The IO half of the poller: polls on its cadence, fetches the focused view, reports health.
//!
//! A change of focus is answered at once with that view's query alone (opening a detail never
//! waits for a poll); a regular poll runs the incremental sync plus the focused view's query.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::cadence::Cadence;
use super::model::Input;
use super::{AUDIT_SHOWN, Extra, Focus, Focused, PollHealth, PollerOptions, REPLAY_WAIT};
use crate::domain::session::Session;
use crate::store::replica::{self, ReplayMark, Replication};
use crate::store::sync::LedgerSync;

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
}

struct Fetcher {
    session: Session,
    sync: LedgerSync,
    cadence: Cadence,
    polling: PollHealth,
    focus: Focus,
    model: mpsc::UnboundedSender<Input>,
    /// Poll again at once (polls just moved to another server).
    again: bool,
    /// When a down standby was last asked whether it answers again.
    reader_probed: Option<Instant>,
    /// When the listed hosts were last searched for the primary.
    primary_searched: Option<Instant>,
    /// The standby polls read was just found promoted.
    reader_promoted: bool,
    /// An action the standby had not replayed when the bounded wait ended.
    unreplayed: Option<ReplayMark>,
    /// When the console last asked whether its database is a primary (see `recheck_access`).
    access_checked: Option<Instant>,
    /// Polls in a row after which the primary looked gone.
    suspect_polls: u32,
}

/// How often a standby that stopped answering is asked again.
const READER_RETRY: Duration = Duration::from_secs(15);
/// How often the listed hosts are searched for a new primary while the primary is silent.
const PRIMARY_SEARCH: Duration = Duration::from_secs(3);

pub(super) async fn run(
    session: Session,
    options: PollerOptions,
    mut inbox: mpsc::UnboundedReceiver<Request>,
    model: mpsc::UnboundedSender<Input>,
) {
    let tenant = session.tenant_scope().map(str::to_string);
    let cadence = Cadence::new(options.interval);
    let mut fetcher = Fetcher {
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
        again: false,
        reader_probed: None,
        primary_searched: None,
        access_checked: None,
        reader_promoted: false,
        unreplayed: None,
        suspect_polls: 0,
    };
    let mut poll_now = false;
    let mut focus_changed = false;
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
                    Request::AwaitReplay(mark) => {
                        replays_awaited += 1;
                        let (session, replayed) = (fetcher.session.clone(), replayed.clone());
                        tokio::spawn(async move {
                            let held = await_replay(&session, &mark).await;
                            let _ = replayed.send((mark, held));
                        });
                    }
                }
            }
            _ = std::future::ready(()), if focus_changed => {
                focus_changed = false;
                fetcher.fetch_focus().await;
            }
            _ = tokio::time::sleep_until(due.into()), if polling => {
                focus_changed = false;
                fetcher.poll().await;
                poll_now = std::mem::take(&mut fetcher.again);
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
        let outcome = tokio::time::timeout(limit, async {
            let changes = self
                .session
                .sync(&mut self.sync, spacing)
                .await
                .map_err(|e| e.to_string())?;
            let focused = fetch_extra(&self.session, &self.focus).await;
            Ok::<_, String>((changes, focused))
        })
        .await;
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
                log_lag_changes(h.replication.as_ref(), changes.replication.as_ref());
                h.replication = changes.replication;
                // A standby that answers without replication state was promoted: the primary
                // is looked for at once among the listed hosts (see `watch_over_servers`).
                if self.session.has_reader()
                    && !self.session.reader_is_down()
                    && self.session.note_reader_role(changes.replication.is_none())
                    && changes.replication.is_none()
                {
                    self.reader_promoted = true;
                }
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
            Ok(Err(error)) => self.fail(error, took),
            Err(_) => self.fail(format!("no answer within {}s", limit.as_secs()), took),
        }
        let failed = self.polling.last_error.is_some();
        self.watch_over_servers(failed).await;
        if self.again {
            self.report();
        }
    }

    /// After each poll: a standby that stopped answering is left for the primary (and asked
    /// again now and then); a primary that went silent is looked for among the listed hosts
    /// (a failover). Both are said in the header and the log.
    async fn watch_over_servers(&mut self, poll_failed: bool) {
        let session = self.session.clone();
        let now = Instant::now();
        if session.has_reader() {
            // A failed poll of a standby that still answers (a timeout, a conflict) is not a
            // lost standby.
            if poll_failed && !session.reader_is_down() && !session.reader_answers().await {
                session.set_reader_down(true);
                self.reader_probed = Some(now);
                self.again = true;
                tracing::warn!("the standby does not answer: polls read the primary until it does");
            } else if session.reader_is_down()
                && self
                    .reader_probed
                    .is_none_or(|at| now.duration_since(at) >= READER_RETRY)
            {
                self.reader_probed = Some(now);
                // Back to the standby only once it holds what the board already showed from
                // the primary: never older data after newer.
                let primary = session.primary_position().await;
                let replayed = session.standby_replayed().await;
                if let (Some(primary), Some(replayed)) = (primary, replayed)
                    && replayed >= primary
                {
                    session.set_reader_down(false);
                    self.again = true;
                    tracing::info!("the standby answers again and has caught up: polls read it");
                }
            }
        }
        let polls_read_primary = !session.has_reader() || session.reader_is_down();
        // Without a standby of its own, polls reading one mean the primary became a standby.
        let primary_demoted = polls_read_primary && self.polling.replication.is_some();
        let suspect =
            session.primary_silent() || primary_demoted || (poll_failed && polls_read_primary);
        self.suspect_polls = if suspect { self.suspect_polls + 1 } else { 0 };
        // The standby promoted: a failover happened, no need to wait for a second poll.
        if std::mem::take(&mut self.reader_promoted) {
            self.suspect_polls = self.suspect_polls.max(2);
            self.primary_searched = None;
        }
        let mut moved = false;
        // Two suspect polls in a row before a search: one slow answer is not a failover.
        if self.suspect_polls >= 2
            && session.store().has_alternates()
            && self
                .primary_searched
                .is_none_or(|at| now.duration_since(at) >= PRIMARY_SEARCH)
        {
            self.primary_searched = Some(now);
            if session.find_primary().await.is_some() {
                self.suspect_polls = 0;
                self.again = true;
                moved = true;
            }
        }
        // Whether the console may act follows whether its database is a primary: it may once
        // a standby it started on is promoted (or a listed host is found), and may not once
        // its primary is demoted with none found. Asked after a move, and at most every 3 s
        // while polls look suspect or a promotion is awaited.
        if session.follows_recovery()
            && (moved
                || ((suspect || session.awaits_promotion())
                    && self
                        .access_checked
                        .is_none_or(|at| now.duration_since(at) >= PRIMARY_SEARCH)))
        {
            self.access_checked = Some(now);
            if session.recheck_access().await {
                // Published with a poll at once, not one poll late.
                self.again = true;
            }
        }
        let access = session.access();
        if self.polling.access.as_ref().is_some_and(|a| *a != access) {
            match access.read_only_reason() {
                Some(reason) => tracing::warn!("access: read-only — {reason}"),
                None => tracing::warn!("access: read-write"),
            }
        }
        self.polling.access = Some(access);
        self.polling.reader_promoted = session.reader_promoted();
        self.polling.reader_down = session.reader_is_down();
        let silent = session.has_reader() && session.primary_silent();
        if silent != self.polling.primary_silent {
            if silent {
                tracing::warn!("the primary does not answer: nothing can be planned or applied");
            } else {
                tracing::info!("the primary answers again");
            }
        }
        self.polling.primary_silent = silent;
        self.polling.primary = Some(session.store().target().to_string());
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
        let asked = tokio::time::timeout(Duration::from_secs(2), holds(&self.session, &mark));
        if matches!(asked.await, Ok(true)) {
            self.unreplayed = None;
            self.polling.replay_confirmed = Some(Instant::now());
            tracing::info!(
                "the standby holds the action's records ({}) now",
                mark.position
            );
        }
    }

    /// Just the focused view's data, right after the focus changed.
    async fn fetch_focus(&mut self) {
        let focus = self.focus.clone();
        let extra = tokio::time::timeout(POLL_TIMEOUT, fetch_extra(&self.session, &focus))
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
async fn fetch_extra(session: &Session, focus: &Focus) -> Option<Extra> {
    let extra = match focus {
        Focus::Board | Focus::Tenants => return None,
        Focus::Detail(id) => session
            .detail(*id)
            .await
            .map(|detail| Extra::Detail(Box::new(detail)))
            .map_err(|e| e.to_string()),
        Focus::Leases => session
            .leases()
            .await
            .map(Extra::Leases)
            .map_err(|e| e.to_string()),
        Focus::Audit => session
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
async fn await_replay(session: &Session, mark: &ReplayMark) -> bool {
    let replayed = async {
        while !holds(session, mark).await {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(REPLAY_WAIT, replayed).await.is_ok()
}

/// Whether where polls read holds `mark`: its audit records, or else its WAL position.
async fn holds(session: &Session, mark: &ReplayMark) -> bool {
    let reader = session.reader().pool();
    match replica::holds_audit(&reader, &mark.audit_ids).await {
        Some(held) => held,
        None => match replica::replay_position(&reader).await {
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
