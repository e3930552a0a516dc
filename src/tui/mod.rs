//! The live console: one event loop over terminal input, poller snapshots, action results, a
//! tick and the stop signals. State lives in [`app`], transitions in [`update`], drawing in
//! [`view`] (a pure function of state); IO happens only here, as effects.

pub mod app;
pub mod keys;
pub mod layout;
pub mod terminal;
pub mod theme;
pub mod update;
pub mod view;

use std::io::Write;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
use tokio::sync::mpsc;

use crate::domain::actions::{self, Action, Outcome};
use crate::domain::model::short_id;
use crate::domain::session::Session;
use crate::domain::signals::Thresholds;
use crate::poller::{self, Focus, PollerHandle, PollerOptions};
use crate::store::sync::SyncSettings;
use app::{App, Display, Header};
use update::{Effect, Event};

/// How the console is shown.
#[derive(Debug, Clone)]
pub struct Options {
    pub label: Option<String>,
    pub sandbox: bool,
    pub ascii: bool,
    pub color: bool,
    pub interval: Duration,
    pub bulk_cap: usize,
    /// The signal thresholds the poller assesses with and the views show.
    pub thresholds: Thresholds,
    /// How the poller keeps its copy of the ledger current.
    pub sync: SyncSettings,
}

const TICK: Duration = Duration::from_millis(500);

/// Runs the console until `q`, Ctrl-C or a stop signal. The terminal is restored on every
/// exit path (a panic restores it through ratatui's hook before the report is printed).
pub async fn run(
    session: Session,
    options: Options,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let poller = poller::start(
        session.clone(),
        PollerOptions {
            interval: options.interval,
            thresholds: options.thresholds,
            sync: options.sync,
        },
    );
    let mut screen = terminal::enter()?;
    let outcome = event_loop(&mut screen, &session, &options, &poller, stop).await;
    terminal::leave()?;
    outcome
}

async fn event_loop(
    terminal: &mut terminal::Screen,
    session: &Session,
    options: &Options,
    poller: &PollerHandle,
    stop: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let size = terminal.size()?;
    let header = Header {
        target: session.store().target().to_string(),
        label: options.label.clone(),
        sandbox: options.sandbox,
        tenant_scope: session.tenant_scope().map(str::to_string),
        access: session.access().clone(),
    };
    let display = Display {
        ascii: options.ascii,
        color: options.color,
    };
    let mut app = App::new(header, display, options.interval, (size.width, size.height));
    app.bulk_cap = options.bulk_cap;
    app.thresholds = options.thresholds;
    let (results, mut inbox) = mpsc::unbounded_channel::<Event>();
    let mut input = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    let mut status = poller.status.clone();
    poller.send(poller::Command::Focus(Focus::Board));
    tokio::pin!(stop);
    loop {
        // Unchanged frames write nothing (see `terminal::QuietBackend`).
        terminal.draw(|frame| view::draw(frame, &app))?;
        let event = tokio::select! {
            term = input.next() => match term {
                Some(Ok(TermEvent::Key(key))) if key.kind != KeyEventKind::Release => Event::Key(key),
                Some(Ok(TermEvent::Resize(width, height))) => Event::Resize(width, height),
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            },
            changed = status.changed() => match changed {
                Ok(()) => Event::Poll(status.borrow_and_update().clone()),
                Err(_) => return Ok(()),
            },
            Some(event) = inbox.recv() => event,
            _ = tick.tick() => Event::Tick(Instant::now()),
            _ = &mut stop => return Ok(()),
        };
        for effect in update::update(&mut app, event) {
            perform(effect, session, poller, &results);
        }
        if app.should_quit {
            return Ok(());
        }
    }
}

/// Carries out an effect; database work runs in its own task and reports back as an event.
fn perform(
    effect: Effect,
    session: &Session,
    poller: &PollerHandle,
    results: &mpsc::UnboundedSender<Event>,
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
        Effect::Plan { dialog, actions } => {
            let session = session.clone();
            let results = results.clone();
            tokio::spawn(async move {
                let mut plans = Vec::with_capacity(actions.len());
                for action in &actions {
                    match actions::plan(&session, action).await {
                        Ok(plan) => plans.push(plan),
                        Err(e) => {
                            let _ = results.send(Event::Planned {
                                dialog,
                                plans: Err(e.to_string()),
                            });
                            return;
                        }
                    }
                }
                let _ = results.send(Event::Planned {
                    dialog,
                    plans: Ok(plans),
                });
            });
        }
        Effect::Apply {
            dialog,
            actions,
            reason,
        } => {
            let session = session.clone();
            let results = results.clone();
            tokio::spawn(async move {
                let mut report = Vec::with_capacity(actions.len());
                // One transaction per space, one after another, each reported on its own.
                for action in &actions {
                    report.push(describe(
                        action,
                        actions::apply(&session, action, &reason).await,
                    ));
                }
                let _ = results.send(Event::Applied {
                    dialog,
                    results: report,
                });
            });
        }
    }
}

/// The sentence shown for one action's result.
fn describe(action: &Action, result: Result<Outcome, actions::ActionError>) -> (bool, String) {
    let target = match action {
        Action::Retry { bootstrap_id, .. } | Action::Cancel { bootstrap_id, .. } => {
            format!("space {}", short_id(bootstrap_id))
        }
        Action::RemoveLease { seen, .. } => format!("lease {}", short_id(&seen.id)),
    };
    match result {
        Ok(Outcome::Applied(applied)) => (
            true,
            format!(
                "{target}: {} applied (audit record {})",
                action.name(),
                applied.audit_id
            ),
        ),
        Ok(Outcome::Refused(refusal)) => (false, format!("{target}: refused — {refusal}")),
        Err(e) => (false, format!("{target}: failed — {e}")),
    }
}
