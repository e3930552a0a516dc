//! The live console: one event loop over terminal input, poller snapshots, action results, a
//! tick and the stop signals. State lives in [`app`], transitions in [`update`], drawing in
//! [`view`] (a pure function of state); IO happens only here, as effects.
//!
//! How it ends: `q`, Ctrl-C, SIGTERM, SIGQUIT and SIGHUP quit cleanly with the terminal
//! restored; a terminal that went away (a dropped ssh session) is not written to again — no
//! abort, a "console ended: hang-up" line in the log, and under `demo` the private PostgreSQL
//! still stopped and deleted. Quitting while an action is being applied asks once, then stops
//! waiting, waits a few seconds for the answer and prints it after the terminal is restored (or
//! the command that settles it). While the database is away the last good data stays on
//! screen under a "stale for Ns — reconnecting" banner, and the poller reconnects by itself.

pub mod app;
pub mod keys;
pub mod layout;
pub(crate) mod palette;
pub mod terminal;
pub(crate) mod theme;
pub mod update;
pub mod view;

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyEventKind};
use tokio::sync::{mpsc, watch};

use crate::domain::actions::{self, Verdict};
use crate::domain::session::Session;
use crate::domain::signals::Thresholds;
use crate::poller::{self, Focus, PollerHandle, PollerOptions};
use crate::store::sync::SyncSettings;
use app::{App, Display, Header, Overlay, Stage};
use update::{Effect, Event};

/// How the console is shown.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) label: Option<String>,
    pub(crate) sandbox: bool,
    pub(crate) ascii: bool,
    pub(crate) color: bool,
    pub(crate) interval: Duration,
    pub(crate) bulk_cap: usize,
    /// How long an action's answer is waited for before it is looked up by request id.
    pub(crate) apply_deadline: Duration,
    /// Set when the tenant scope matches no bootstrap: the sentence that says why.
    pub(crate) scope_note: Option<String>,
    /// The signal thresholds the poller assesses with and the views show.
    pub(crate) thresholds: Thresholds,
    /// How the poller keeps its copy of the ledger current.
    pub sync: SyncSettings,
}

const TICK: Duration = Duration::from_millis(500);

/// How long quitting waits for the answer of an action being applied (stopping the wait and
/// looking the request up takes a few seconds at most).
const QUIT_LOOKUP: Duration = Duration::from_secs(8);

/// What the console leaves to say once the terminal is restored.
#[derive(Debug, Default)]
pub(crate) struct Ended {
    /// The fate of actions that were being applied when the console was told to quit, one
    /// sentence each (or the request to look up, when even that did not come).
    pub(crate) unfinished: Vec<String>,
    /// Some of them have no known outcome.
    pub(crate) unknown: bool,
    /// Why the console ended, for the log: `q`, a signal, or the terminal going away.
    pub(crate) why: String,
}

impl Ended {
    /// The signal that ended the console, by name: the one it was sent, or SIGHUP when its
    /// terminal went away (what a dropped ssh session sends). `None` for `q` and Ctrl-C.
    pub(crate) fn signal(&self) -> Option<&str> {
        match self.why.as_str() {
            HANG_UP => Some("SIGHUP"),
            why if why.starts_with("SIG") => Some(why),
            _ => None,
        }
    }
}

/// Runs the console until `q`, Ctrl-C or a stop signal. The terminal is restored on every
/// exit path: a panic restores it through the console's own panic hook, installed by
/// [`terminal::enter`], which restores the screen and then chains to the hook it replaced, so
/// the report prints on a usable terminal.
pub(crate) async fn run(
    session: Session,
    options: Options,
    stop: impl std::future::Future<Output = &'static str>,
) -> std::io::Result<Ended> {
    let poller = poller::start(
        session.clone(),
        PollerOptions {
            interval: options.interval,
            thresholds: options.thresholds,
            sync: options.sync,
        },
    );
    let mut screen = terminal::enter()?;
    // Whatever was on the alternate screen before (a console killed with its ssh session)
    // is not left showing through cells the console has not drawn yet.
    // (A terminal already gone fails the first draw, which ends the console as a hang-up.)
    let _ = screen.clear();
    let size = screen.size().unwrap_or_default();
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    tracing::info!(
        "console started: version {}, {}{} ({}), terminal {}x{}, TERM={:?}, locale={:?}",
        env!("CARGO_PKG_VERSION"),
        session.topology().primary().host(),
        polls_read(&session),
        session
            .topology()
            .access()
            .read_only_reason()
            .unwrap_or("read-write"),
        size.width,
        size.height,
        env("TERM"),
        terminal::locale(|name| std::env::var(name).ok()).unwrap_or_default(),
    );
    let mut ended = event_loop(&mut screen, &session, &options, &poller, stop).await;
    // A terminal that went away (a dropped ssh session) is not written to again once that is
    // known: restoring it only fails, and ratatui's clean-up would report that on the dead
    // terminal and abort. A SIGHUP alone (`kill -HUP`) still restores a live terminal.
    let mut gone = match &ended {
        Err(e) => terminal::is_gone(e),
        Ok(ended) => ended.why == HANG_UP,
    };
    if !gone {
        match terminal::leave() {
            Ok(()) => {}
            Err(e) if terminal::is_gone(&e) => gone = true,
            Err(e) => return Err(e),
        }
    }
    if gone {
        screen.backend_mut().forget_terminal();
        if let Err(e) = &ended {
            tracing::warn!("the terminal went away ({e}): ending");
        }
        ended = Ok(Ended {
            why: HANG_UP.to_string(),
            ..ended.unwrap_or_default()
        });
    }
    poller.stop().await;
    if let Ok(ended) = &ended {
        tracing::info!("console ended: {}", ended.why);
    }
    ended
}

/// Where polls read, when that is not where actions go: `, polls <standby>`.
fn polls_read(session: &Session) -> String {
    if session.topology().has_reader() {
        format!(", polls {}", session.topology().reads().host())
    } else {
        String::new()
    }
}

/// Why a console ended when its terminal went away.
const HANG_UP: &str = "hang-up (the terminal went away)";

async fn event_loop(
    terminal: &mut terminal::Screen,
    session: &Session,
    options: &Options,
    poller: &PollerHandle,
    stop: impl std::future::Future<Output = &'static str>,
) -> std::io::Result<Ended> {
    let size = terminal.size()?;
    let header = Header {
        target: session.topology().primary().host().to_string(),
        polls: polls_read(session),
        label: options.label.clone(),
        sandbox: options.sandbox,
        tenant_scope: session.tenant_scope().map(str::to_string),
        access: session.topology().access().clone(),
        needs_migrate: session.topology().needs_migrate(),
    };
    let display = Display {
        ascii: options.ascii,
        color: options.color,
    };
    let mut app = App::new(header, display, options.interval, (size.width, size.height));
    app.bulk_cap = options.bulk_cap;
    // What may not be done is said at once, not first when a key is refused; one message
    // holds both, since the second would replace the first.
    let warnings = session.topology().warnings();
    for warning in &warnings {
        tracing::warn!("{warning}");
    }
    let limits = session.topology().write_limits();
    if let Some(limits) = &limits {
        tracing::info!("{limits}");
    }
    let said: Vec<String> = limits.into_iter().chain(warnings).collect();
    if !said.is_empty() {
        app.say(said.join("; "), true);
    }
    app.apply_deadline = options.apply_deadline;
    app.scope_note = options.scope_note.clone();
    app.thresholds = options.thresholds;
    let (results, mut inbox) = mpsc::unbounded_channel::<Event>();
    let mut input = terminal::key_reader();
    let mut tick = tokio::time::interval(TICK);
    // After a long suspend (or a sleeping laptop) one tick, not a burst of them.
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut status = poller.status.clone();
    let mut waiting = Waiting::new();
    poller.send(poller::Instruction::Focus(Focus::Board));
    tokio::pin!(stop);
    let mut suspend =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::from_raw(libc::SIGTSTP))?;
    // This loop's own session, derived anew when the board shows ids another way or a
    // request is sent: the session itself never changes under a task that holds it.
    let mut session = session.clone();
    let why = loop {
        // Unchanged frames write nothing (see `terminal::QuietBackend`).
        if let Err(e) = terminal.draw(|frame| view::draw(frame, &app)) {
            break gone_or(e)?;
        }
        let event = tokio::select! {
            term = input.recv() => match term {
                Some(Ok(TermEvent::Key(key))) if key.kind != KeyEventKind::Release => Event::Key(key),
                Some(Ok(TermEvent::Resize(width, height))) => Event::Resize(width, height),
                Some(Ok(_)) => continue,
                Some(Err(e)) => break gone_or(e)?,
                None => break HANG_UP.to_string(),
            },
            changed = status.changed() => match changed {
                Ok(()) => {
                    let status = status.borrow_and_update().clone();
                    // Sentences the actions make name ids the way the board shows them.
                    if let Some(fleet) = &status.fleet
                        && !Arc::ptr_eq(&fleet.names, &session.names())
                    {
                        session = session.with_names(fleet.names.clone());
                    }
                    Event::Poll(Box::new(status))
                }
                Err(_) => break "the poller ended".to_string(),
            },
            Some(event) = inbox.recv() => event,
            _ = tick.tick() => {
                if !terminal::still_there() {
                    break HANG_UP.to_string();
                }
                Event::Tick(Instant::now())
            }
            _ = suspend.recv() => {
                app.request_suspend();
                Event::Tick(Instant::now())
            }
            signal = &mut stop => break signal.to_string(),
        };
        for effect in update::update(&mut app, event) {
            perform(effect, &mut session, poller, &results, &mut waiting);
        }
        if app.suspend {
            app.suspend = false;
            // Ctrl-Z (a key in raw mode) or SIGTSTP: give the shell its terminal back, stop,
            // and take the screen again when continued — where a shell can continue it.
            if !terminal::job_control() {
                app.say(
                    "cannot suspend: no shell with job control here (q quits)",
                    true,
                );
            } else if let Err(e) = terminal::suspend(terminal) {
                break gone_or(e)?;
            } else if let Ok(size) = terminal.size() {
                // The terminal may have been resized while the console was stopped.
                let resized = Event::Resize(size.width, size.height);
                for effect in update::update(&mut app, resized) {
                    perform(effect, &mut session, poller, &results, &mut waiting);
                }
            }
        }
        if std::mem::take(&mut app.repaint)
            && let Err(e) = terminal.clear()
        {
            break gone_or(e)?;
        }
        if app.should_quit {
            break "quit".to_string();
        }
    };
    let mut ended = finish_applying(&app, &mut waiting, &mut inbox).await;
    ended.why = why;
    Ok(ended)
}

/// A terminal error ends the console as a hang-up when the terminal went away; any other is
/// an error.
fn gone_or(e: std::io::Error) -> std::io::Result<String> {
    if terminal::is_gone(&e) {
        tracing::warn!("the terminal went away ({e})");
        Ok(HANG_UP.to_string())
    } else {
        Err(e)
    }
}

/// Quitting while an action is being applied: stop waiting for it as Esc would, and wait a
/// little for the lookup's answer — which also ends its transaction, so nothing is left
/// behind on the server — to say it once the terminal is restored.
async fn finish_applying(
    app: &App,
    waiting: &mut Waiting,
    inbox: &mut mpsc::UnboundedReceiver<Event>,
) -> Ended {
    // Results still unknown from earlier requests: said with what settles them.
    let unsettled = Ended {
        unfinished: app.unsettled.values().cloned().collect(),
        unknown: !app.unsettled.is_empty(),
        why: String::new(),
    };
    let Overlay::Dialog(d) = &app.overlay else {
        return unsettled;
    };
    if d.stage != Stage::Applying {
        return unsettled;
    }
    let (id, request) = (d.id, d.request);
    tracing::warn!("quit while request {request} was being applied; looking it up");
    if let Some(stop) = waiting.remove(&id) {
        let _ = stop.send(true);
    }
    let answer = tokio::time::timeout(QUIT_LOOKUP, async {
        while let Some(event) = inbox.recv().await {
            if let Event::Applied {
                dialog, results, ..
            } = event
                && dialog == id
            {
                return Some(results);
            }
        }
        None
    })
    .await
    .ok()
    .flatten();
    match answer {
        Some(results) => Ended {
            unknown: results.iter().any(|(v, _)| *v == Verdict::Unknown),
            unfinished: results.into_iter().map(|(_, line)| line).collect(),
            why: String::new(),
        },
        None => Ended {
            unfinished: vec![format!(
                "request {request} was being applied when the console quit and its outcome is \
                 unknown: `{}` tells",
                actions::settle_command(&d.actions, request, &d.reason, None)
            )],
            unknown: true,
            why: String::new(),
        },
    }
}

/// How soon an unknown outcome is looked up again (doubling up to the longest), and for how
/// long in all.
const SETTLE_FIRST: Duration = Duration::from_secs(3);
const SETTLE_LONGEST: Duration = Duration::from_secs(30);
const SETTLE_FOR: Duration = Duration::from_secs(15 * 60);

/// Looks the unknown results of a dialog up by request id — one after another, one lookup
/// connection at a time, less often the longer it takes — until each is known to be applied
/// or not, reporting each as [`Event::Settled`] and logging it. An attempt's transaction
/// (`backend`) still open is ended first: a stalled commit never commits later behind the
/// operator's back.
async fn settle_later(
    session: &Session,
    dialog: u64,
    mut pending: Vec<(usize, actions::Action, Option<crate::store::write::Backend>)>,
    results: &mpsc::UnboundedSender<Event>,
) {
    let started = Instant::now();
    let mut wait = SETTLE_FIRST;
    while !pending.is_empty() && started.elapsed() < SETTLE_FOR && !results.is_closed() {
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(SETTLE_LONGEST);
        let mut still = Vec::new();
        for (index, action, backend) in pending {
            let found = match actions::resolve(session, &action, backend).await {
                Ok(found @ (actions::Lookup::Applied { .. } | actions::Lookup::NotApplied)) => {
                    found
                }
                Ok(_) | Err(_) => {
                    still.push((index, action, backend));
                    continue;
                }
            };
            let outcome = Ok(actions::Outcome::Interrupted {
                why: "its answer never came".into(),
                found,
                backend,
            });
            let (verdict, line) = actions::sentence(&action, &outcome, &session.names());
            tracing::info!(
                "request {} settled: {}",
                action.request(),
                crate::domain::text::clean(&line, 1000)
            );
            let _ = results.send(Event::Settled {
                dialog,
                index,
                verdict,
                line,
            });
        }
        pending = still;
    }
    for (_, action, _) in &pending {
        tracing::warn!(
            "request {} of {}: outcome still unknown after {} min of lookups",
            action.request(),
            action.subject_id(),
            started.elapsed().as_secs() / 60
        );
    }
}

/// The applies in flight, by dialog: telling one to stop waiting.
type Waiting = HashMap<u64, watch::Sender<bool>>;

/// Carries out an effect; database work runs in its own task and reports back as an event.
fn perform(
    effect: Effect,
    session: &mut Session,
    poller: &PollerHandle,
    results: &mpsc::UnboundedSender<Event>,
    waiting: &mut Waiting,
) {
    match effect {
        Effect::Poller(command) => poller.send(command),
        Effect::Copy(text) => {
            let mut out = std::io::stdout();
            let copied = crossterm::execute!(
                out,
                crossterm::clipboard::CopyToClipboard::to_clipboard_from(text)
            )
            .and_then(|()| out.flush());
            if let Err(e) = copied {
                tracing::warn!("copy to clipboard: {e}");
            }
        }
        Effect::Plan {
            dialog,
            round,
            actions,
        } => {
            let session = session.clone();
            let results = results.clone();
            tokio::spawn(async move {
                let plans = match actions::plan_all(&session, &actions).await {
                    Ok(planned) => Ok(planned.plans),
                    Err(e) => {
                        tracing::warn!(
                            "could not plan the request of dialog {dialog} on {}: {e}",
                            session.topology().primary().host()
                        );
                        Err(e.to_string())
                    }
                };
                let _ = results.send(Event::Planned {
                    dialog,
                    round,
                    plans,
                });
            });
        }
        Effect::Apply {
            dialog,
            actions,
            reason,
            deadline,
        } => {
            // A plan that later finds these applied knows them for this console's own.
            for action in &actions {
                *session = session.with_request_sent(action.request().uuid());
            }
            let session = session.clone();
            let results = results.clone();
            let (stop, stopped) = watch::channel(false);
            waiting.retain(|_, stop| !stop.is_closed());
            waiting.insert(dialog, stop);
            tokio::spawn(async move {
                let mut report = Vec::with_capacity(actions.len());
                // One transaction per space, one after another, each reported on its own.
                let tally = actions::apply_each(
                    &session,
                    &actions,
                    &reason,
                    deadline,
                    Some(stopped),
                    |_, verdict, line| report.push((verdict, line)),
                )
                .await;
                // What settles each unknown one is said with it; after the results are out,
                // they are looked up again in the background until each is known.
                let mut pending = Vec::new();
                let unknown = report
                    .iter()
                    .enumerate()
                    .filter(|(_, (verdict, _))| *verdict == Verdict::Unknown)
                    .map(|(index, _)| index)
                    .collect::<Vec<_>>();
                for (index, action) in unknown.into_iter().zip(&tally.unknown) {
                    let command = actions::settle_command(
                        std::slice::from_ref(action),
                        action.request(),
                        &reason,
                        session.tenant_scope(),
                    );
                    report[index]
                        .1
                        .push_str(&format!(" — to settle: {command}"));
                    pending.push((index, action.clone(), tally.backend_of(action)));
                }
                // Read your own writes: polls of a standby wait for it to hold what was written.
                let replica = session.reads().replay_mark(tally.audit_ids.clone()).await;
                let _ = results.send(Event::Applied {
                    dialog,
                    results: report,
                    replica,
                });
                if !pending.is_empty() {
                    settle_later(&session, dialog, pending, &results).await;
                }
            });
        }
        Effect::CheckHealth => {
            let session = session.clone();
            let results = results.clone();
            tokio::spawn(async move {
                let progress = results.clone();
                let found = crate::domain::health::check(
                    &session,
                    crate::domain::health::BATCH,
                    |done, total| {
                        let _ = progress.send(Event::HealthProgress(done, total));
                    },
                )
                .await
                .map_err(|e| e.to_string());
                if let Err(e) = &found {
                    tracing::warn!("the ledger check failed: {e}");
                }
                let _ = results.send(Event::HealthChecked(found));
            });
        }
        Effect::VerifyChain { start } => {
            let session = session.clone();
            let results = results.clone();
            tokio::spawn(async move {
                let found = verify_chain(&session, &start, &results).await;
                log_verification(&found);
                let _ = results.send(Event::ChainVerified(found));
            });
        }
        Effect::StopWaiting { dialog } => {
            if let Some(stop) = waiting.remove(&dialog) {
                let _ = stop.send(true);
            }
        }
    }
}

/// One run of the audit chain's verification where polls read. The run stops itself after
/// the page that passes its budget; this bound is for a server that stops answering.
const CHAIN_RUN_BOUND: Duration = Duration::from_secs(60);

async fn verify_chain(
    session: &Session,
    start: &crate::domain::audit_chain::Start,
    results: &mpsc::UnboundedSender<Event>,
) -> Result<crate::domain::audit_chain::Verification, String> {
    let topology = session.topology();
    let caps = topology.capabilities();
    if let Some(why) = caps.audit_unavailable() {
        return Err(why);
    }
    if !caps.audit_chain {
        return Err("the log has no hash chain yet: its owner must run `migrate`".into());
    }
    let verified = crate::domain::audit_chain::verify(session, start, |records| {
        let _ = results.send(Event::ChainProgress(records));
    });
    match tokio::time::timeout(CHAIN_RUN_BOUND, verified).await {
        Ok(found) => found.map_err(|e| e.to_string()),
        Err(_) => Err(format!(
            "the database gave no answer within {}s",
            CHAIN_RUN_BOUND.as_secs()
        )),
    }
}

/// What a run of the verification found, in the log too: what the view shows may be read by
/// nobody.
fn log_verification(found: &Result<crate::domain::audit_chain::Verification, String>) {
    match found {
        Ok(verification) => {
            if let Some(broken) = &verification.broken {
                tracing::warn!("audit chain broken: {broken}");
            }
            for missing in &verification.unprotected {
                tracing::warn!("audit log unprotected: {missing}");
            }
        }
        Err(e) => tracing::warn!("the audit chain could not be verified: {e}"),
    }
}
