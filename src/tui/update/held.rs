//! Keys that wait for the board's rows. A new filter or order is computed off the UI thread and
//! arrives a moment later (seconds at a million spaces); a key that acts on rows — moving,
//! marking, opening, copying, an action — typed before then would act on the rows of the old
//! query while the screen already speaks of the new one. Such a key waits, with every key
//! typed after it, until the rows of the query the earlier keys set are on screen. Keys that
//! only change the query (typing a filter, `f`, `s`) never wait, so typing stays quick; and
//! Ctrl-C, which quits whatever has the focus, never waits either.

use crossterm::event::KeyEvent;

use super::super::app::{App, HOLD_KEYS_FOR, View};
use super::super::keys::{self, Command, Scope};
use super::Effect;

/// Whether `key` must wait for the board's rows; if so it is kept, to run later in order.
pub(super) fn hold(app: &mut App, key: KeyEvent) -> Option<KeyEvent> {
    let scope = super::scope(app);
    let command = keys::command_for(scope, &key);
    if app.held_keys.is_empty() {
        if !(app.board_pending() && acts_on_rows(app, scope, command)) {
            return Some(key);
        }
    } else if keys::command_for(Scope::Anywhere, &key) == Some(Command::Quit) {
        // Behind held keys what a key means depends on them (`q` may be typed into a reason
        // they open): only Ctrl-C, which quits whatever has the focus, goes first.
        return Some(key);
    }
    app.held_since.get_or_insert(app.now);
    app.held_keys.push_back(key);
    None
}

/// Runs the held keys whose rows are on screen now, in order, until one must wait again.
pub(super) fn release(app: &mut App) -> Vec<Effect> {
    let mut effects = Vec::new();
    while let Some(key) = app.held_keys.front().copied() {
        let scope = super::scope(app);
        if app.board_pending() && acts_on_rows(app, scope, keys::command_for(scope, &key)) {
            return effects;
        }
        app.held_keys.pop_front();
        effects.extend(super::on_key(app, key));
    }
    app.held_since = None;
    effects
}

/// Held keys whose rows never came are dropped, saying so: nothing acts unseen later.
pub(super) fn expire(app: &mut App) {
    if let Some(since) = app.held_since
        && app.now.saturating_duration_since(since) >= HOLD_KEYS_FOR
    {
        let dropped = app.held_keys.len();
        app.held_keys.clear();
        app.held_since = None;
        app.say(
            format!(
                "{dropped} key(s) dropped: the board's rows for the new filter did not come \
                 within {}s",
                HOLD_KEYS_FOR.as_secs()
            ),
            true,
        );
    }
}

/// Whether `command` reads the board's rows: where the cursor is, what is selected or shown.
fn acts_on_rows(app: &App, scope: Scope, command: Option<Command>) -> bool {
    scope == Scope::View
        && app.view == View::Board
        && matches!(
            command,
            Some(
                Command::Up
                    | Command::Down
                    | Command::PageUp
                    | Command::PageDown
                    | Command::Top
                    | Command::Bottom
                    | Command::Open
                    | Command::Copy
                    | Command::Retry
                    | Command::Cancel
                    | Command::RemoveLease
                    | Command::Mark
                    | Command::MarkAll
            )
        )
}
