//! `update(&mut App, Event) -> Vec<Effect>`: every state transition of the console, with no IO.
//! Whatever needs the database or the terminal comes back as an [`Effect`] for the event loop.

mod dialog;

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use uuid::Uuid;

use super::app::{App, Overlay, Quick, SortKey, Stage, View};
use super::keys::{self, Command};
use super::layout;
use crate::domain::actions::{Action, Kind, Plan};
use crate::domain::model::MutationLease;
use crate::poller::{self, Extra, Focus, PollStatus};

/// Everything that can happen to the console.
#[derive(Debug, Clone)]
pub enum Event {
    Key(KeyEvent),
    Resize(u16, u16),
    Poll(PollStatus),
    /// Plans for the dialog with this id.
    Planned {
        dialog: u64,
        plans: Result<Vec<Plan>, String>,
    },
    /// Results of applying the dialog's actions: (applied, sentence) per action.
    Applied {
        dialog: u64,
        results: Vec<(bool, String)>,
    },
    Tick(Instant),
}

/// Work for the event loop.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Poller(poller::Command),
    Plan {
        dialog: u64,
        actions: Vec<Action>,
    },
    Apply {
        dialog: u64,
        actions: Vec<Action>,
        reason: String,
    },
    Copy(String),
}

pub fn update(app: &mut App, event: Event) -> Vec<Effect> {
    match event {
        Event::Tick(now) => {
            app.now = now;
            expire(app);
            Vec::new()
        }
        Event::Resize(width, height) => {
            app.size = (width, height);
            keep_cursor_visible(app);
            Vec::new()
        }
        Event::Poll(status) => {
            absorb_poll(app, status);
            Vec::new()
        }
        Event::Planned { dialog, plans } => {
            if let Overlay::Dialog(d) = &mut app.overlay
                && d.id == dialog
                && d.stage == Stage::Planning
            {
                match plans {
                    Ok(plans) => {
                        d.plans = plans;
                        d.stage = Stage::Editing;
                    }
                    Err(error) => d.stage = Stage::Broken(error),
                }
            }
            Vec::new()
        }
        Event::Applied { dialog, results } => {
            let mut effects = vec![Effect::Poller(poller::Command::PollNow)];
            if let Overlay::Dialog(d) = &mut app.overlay
                && d.id == dialog
            {
                let applied = results.iter().filter(|(ok, _)| *ok).count();
                let total = results.len();
                d.stage = Stage::Done(results);
                app.marked.clear();
                let text = format!("{applied} of {total} applied");
                app.say(text, applied < total);
            } else {
                effects.clear();
            }
            effects
        }
        Event::Key(key) => on_key(app, key),
    }
}

fn expire(app: &mut App) {
    if app
        .message
        .as_ref()
        .is_some_and(|m| app.now.saturating_duration_since(m.at) > super::app::MESSAGE_TTL)
    {
        app.message = None;
    }
    let now = app.now;
    app.changed
        .retain(|_, at| now.saturating_duration_since(*at) < super::app::CHANGE_HIGHLIGHT);
}

/// Takes a new poll status: remembers what changed and re-derives the visible rows.
fn absorb_poll(app: &mut App, status: PollStatus) {
    let fresh = status.snapshot.as_ref().map(std::sync::Arc::as_ptr)
        != app.status.snapshot.as_ref().map(std::sync::Arc::as_ptr);
    app.status = status;
    if !fresh {
        return;
    }
    let now = app.now;
    let Some(board) = app.board() else { return };
    let mut seen = std::collections::HashMap::with_capacity(board.rows.len());
    let mut changed = Vec::new();
    for row in &board.rows {
        let b = &row.bootstrap;
        let state = (b.run_state, b.checkpoint, b.row_version);
        if let Some(before) = app.previous.get(&b.id)
            && (before.0, before.1) != (state.0, state.1)
        {
            changed.push(b.id);
        }
        seen.insert(b.id, state);
    }
    let first = app.previous.is_empty();
    app.previous = seen;
    if !first {
        for id in changed {
            app.changed.insert(id, now);
        }
    }
    refresh_visible(app);
}

/// Recomputes the filtered, sorted row list and puts the cursor back on the selected row.
pub fn refresh_visible(app: &mut App) {
    let Some(board) = app.board() else {
        app.visible.clear();
        return;
    };
    let mut visible: Vec<usize> = board
        .rows
        .iter()
        .enumerate()
        .filter(|(_, row)| app.quick.matches(row) && app.filter.matches(row))
        .map(|(i, _)| i)
        .collect();
    let rows = &board.rows;
    match app.sort {
        // The board already arrives in attention order.
        SortKey::Attention => {}
        SortKey::Tenant => visible.sort_by(|a, b| {
            let (a, b) = (&rows[*a].bootstrap, &rows[*b].bootstrap);
            (&a.tenant_id, a.knowledge_space_id).cmp(&(&b.tenant_id, b.knowledge_space_id))
        }),
        SortKey::Progress => visible.sort_by(|a, b| {
            let (a, b) = (&rows[*a].signals.progress, &rows[*b].signals.progress);
            a.fraction().total_cmp(&b.fraction())
        }),
        SortKey::Idle => visible.sort_by_key(|i| std::cmp::Reverse(rows[*i].signals.idle_for)),
    }
    if app.sort_reverse {
        visible.reverse();
    }
    let selected = app.selected;
    app.visible = visible;
    if let Some(position) =
        selected.and_then(|id| app.visible_rows().position(|r| r.bootstrap.id == id))
    {
        app.cursor = position;
    }
    app.cursor = app.cursor.min(app.visible.len().saturating_sub(1));
    app.selected = app.id_at(app.cursor);
    keep_cursor_visible(app);
}

fn keep_cursor_visible(app: &mut App) {
    let page = layout::table_rows(app.size);
    if app.cursor < app.offset {
        app.offset = app.cursor;
    } else if app.cursor >= app.offset + page {
        app.offset = app.cursor + 1 - page;
    }
    let max_offset = app.visible.len().saturating_sub(page);
    app.offset = app.offset.min(max_offset);
    let list_len = list_len(app);
    app.list_cursor = app.list_cursor.min(list_len.saturating_sub(1));
    if app.list_cursor < app.list_offset {
        app.list_offset = app.list_cursor;
    } else if app.list_cursor >= app.list_offset + page {
        app.list_offset = app.list_cursor + 1 - page;
    }
}

fn list_len(app: &App) -> usize {
    match (&app.view, app.extra()) {
        (View::Leases, Some(Extra::Leases(leases))) => leases.lines.len(),
        (View::Audit, Some(Extra::Audit(records))) => records.len(),
        _ => 0,
    }
}

fn on_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    // Ctrl-C always quits, whatever has the focus.
    if key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL) {
        app.should_quit = true;
        return Vec::new();
    }
    if matches!(app.overlay, Overlay::Dialog(_)) {
        return dialog::dialog_key(app, key);
    }
    if app.overlay == Overlay::Help {
        app.overlay = Overlay::None;
        return Vec::new();
    }
    if app.filter.editing {
        filter_key(app, key);
        return Vec::new();
    }
    match keys::command_for(&key) {
        Some(command) => on_command(app, command),
        None => Vec::new(),
    }
}

fn filter_key(app: &mut App, key: KeyEvent) {
    match key.code {
        KeyCode::Enter => app.filter.editing = false,
        KeyCode::Esc => {
            app.filter.editing = false;
            app.filter.text.clear();
        }
        KeyCode::Backspace => {
            app.filter.text.pop();
        }
        KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
            app.filter.text.clear()
        }
        KeyCode::Char(c) if !c.is_control() && app.filter.text.chars().count() < 64 => {
            app.filter.text.push(c)
        }
        _ => return,
    }
    app.cursor = 0;
    refresh_visible(app);
}

fn focus_effect(view: &View) -> Effect {
    Effect::Poller(poller::Command::Focus(match view {
        View::Board => Focus::Board,
        View::Detail(id) => Focus::Detail(*id),
        View::Leases => Focus::Leases,
        View::Audit => Focus::Audit,
    }))
}

fn switch_view(app: &mut App, view: View) -> Vec<Effect> {
    app.view = view;
    app.list_cursor = 0;
    app.list_offset = 0;
    app.detail_scroll = 0;
    vec![focus_effect(&app.view)]
}

fn on_command(app: &mut App, command: Command) -> Vec<Effect> {
    let page = layout::table_rows(app.size);
    match command {
        Command::Up => move_cursor(app, -1),
        Command::Down => move_cursor(app, 1),
        Command::PageUp => move_cursor(app, -(page as isize)),
        Command::PageDown => move_cursor(app, page as isize),
        Command::Top => move_cursor(app, isize::MIN / 2),
        Command::Bottom => move_cursor(app, isize::MAX / 2),
        Command::Open => return open(app),
        Command::Back => return back(app),
        Command::NextView | Command::PrevView => {
            let order = [View::Board, View::Leases, View::Audit];
            let current = order.iter().position(|v| *v == app.view).unwrap_or(0);
            let step = if command == Command::NextView {
                1
            } else {
                order.len() - 1
            };
            return switch_view(app, order[(current + step) % order.len()].clone());
        }
        Command::Filter => {
            let effects = if app.view == View::Board {
                Vec::new()
            } else {
                switch_view(app, View::Board)
            };
            app.filter.editing = true;
            return effects;
        }
        Command::QuickNext | Command::QuickPrev => {
            let cycle = Quick::cycle();
            let current = cycle.iter().position(|q| *q == app.quick).unwrap_or(0);
            let step = if command == Command::QuickNext {
                1
            } else {
                cycle.len() - 1
            };
            app.quick = cycle[(current + step) % cycle.len()];
            app.cursor = 0;
            refresh_visible(app);
        }
        Command::Sort => {
            let current = SortKey::ALL
                .iter()
                .position(|s| *s == app.sort)
                .unwrap_or(0);
            app.sort = SortKey::ALL[(current + 1) % SortKey::ALL.len()];
            refresh_visible(app);
        }
        Command::SortReverse => {
            app.sort_reverse = !app.sort_reverse;
            refresh_visible(app);
        }
        Command::Pause => {
            app.status.paused = !app.status.paused;
            let text = if app.status.paused {
                "polling paused (p resumes)"
            } else {
                "polling resumed"
            };
            app.say(text, false);
            return vec![Effect::Poller(poller::Command::Pause(app.status.paused))];
        }
        Command::Faster | Command::Slower => {
            let current = app.status.interval;
            let next = if command == Command::Faster {
                current / 2
            } else {
                current * 2
            };
            let next = next.clamp(poller::MIN_INTERVAL, poller::MAX_INTERVAL);
            app.status.interval = next;
            app.say(format!("polling every {}", human(next)), false);
            return vec![Effect::Poller(poller::Command::Interval(next))];
        }
        Command::Refresh => return vec![Effect::Poller(poller::Command::PollNow)],
        Command::Copy => return copy(app),
        Command::Retry => return dialog::bootstrap_action(app, Kind::Retry),
        Command::Cancel => return dialog::bootstrap_action(app, Kind::Cancel),
        Command::RemoveLease => return dialog::remove_lease(app),
        Command::Mark => {
            if app.view == View::Board
                && let Some(id) = app.selected
            {
                if !app.marked.remove(&id) {
                    app.marked.insert(id);
                }
                move_cursor(app, 1);
            }
        }
        Command::MarkAll => {
            if app.view == View::Board {
                let ids: Vec<Uuid> = app.visible_rows().map(|r| r.bootstrap.id).collect();
                if ids.iter().all(|id| app.marked.contains(id)) {
                    for id in &ids {
                        app.marked.remove(id);
                    }
                } else {
                    app.marked.extend(ids);
                }
            }
        }
        Command::ClearMarks => app.marked.clear(),
        Command::Help => app.overlay = Overlay::Help,
        Command::Quit => app.should_quit = true,
    }
    Vec::new()
}

fn move_cursor(app: &mut App, delta: isize) {
    match app.view {
        View::Board => {
            let last = app.visible.len().saturating_sub(1) as isize;
            app.cursor = (app.cursor as isize + delta).clamp(0, last.max(0)) as usize;
            app.selected = app.id_at(app.cursor);
        }
        View::Detail(_) => {
            let scrolled = i64::from(app.detail_scroll) + delta.clamp(-10_000, 10_000) as i64;
            app.detail_scroll = scrolled.clamp(0, 10_000) as u16;
        }
        View::Leases | View::Audit => {
            let last = list_len(app).saturating_sub(1) as isize;
            app.list_cursor = (app.list_cursor as isize + delta).clamp(0, last.max(0)) as usize;
        }
    }
    keep_cursor_visible(app);
}

fn open(app: &mut App) -> Vec<Effect> {
    let id = match app.view {
        View::Board => app.selected,
        View::Leases => selected_lease_line(app).and_then(|(_, bootstrap)| bootstrap),
        View::Audit => match app.extra() {
            Some(Extra::Audit(records)) => records
                .get(app.list_cursor)
                .and_then(|r| r.bootstrap_id.or(Some(r.knowledge_space_id))),
            _ => None,
        },
        View::Detail(_) => None,
    };
    match id {
        Some(id) => switch_view(app, View::Detail(id)),
        None => Vec::new(),
    }
}

fn back(app: &mut App) -> Vec<Effect> {
    match app.view {
        View::Board => {
            if !app.filter.text.is_empty() || app.quick != Quick::All {
                app.filter.text.clear();
                app.quick = Quick::All;
                refresh_visible(app);
            }
            Vec::new()
        }
        _ => switch_view(app, View::Board),
    }
}

fn copy(app: &mut App) -> Vec<Effect> {
    let id = match &app.view {
        View::Board => app
            .selected_row()
            .map(|r| r.bootstrap.knowledge_space_id.to_string()),
        View::Detail(id) => Some(id.to_string()),
        View::Leases => selected_lease_line(app).map(|(lease, _)| lease.id.to_string()),
        View::Audit => match app.extra() {
            Some(Extra::Audit(records)) => records
                .get(app.list_cursor)
                .map(|r| r.knowledge_space_id.to_string()),
            _ => None,
        },
    };
    match id {
        Some(id) => {
            app.say(format!("copied {id} to the clipboard (OSC 52)"), false);
            vec![Effect::Copy(id)]
        }
        None => Vec::new(),
    }
}

pub(super) fn selected_lease_line(app: &App) -> Option<(MutationLease, Option<Uuid>)> {
    match app.extra() {
        Some(Extra::Leases(leases)) => leases
            .lines
            .get(app.list_cursor)
            .map(|line| (MutationLease::from(line.lease.clone()), line.bootstrap_id)),
        _ => None,
    }
}

/// `1.5s`, `2s`, `1m`.
pub fn human(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1000 {
        format!("{millis}ms")
    } else if !millis.is_multiple_of(1000) && millis < 10_000 {
        format!("{:.1}s", millis as f64 / 1000.0)
    } else if millis < 120_000 {
        format!("{}s", millis / 1000)
    } else {
        format!("{}m", millis / 60_000)
    }
}
