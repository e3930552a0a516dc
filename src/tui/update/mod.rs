//! `update(&mut App, Event) -> Vec<Effect>`: every state transition of the console, with no IO.
//! Whatever needs the database or the terminal comes back as an [`Effect`] for the event loop.
//!
//! Nothing here walks all rows: the board's order and filters are the poller's model's work
//! (a changed query is sent as an effect and the ordered view comes back in the next status),
//! and finding the selected row in a new view is a binary search.

mod chain;
mod cursor;
mod dialog;
mod held;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use uuid::Uuid;

use self::cursor::{follow_selection, keep_cursors_visible, list_state, move_cursor};
use super::app::{App, AwaitingReplica, ListState, Overlay, Stage, View};
use super::keys::{self, Command, Scope};
use super::layout;
use crate::domain::actions::{BootstrapKind, Plan, Verdict};
use crate::domain::board::{Quick, SortKey};
use crate::domain::model::MutationLease;
use crate::poller::{self, Extra, Focus, PollStatus};
use crate::store::replica::ReplayMark;

/// Everything that can happen to the console.
#[derive(Debug, Clone)]
pub enum Event {
    Key(KeyEvent),
    Resize(u16, u16),
    Poll(Box<PollStatus>),
    /// Plans for the dialog with this id.
    Planned {
        dialog: u64,
        round: u64,
        plans: Result<Vec<Plan>, String>,
    },
    /// Results of applying the dialog's actions: what became of each, and its sentence.
    Applied {
        dialog: u64,
        results: Vec<(Verdict, String)>,
        /// What was written, when polls read a standby that must hold it before the board
        /// shows what was done.
        replica: Option<ReplayMark>,
    },
    /// An action of the dialog whose outcome was unknown was looked up again and is known
    /// now: result `index` of its dialog becomes `line`.
    Settled {
        dialog: u64,
        index: usize,
        verdict: Verdict,
        line: String,
    },
    Tick(Instant),
    /// The ledger check's progress: (bootstraps checked, bootstraps in scope).
    HealthProgress(i64, i64),
    /// The ledger check ended.
    HealthChecked(Result<crate::domain::health::LedgerCheck, String>),
    /// The audit chain's verification has read this many records.
    ChainProgress(u64),
    /// The audit chain's verification ended.
    ChainVerified(Result<crate::domain::audit_chain::Verification, String>),
}

/// Work for the event loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Poller(poller::Instruction),
    Plan {
        dialog: u64,
        /// Which of the dialog's requests for plans this is.
        round: u64,
        actions: Vec<crate::domain::actions::Action>,
    },
    Apply {
        dialog: u64,
        actions: Vec<crate::domain::actions::Action>,
        reason: String,
        /// How long each action's answer is waited for.
        deadline: Duration,
    },
    /// The operator stopped waiting for the dialog's actions (Esc while applying).
    StopWaiting {
        dialog: u64,
    },
    Copy(String),
    /// Run the ledger's invariant checks (the Health view).
    CheckHealth,
    /// One run of the audit chain's verification (the Audit view).
    VerifyChain {
        start: crate::domain::audit_chain::Start,
    },
}

pub fn update(app: &mut App, event: Event) -> Vec<Effect> {
    let mut effects = handle(app, event);
    effects.extend(want_messages(app));
    effects
}

/// Asks for the messages of the board's rows on screen that have one not yet held (only the
/// wide board shows them).
fn want_messages(app: &mut App) -> Option<Effect> {
    if app.view != View::Board || app.size.0 < crate::tui::layout::WIDE_BOARD {
        return None;
    }
    let view = app.board_view()?;
    let page = crate::tui::layout::table_rows(app.size);
    let wanted: Vec<Uuid> = view
        .window(app.board.offset, page)
        .filter(|row| row.has_message && app.board.message(row).is_none())
        .map(|row| row.id)
        .collect();
    if wanted.is_empty() || wanted == app.board.messages_asked {
        return None;
    }
    app.board.messages_asked = wanted.clone();
    Some(Effect::Poller(poller::Instruction::Messages(wanted)))
}

fn handle(app: &mut App, event: Event) -> Vec<Effect> {
    match event {
        Event::Tick(now) => {
            app.now = now;
            expire(app);
            held::expire(app);
            let mut effects = dialog::replan_if_due(app);
            effects.extend(chain::on_tick(app, now));
            effects
        }
        Event::Resize(width, height) => {
            app.size = (width, height);
            keep_cursors_visible(app);
            Vec::new()
        }
        Event::Poll(status) => {
            absorb_poll(app, *status);
            if app.view == View::Health {
                refresh_outliers(app);
            }
            held::release(app)
        }
        Event::ChainProgress(records) => {
            app.chain.running = Some(records);
            Vec::new()
        }
        Event::ChainVerified(found) => {
            chain::on_run_ended(app, found);
            Vec::new()
        }
        Event::HealthProgress(done, total) => {
            app.health_view.running = Some((done, total));
            Vec::new()
        }
        Event::HealthChecked(found) => {
            app.health_view.running = None;
            match &found {
                Ok(health) => app.say(
                    format!(
                        "ledger check: {} finding(s) in {} bootstraps",
                        health.findings.len(),
                        health.bootstraps_checked
                    ),
                    !health.findings.is_empty(),
                ),
                Err(e) => app.say(format!("the ledger check failed: {e}"), true),
            }
            app.health_view.checked = Some((app.now, found));
            keep_cursors_visible(app);
            Vec::new()
        }
        Event::Planned {
            dialog,
            round,
            plans,
        } => {
            let now = app.now;
            let board_from_standby =
                !app.header.polls.is_empty() && !app.status.polling.reader_down;
            if let Overlay::Dialog(d) = &mut app.overlay
                && d.id == dialog
                && d.round == round
                && matches!(d.stage, Stage::Planning | Stage::Editing)
            {
                match plans {
                    Ok(mut plans) => {
                        // What the dialog compares against comes from the primary: the board
                        // it was opened from is a standby's copy.
                        if d.stage == Stage::Planning && board_from_standby {
                            d.actions = plans.iter_mut().map(Plan::rebased).collect();
                        }
                        d.plans = plans;
                        d.stage = Stage::Editing;
                        d.replan_error = None;
                    }
                    // A re-plan that fails keeps what the operator typed and the last plans.
                    Err(error) if d.stage == Stage::Editing => d.replan_error = Some(error),
                    Err(error) => d.stage = Stage::Broken(error),
                }
                d.planned_at = d.replanning_since.or(Some(now));
                d.replanning_since = None;
            }
            Vec::new()
        }
        Event::Applied {
            dialog,
            results,
            replica,
        } => {
            let poll = match replica {
                Some(mark) => {
                    app.awaiting_replica = Some(AwaitingReplica {
                        since: app.now,
                        gave_up: false,
                    });
                    poller::Instruction::AwaitReplay(mark)
                }
                None => poller::Instruction::PollNow,
            };
            let mut effects = vec![Effect::Poller(poll)];
            for (index, (verdict, line)) in results.iter().enumerate() {
                if *verdict == Verdict::Unknown {
                    app.unsettled.insert((dialog, index), line.clone());
                }
            }
            if let Overlay::Dialog(d) = &mut app.overlay
                && d.id == dialog
            {
                let count = |v| results.iter().filter(|(verdict, _)| *verdict == v).count();
                let (applied, unknown) = (count(Verdict::Applied), count(Verdict::Unknown));
                let total = results.len();
                d.stage = Stage::Done(results);
                app.board.marked.clear();
                let mut text = format!("{applied} of {total} applied");
                if unknown > 0 {
                    text.push_str(&format!(", {unknown} unknown (see the dialog)"));
                }
                app.say(text, applied < total);
            } else {
                effects.clear();
            }
            effects
        }
        Event::Settled {
            dialog,
            index,
            verdict,
            line,
        } => {
            app.unsettled.remove(&(dialog, index));
            if let Overlay::Dialog(d) = &mut app.overlay
                && d.id == dialog
                && let Stage::Done(results) = &mut d.stage
                && let Some(result) = results.get_mut(index)
            {
                *result = (verdict, line.clone());
            }
            app.say(line, verdict != Verdict::Applied);
            vec![Effect::Poller(poller::Instruction::PollNow)]
        }
        Event::Key(key) => match held::hold(app, key) {
            Some(key) => on_key(app, key),
            None => Vec::new(),
        },
    }
}

fn expire(app: &mut App) {
    // A little longer than the poller waits, so that its poll arrives first when it can.
    if let Some(waiting) = &mut app.awaiting_replica
        && !waiting.gave_up
        && app.now.saturating_duration_since(waiting.since)
            > poller::REPLAY_WAIT + Duration::from_secs(2)
    {
        waiting.gave_up = true;
        app.say(
            format!(
                "the standby had not replayed the action after {}s: the board may still show \
                 the state before it",
                poller::REPLAY_WAIT.as_secs()
            ),
            true,
        );
    }
    if app
        .message
        .as_ref()
        .is_some_and(|m| app.now.saturating_duration_since(m.at) > super::app::MESSAGE_TTL)
    {
        app.message = None;
    }
}

/// Takes a new poll status; when the board's rows changed, puts the cursor back on the
/// selected space.
fn absorb_poll(app: &mut App, mut status: PollStatus) {
    // A pause (or resume) asked for holds until the poller has taken it.
    if let Some(asked) = app.pause_asked {
        if status.polling.paused == asked {
            app.pause_asked = None;
        } else {
            status.polling.paused = asked;
        }
    }
    let fresh = status.fleet.as_ref().map(std::sync::Arc::as_ptr)
        != app.status.fleet.as_ref().map(std::sync::Arc::as_ptr);
    if let Some(messages) = &status.messages
        && status.messages.as_ref().map(std::sync::Arc::as_ptr)
            != app.status.messages.as_ref().map(std::sync::Arc::as_ptr)
    {
        app.board.learn_messages(messages);
    }
    if fresh {
        app.board.messages_asked.clear();
    }
    // Only a poll begun after the standby was seen holding the action shows it.
    if let Some(waiting) = app.awaiting_replica
        && fresh
        && let Some(confirmed) = status.polling.replay_confirmed
        && confirmed > waiting.since
        && status.polling.polled_at.is_some_and(|at| at >= confirmed)
    {
        app.awaiting_replica = None;
        app.say(
            "the standby has replayed it: the board shows what was done",
            false,
        );
    }
    // Past the bounded wait, polls that read a primary (the standby gone or promoted) show
    // it; otherwise the poller says when the standby holds it (`replay_confirmed` above).
    if let Some(waiting) = app.awaiting_replica
        && waiting.gave_up
        && fresh
        && status
            .polling
            .polled_at
            .is_some_and(|at| at > waiting.since)
        && status.polling.replication.is_none()
    {
        app.awaiting_replica = None;
        app.say(
            "the standby has replayed it: the board shows what was done",
            false,
        );
    }
    let moved = status.polling.primary.as_ref().filter(|now| {
        app.status
            .polling
            .primary
            .as_ref()
            .is_some_and(|before| before != *now)
    });
    if let Some(primary) = moved {
        app.say(
            format!("primary moved to {primary}: plans and actions go there now"),
            true,
        );
    }
    let moved = moved.is_some();
    if let Some(access) = &status.polling.access
        && *access != app.header.access
    {
        app.header.access = access.clone();
        match access.read_only_reason() {
            // The move said it: actions go to the new primary.
            None if moved => {}
            None => app.say("the database is a primary now: actions are allowed", true),
            Some(reason) => app.say(format!("read-only: {reason}"), true),
        }
    }
    app.status = status;
    if fresh {
        unmark_what_left(app);
        follow_selection(app);
        // The pace: documents completed and the readable share at each poll.
        if let Some(fleet) = app.fleet() {
            let s = &fleet.summary;
            let (at, completed, share) = (fleet.db_now, s.documents_completed, s.readable_share());
            app.pace.record(at, completed, share);
        }
    }
    keep_cursors_visible(app);
}

/// Marks are on rows the board shows, never on rows out of sight: a marked space that a poll
/// moved out of the filter (it succeeded, it stopped being blocked) is unmarked, and the
/// operator told, so a bulk action never reaches spaces the screen does not show. Not while
/// a dialog holds its plan.
fn unmark_what_left(app: &mut App) {
    if app.board.marked.is_empty() || matches!(app.overlay, Overlay::Dialog(_)) {
        return;
    }
    let Some(fleet) = app.fleet() else {
        return;
    };
    let left: Vec<Uuid> = app
        .board
        .marked
        .iter()
        .filter(|id| !fleet.board.shows(id))
        .copied()
        .collect();
    if left.is_empty() {
        return;
    }
    for id in &left {
        app.board.marked.remove(id);
    }
    let text = format!(
        "{} marked space(s) left the view as their state changed: unmarked ({} still marked)",
        left.len(),
        app.board.marked.len()
    );
    app.say(text, true);
}

/// Where keys go now: the open dialog's stage, the help screen, the filter prompt, the views.
fn scope(app: &App) -> Scope {
    match &app.overlay {
        Overlay::Dialog(dialog) => match dialog.stage {
            Stage::Applying => Scope::Applying,
            Stage::Done(_) | Stage::Broken(_) => Scope::Finished,
            Stage::Planning | Stage::Editing => Scope::Dialog,
        },
        Overlay::Help => Scope::Help,
        Overlay::None if app.board.editing => Scope::Filter,
        Overlay::None => Scope::View,
    }
}

fn on_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    let scope = scope(app);
    let mut command = keys::command_for(scope, &key);
    if app.too_small() {
        // Nothing is on screen to act on, so no key may act on it unseen (a dialog typed into
        // blind): only what the too-small screen says works — q quits, as in a view, except
        // while an action is applied — and the keys that work anywhere.
        let plain_q = key.code == KeyCode::Char('q') && key.modifiers.is_empty();
        command = match command {
            Some(Command::Quit | Command::Suspend | Command::Redraw) => command,
            _ if plain_q && scope != Scope::Applying => Some(Command::Quit),
            _ => return Vec::new(),
        };
    }
    if command != Some(Command::Quit) {
        app.quit_armed = false;
    }
    match (scope, command) {
        // Ctrl-C always quits, whatever has the focus — asking once while an action is being
        // applied, whose answer would then never be seen.
        (Scope::Applying, Some(Command::Quit)) if !app.quit_armed => {
            app.quit_armed = true;
            if let Overlay::Dialog(d) = &app.overlay {
                // The request first: at 80 columns the end of the line is cut.
                let text = format!("applying {}: Ctrl-C again stops and quits", d.request);
                app.say(text, true);
            }
            Vec::new()
        }
        (_, Some(Command::Quit)) if scope != Scope::View => {
            app.should_quit = true;
            Vec::new()
        }
        // In raw mode the terminal sends Ctrl-Z as a key; job control is done by hand.
        (_, Some(Command::Suspend)) => {
            app.request_suspend();
            Vec::new()
        }
        // The screen is drawn again from nothing, as in every full-screen program.
        (_, Some(Command::Redraw)) => {
            app.repaint = true;
            Vec::new()
        }
        (Scope::Dialog | Scope::Applying | Scope::Finished, command) => {
            dialog::dialog_key(app, command, key)
        }
        (Scope::Help, _) => {
            app.overlay = Overlay::None;
            Vec::new()
        }
        (Scope::Filter, command) => filter_key(app, command, key),
        (Scope::View | Scope::Anywhere, Some(command)) => on_command(app, command),
        (Scope::View | Scope::Anywhere, None) => Vec::new(),
    }
}

/// A new filter: marks the board may no longer show are cleared, saying so — a bulk action
/// never acts on spaces the operator cannot see. Then the query goes to the model.
fn refilter(app: &mut App) -> Vec<Effect> {
    let marked = app.board.marked.len();
    if marked > 0 {
        app.board.marked.clear();
        let text = format!("the filter changed: cleared {marked} mark(s)");
        app.say(text, false);
    }
    requery(app)
}

/// Sends the board's query to the poller's model, which answers with the new view.
fn requery(app: &mut App) -> Vec<Effect> {
    vec![Effect::Poller(poller::Instruction::Query(
        app.board.query.clone(),
    ))]
}

fn filter_key(app: &mut App, command: Option<Command>, key: KeyEvent) -> Vec<Effect> {
    let text = &mut app.board.query.text;
    match (command, key.code) {
        (Some(Command::Open), _) => {
            app.board.editing = false;
            return Vec::new();
        }
        (Some(Command::Back), _) => {
            app.board.editing = false;
            text.clear();
        }
        (Some(Command::DeleteChar), _) => {
            text.pop();
        }
        (Some(Command::ClearField), _) => text.clear(),
        (None, KeyCode::Char(c))
            if !c.is_control()
                && !key.modifiers.contains(KeyModifiers::CONTROL)
                && text.chars().count() < 64 =>
        {
            text.push(c)
        }
        _ => return Vec::new(),
    }
    app.board.cursor = 0;
    refilter(app)
}

fn switch_view(app: &mut App, view: View) -> Vec<Effect> {
    if let Some(list) = list_state(app, &view) {
        *list = ListState::default();
    }
    app.detail.scroll = 0;
    app.view = view;
    // A message speaks of the screen it was said on: it does not follow the operator away.
    // A warning (read-only, the primary moved, keys dropped) stays its time.
    if app.message.as_ref().is_some_and(|m| !m.error) {
        app.message = None;
    }
    let mut effects = vec![Effect::Poller(poller::Instruction::Focus(app.view.focus()))];
    if app.view == View::Health {
        refresh_outliers(app);
        // The first visit runs the check; later ones show the last (Ctrl-R runs it again).
        if app.health_view.checked.is_none() && app.health_view.running.is_none() {
            effects.extend(check_health(app));
        }
    }
    if app.view == View::Audit {
        effects.extend(chain::on_open(app));
    }
    effects
}

/// Starts the ledger check unless one is under way.
fn check_health(app: &mut App) -> Vec<Effect> {
    if app.health_view.running.is_some() {
        return Vec::new();
    }
    app.health_view.running = Some((0, 0));
    vec![Effect::CheckHealth]
}

/// The stall outliers of the latest poll (only while the Health view shows them).
fn refresh_outliers(app: &mut App) {
    app.health_view.outliers = match app.fleet() {
        Some(fleet) => crate::domain::outliers::stall_outliers(
            &fleet.rows.running().collect::<Vec<_>>(),
            fleet.db_now,
        ),
        None => Vec::new(),
    };
    keep_cursors_visible(app);
}

const TAB_ORDER: [View; 5] = [
    View::Board,
    View::Tenants,
    View::Leases,
    View::Audit,
    View::Health,
];

/// The commands that change or read only the board's filter, order and marks.
const BOARD_ONLY: [Command; 7] = [
    Command::QuickNext,
    Command::QuickPrev,
    Command::Sort,
    Command::SortReverse,
    Command::Mark,
    Command::MarkAll,
    Command::ClearMarks,
];

fn on_command(app: &mut App, command: Command) -> Vec<Effect> {
    let page = layout::table_rows(app.size);
    // A key of the board's pressed elsewhere would change what is not on screen: it says so
    // and does nothing.
    if app.view != View::Board && BOARD_ONLY.contains(&command) {
        if let Some(binding) = keys::binding(Scope::View, command) {
            // Esc goes to the board, but from a detail opened in a list first to that list.
            let way = if matches!(app.view, View::Detail(_)) && app.detail_from.is_some() {
                "Esc twice goes there"
            } else {
                "Esc goes there"
            };
            let text = format!(
                "{} ({}) works on the board: {way}",
                binding.shown, binding.help
            );
            app.say(text, true);
        }
        return Vec::new();
    }
    match command {
        Command::Up => move_cursor(app, -1),
        Command::Down => move_cursor(app, 1),
        Command::PageUp => move_cursor(app, -(page as isize)),
        Command::PageDown => move_cursor(app, page as isize),
        Command::Top => {
            move_cursor(app, isize::MIN / 2);
            // On the board, `g` follows the most urgent row again (elsewhere it only scrolls).
            if app.view == View::Board {
                app.board.following_top = true;
            }
        }
        Command::Bottom => move_cursor(app, isize::MAX / 2),
        Command::Open => return open(app),
        Command::Back => return back(app),
        Command::NextView | Command::PrevView => {
            let current = TAB_ORDER.iter().position(|v| *v == app.view).unwrap_or(0);
            let step = if command == Command::NextView {
                1
            } else {
                TAB_ORDER.len() - 1
            };
            return switch_view(app, TAB_ORDER[(current + step) % TAB_ORDER.len()].clone());
        }
        Command::Filter => {
            let effects = if app.view == View::Board {
                Vec::new()
            } else {
                switch_view(app, View::Board)
            };
            app.board.editing = true;
            return effects;
        }
        Command::QuickNext | Command::QuickPrev => {
            let cycle = Quick::cycle();
            let query = &mut app.board.query;
            let current = cycle.iter().position(|q| *q == query.quick).unwrap_or(0);
            let step = if command == Command::QuickNext {
                1
            } else {
                cycle.len() - 1
            };
            query.quick = cycle[(current + step) % cycle.len()];
            app.board.cursor = 0;
            return refilter(app);
        }
        Command::Sort => {
            let query = &mut app.board.query;
            let current = SortKey::ALL
                .iter()
                .position(|s| *s == query.sort)
                .unwrap_or(0);
            query.sort = SortKey::ALL[(current + 1) % SortKey::ALL.len()];
            return requery(app);
        }
        Command::SortReverse => {
            app.board.query.reverse = !app.board.query.reverse;
            return requery(app);
        }
        Command::Pause => {
            let paused = !app.status.polling.paused;
            app.status.polling.paused = paused;
            app.pause_asked = Some(paused);
            let text = if paused {
                "polling paused (p resumes)"
            } else {
                "polling resumed"
            };
            app.say(text, false);
            return vec![Effect::Poller(poller::Instruction::Pause(paused))];
        }
        Command::Faster | Command::Slower => {
            let current = app.status.polling.interval;
            let next = if command == Command::Faster {
                poller::faster(current)
            } else {
                poller::slower(current)
            };
            app.status.polling.interval = next;
            let bound = if next == current && next == poller::MIN_INTERVAL {
                " (the fastest; - polls less often)"
            } else if next == current && next == poller::MAX_INTERVAL {
                " (the slowest; + polls more often)"
            } else {
                ""
            };
            app.say(
                format!(
                    "polling every {}{bound}",
                    crate::domain::duration::interval(next)
                ),
                false,
            );
            return vec![Effect::Poller(poller::Instruction::Interval(next))];
        }
        Command::Refresh => {
            let mut effects = vec![Effect::Poller(poller::Instruction::PollNow)];
            if app.view == View::Health {
                effects.extend(check_health(app));
            }
            if app.view == View::Audit {
                effects.extend(chain::verify_from_start(app));
            }
            return effects;
        }
        Command::Copy => return copy(app),
        Command::Retry => return dialog::bootstrap_action(app, BootstrapKind::Retry),
        Command::Cancel => return dialog::bootstrap_action(app, BootstrapKind::Cancel),
        Command::RemoveLease => return dialog::remove_lease(app),
        Command::Mark => {
            if app.view == View::Board
                && let Some(id) = app.board.selected
            {
                if !app.board.marked.remove(&id) {
                    app.board.marked.insert(id);
                }
                // What was said of the marks before no longer holds.
                app.message = None;
                move_cursor(app, 1);
            }
        }
        Command::MarkAll => mark_all(app),
        Command::ClearMarks => {
            let cleared = std::mem::take(&mut app.board.marked).len();
            let text = match cleared {
                0 => "no marks to clear".to_string(),
                n => format!("cleared {n} mark(s)"),
            };
            app.say(text, false);
        }
        Command::Help => app.overlay = Overlay::Help,
        Command::Quit => app.should_quit = true,
        // Bound only anywhere (handled before), in a dialog or at the filter prompt.
        Command::Suspend
        | Command::Redraw
        | Command::Apply
        | Command::NextField
        | Command::PlanAgain
        | Command::TakePlan
        | Command::Force
        | Command::DeleteChar
        | Command::ClearField => {}
    }
    Vec::new()
}

/// Marks every space the board shows, or unmarks them when all are marked. More spaces than
/// one bulk action may touch are refused here, before anything is marked.
fn mark_all(app: &mut App) {
    if app.view != View::Board {
        return;
    }
    let Some(view) = app.board_view() else {
        return;
    };
    if view.len() > app.bulk_cap {
        let text = format!(
            "the board shows {} spaces, more than the bulk cap of {}: narrow the filter first",
            view.len(),
            app.bulk_cap
        );
        app.say(text, true);
        return;
    }
    let ids: Vec<Uuid> = view.window(0, view.len()).map(|r| r.id).collect();
    let marked = &mut app.board.marked;
    let text = if ids.iter().all(|id| marked.contains(id)) {
        for id in &ids {
            marked.remove(id);
        }
        format!("unmarked {} spaces", ids.len())
    } else {
        marked.extend(ids);
        format!("{} spaces marked (u clears the marks)", marked.len())
    };
    app.say(text, false);
}

fn open(app: &mut App) -> Vec<Effect> {
    let id = match app.view {
        View::Board => app.board.selected,
        View::Tenants => return open_tenant(app),
        View::Leases => selected_lease_line(app).and_then(|(_, bootstrap)| bootstrap),
        View::Audit => match app.extra_for(&Focus::Audit) {
            Some(Extra::Audit(records)) => records
                .get(app.audit.cursor)
                .and_then(|r| r.bootstrap_id.or(Some(r.knowledge_space_id))),
            _ => None,
        },
        View::Health => app.health_view.listed(app.health_view.list.cursor),
        View::Detail(_) => None,
    };
    app.detail_from = matches!(app.view, View::Leases | View::Audit | View::Health)
        .then(|| app.view.clone())
        .filter(|_| id.is_some());
    match id {
        Some(id) => switch_view(app, View::Detail(id)),
        None => Vec::new(),
    }
}

/// Enter on a tenant: the board, showing only that tenant's spaces.
fn open_tenant(app: &mut App) -> Vec<Effect> {
    let Some(tenant) = app
        .fleet()
        .and_then(|f| f.tenants.get(app.tenants.cursor))
        .map(|t| t.tenant.clone())
    else {
        return Vec::new();
    };
    // The tenant's spaces, all of them, as its line in the tenants view counts them: a quick
    // or text filter set before would hide some without a word.
    let marked = app.board.marked.len();
    app.board.query.tenant = Some(tenant.clone());
    app.board.query.quick = Quick::All;
    app.board.query.text.clear();
    app.board.cursor = 0;
    let mut effects = refilter(app);
    effects.extend(switch_view(app, View::Board));
    let cleared = marked - app.board.marked.len();
    let mut text = format!(
        "tenant {}: every space of it (Esc shows every tenant)",
        crate::domain::text::clean(&tenant, 64)
    );
    if cleared > 0 {
        text.push_str(&format!("; cleared {cleared} mark(s)"));
    }
    app.say(text, false);
    effects
}

fn back(app: &mut App) -> Vec<Effect> {
    match app.view {
        View::Board => {
            let query = &mut app.board.query;
            if query.text.is_empty() && query.quick == Quick::All && query.tenant.is_none() {
                return Vec::new();
            }
            query.text.clear();
            query.quick = Quick::All;
            query.tenant = None;
            refilter(app)
        }
        // A detail opened from a list goes back to it, to the line the operator was on.
        View::Detail(_) if app.detail_from.is_some() => {
            let from = app.detail_from.take().unwrap_or(View::Board);
            let list = list_state(app, &from).map(|list| *list);
            let effects = switch_view(app, from.clone());
            if let (Some(saved), Some(list)) = (list, list_state(app, &from)) {
                *list = saved;
            }
            keep_cursors_visible(app);
            effects
        }
        _ => switch_view(app, View::Board),
    }
}

fn copy(app: &mut App) -> Vec<Effect> {
    let text = match &app.view {
        View::Board => app.selected_row().map(|r| r.space.to_string()),
        View::Tenants => app
            .fleet()
            .and_then(|f| f.tenants.get(app.tenants.cursor))
            .map(|t| t.tenant.to_string()),
        View::Detail(id) => Some(id.to_string()),
        View::Leases => selected_lease_line(app).map(|(lease, _)| lease.id.to_string()),
        View::Audit => match app.extra_for(&Focus::Audit) {
            Some(Extra::Audit(records)) => records
                .get(app.audit.cursor)
                .map(|r| r.knowledge_space_id.to_string()),
            _ => None,
        },
        View::Health => app
            .health_view
            .listed(app.health_view.list.cursor)
            .map(|id| id.to_string()),
    };
    match text {
        Some(text) => {
            let shown = crate::domain::text::clean(&text, 64);
            app.say(format!("copied {shown} to the clipboard (OSC 52)"), false);
            vec![Effect::Copy(text)]
        }
        None => Vec::new(),
    }
}

pub(super) fn selected_lease_line(app: &App) -> Option<(MutationLease, Option<Uuid>)> {
    match app.extra_for(&Focus::Leases) {
        Some(Extra::Leases(board)) => board
            .leases
            .get(app.leases.cursor)
            .map(|lease| (lease.lease.clone(), lease.job.map(|job| job.bootstrap_id))),
        _ => None,
    }
}
