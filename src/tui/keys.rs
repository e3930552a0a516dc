//! Every key binding in one table: the handlers match on [`Command`], and the help screen and the
//! hint bar are generated from the same table, so they can never disagree. Each binding
//! belongs to a [`Scope`]: the keys that work [`Scope::Anywhere`] are looked up first, then
//! those of the scope the console is in (a view, the filter prompt, a dialog at one of its
//! stages). A test checks that every binding can fire in its scope (an `Anywhere` key would
//! otherwise hide it).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a binding works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Whatever has the focus: looked up before every other scope.
    Anywhere,
    /// The views (board, detail, tenants, leases, audit, health).
    View,
    /// Typing the board's filter (`/`).
    Filter,
    /// An action dialog being planned or filled in (reason, confirmation).
    Dialog,
    /// An action dialog whose actions are being applied.
    Applying,
    /// An action dialog showing its results (or why it could not plan).
    Finished,
    /// The help screen (any other key closes it).
    Help,
}

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    Back,
    NextView,
    PrevView,
    Filter,
    QuickNext,
    QuickPrev,
    Sort,
    SortReverse,
    Pause,
    Faster,
    Slower,
    Refresh,
    Copy,
    Retry,
    Cancel,
    RemoveLease,
    Mark,
    MarkAll,
    ClearMarks,
    Help,
    Quit,
    /// Stop the console as a shell's job (raw mode delivers Ctrl-Z as a key).
    Suspend,
    /// Draw the whole screen again from nothing.
    Redraw,
    /// A dialog: apply what the plans say would apply.
    Apply,
    /// A dialog: the other input (reason, confirmation).
    NextField,
    /// A dialog: plan again at once.
    PlanAgain,
    /// A dialog: take the plans' new decisions.
    TakePlan,
    /// A dialog: force the removal of a lease that is not an orphan suspect.
    Force,
    /// A text input: delete the last character.
    DeleteChar,
    /// A text input: clear it.
    ClearField,
}

/// One row of the key table.
pub struct Binding {
    pub(crate) scope: Scope,
    pub(crate) keys: &'static [(KeyCode, KeyModifiers)],
    /// How the keys are written on screen.
    pub shown: &'static str,
    pub(crate) command: Command,
    /// At most 32 characters: the help screen has two columns on an 80×24 terminal.
    pub help: &'static str,
    /// Shown in the hint bar at the bottom of the board.
    pub hint: Option<&'static str>,
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
use Scope::{Anywhere, Applying, Dialog, Filter, Finished, View};

pub(crate) const BINDINGS: &[Binding] = &[
    Binding {
        scope: View,
        keys: &[(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        shown: "↑/k",
        command: Command::Up,
        help: "move up",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        shown: "↓/j",
        command: Command::Down,
        help: "move down",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::PageUp, NONE), (KeyCode::Char('b'), CTRL)],
        shown: "PgUp",
        command: Command::PageUp,
        help: "page up",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::PageDown, NONE), (KeyCode::Char('f'), CTRL)],
        shown: "PgDn",
        command: Command::PageDown,
        help: "page down",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('g'), NONE), (KeyCode::Home, NONE)],
        shown: "g",
        command: Command::Top,
        help: "first row",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('G'), NONE), (KeyCode::End, NONE)],
        shown: "G",
        command: Command::Bottom,
        help: "last row",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Enter, NONE)],
        shown: "⏎",
        command: Command::Open,
        help: "open the selected space/tenant",
        hint: Some("detail"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Esc, NONE)],
        shown: "Esc",
        command: Command::Back,
        help: "back / close / clear filter",
        hint: Some("back"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Tab, NONE)],
        shown: "Tab",
        command: Command::NextView,
        help: "next view (board ... health)",
        hint: Some("view"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::BackTab, NONE)],
        shown: "S-Tab",
        command: Command::PrevView,
        help: "previous view",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('/'), NONE)],
        shown: "/",
        command: Command::Filter,
        help: "filter tenant/space/worker/code",
        hint: Some("filter"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('f'), NONE)],
        shown: "f",
        command: Command::QuickNext,
        help: "quick filter: next group/class",
        hint: Some("quick"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('F'), NONE)],
        shown: "F",
        command: Command::QuickPrev,
        help: "quick filter: previous one",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('s'), NONE)],
        shown: "s",
        command: Command::Sort,
        help: "sort: attention/tenant/prog/idle",
        hint: Some("sort"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('S'), NONE)],
        shown: "S",
        command: Command::SortReverse,
        help: "reverse the sort",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('p'), NONE)],
        shown: "p",
        command: Command::Pause,
        help: "pause / resume polling",
        hint: Some("pause"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('+'), NONE), (KeyCode::Char('='), NONE)],
        shown: "+",
        command: Command::Faster,
        help: "poll more often",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('-'), NONE)],
        shown: "-",
        command: Command::Slower,
        help: "poll less often",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('r'), CTRL)],
        shown: "C-r",
        command: Command::Refresh,
        help: "poll now; audit, health: again",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('y'), NONE)],
        shown: "y",
        command: Command::Copy,
        help: "copy id (OSC 52, works over ssh)",
        hint: Some("copy id"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('r'), NONE)],
        shown: "r",
        command: Command::Retry,
        help: "retry selected or marked spaces",
        hint: Some("retry"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('c'), NONE)],
        shown: "c",
        command: Command::Cancel,
        help: "cancel selected or marked spaces",
        hint: Some("cancel"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('x'), NONE)],
        shown: "x",
        command: Command::RemoveLease,
        help: "remove the mutation lease",
        hint: Some("lease"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char(' '), NONE)],
        shown: "Space",
        command: Command::Mark,
        help: "mark / unmark, then next row",
        hint: Some("mark"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('*'), NONE)],
        shown: "*",
        command: Command::MarkAll,
        help: "mark all spaces the filter shows",
        hint: None,
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('u'), NONE)],
        shown: "u",
        command: Command::ClearMarks,
        help: "clear all marks",
        hint: Some("clear marks"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('?'), NONE)],
        shown: "?",
        command: Command::Help,
        help: "this help",
        hint: Some("help"),
    },
    Binding {
        scope: View,
        keys: &[(KeyCode::Char('q'), NONE)],
        shown: "q",
        command: Command::Quit,
        help: "quit",
        hint: Some("quit"),
    },
    // Whatever has the focus.
    Binding {
        scope: Anywhere,
        keys: &[(KeyCode::Char('c'), CTRL)],
        shown: "C-c",
        command: Command::Quit,
        help: "quit (twice while applying)",
        hint: Some("quit"),
    },
    Binding {
        scope: Anywhere,
        keys: &[(KeyCode::Char('z'), CTRL)],
        shown: "C-z",
        command: Command::Suspend,
        help: "suspend to the shell",
        hint: Some("suspend"),
    },
    Binding {
        scope: Anywhere,
        keys: &[(KeyCode::Char('l'), CTRL)],
        shown: "C-l",
        command: Command::Redraw,
        help: "redraw the screen",
        hint: Some("redraw"),
    },
    // Typing the filter.
    Binding {
        scope: Filter,
        keys: &[(KeyCode::Enter, NONE)],
        shown: "⏎",
        command: Command::Open,
        help: "keep the filter",
        hint: Some("keep"),
    },
    Binding {
        scope: Filter,
        keys: &[(KeyCode::Esc, NONE)],
        shown: "Esc",
        command: Command::Back,
        help: "clear the filter",
        hint: Some("clear"),
    },
    Binding {
        scope: Filter,
        keys: &[(KeyCode::Backspace, NONE)],
        shown: "⌫",
        command: Command::DeleteChar,
        help: "delete a character",
        hint: None,
    },
    Binding {
        scope: Filter,
        keys: &[(KeyCode::Char('u'), CTRL)],
        shown: "C-u",
        command: Command::ClearField,
        help: "clear what was typed",
        hint: None,
    },
    // A dialog being filled in, in the order its hints are shown.
    Binding {
        scope: Dialog,
        keys: &[(KeyCode::Char('y'), CTRL)],
        shown: "C-y",
        command: Command::TakePlan,
        help: "take the new plan",
        hint: Some("take the new plan"),
    },
    Binding {
        scope: Dialog,
        keys: &[(KeyCode::Char('f'), CTRL)],
        shown: "C-f",
        command: Command::Force,
        help: "force a lease removal",
        hint: Some("force"),
    },
    Binding {
        scope: Dialog,
        keys: &[(KeyCode::Enter, NONE)],
        shown: "⏎",
        command: Command::Apply,
        help: "apply",
        hint: Some("apply"),
    },
    Binding {
        scope: Dialog,
        keys: &[(KeyCode::Esc, NONE)],
        shown: "Esc",
        command: Command::Back,
        help: "cancel: nothing is written",
        hint: Some("cancel"),
    },
    Binding {
        scope: Dialog,
        keys: &[(KeyCode::Tab, NONE), (KeyCode::BackTab, NONE)],
        shown: "Tab",
        command: Command::NextField,
        help: "reason / confirmation",
        hint: Some("next field"),
    },
    Binding {
        scope: Dialog,
        keys: &[(KeyCode::Char('r'), CTRL)],
        shown: "C-r",
        command: Command::PlanAgain,
        help: "plan again",
        hint: Some("plan again"),
    },
    Binding {
        scope: Dialog,
        keys: &[(KeyCode::Backspace, NONE)],
        shown: "⌫",
        command: Command::DeleteChar,
        help: "delete a character",
        hint: None,
    },
    Binding {
        scope: Dialog,
        keys: &[(KeyCode::Char('u'), CTRL)],
        shown: "C-u",
        command: Command::ClearField,
        help: "clear the field",
        hint: None,
    },
    Binding {
        scope: Applying,
        keys: &[(KeyCode::Esc, NONE)],
        shown: "Esc",
        command: Command::Back,
        help: "stop waiting",
        hint: Some("stop waiting"),
    },
    Binding {
        scope: Finished,
        keys: &[
            (KeyCode::Enter, NONE),
            (KeyCode::Esc, NONE),
            (KeyCode::Char('q'), NONE),
        ],
        shown: "⏎",
        command: Command::Back,
        help: "close",
        hint: Some("close"),
    },
];

/// The bindings of `scope`, in the table's order.
pub fn bindings(scope: Scope) -> impl Iterator<Item = &'static Binding> {
    BINDINGS.iter().filter(move |b| b.scope == scope)
}

/// The binding of `command` in `scope` (how its key is shown and hinted there).
pub(crate) fn binding(scope: Scope, command: Command) -> Option<&'static Binding> {
    bindings(scope).find(|b| b.command == command)
}

/// The command bound to a key in `scope`, if any: a key that works anywhere first. Shift is
/// ignored for characters: terminals differ in whether they report it for `G` or `?`.
pub(crate) fn command_for(scope: Scope, key: &KeyEvent) -> Option<Command> {
    bound_in(Scope::Anywhere, key).or_else(|| bound_in(scope, key))
}

fn bound_in(scope: Scope, key: &KeyEvent) -> Option<Command> {
    // Shift is part of the character (`G`, `*`) and of BackTab itself (crossterm reports
    // Shift-Tab as BackTab with SHIFT set; some terminals send it without).
    let modifiers = if matches!(key.code, KeyCode::Char(_) | KeyCode::BackTab) {
        key.modifiers - KeyModifiers::SHIFT
    } else {
        key.modifiers
    };
    let code = match key.code {
        KeyCode::Char(c) if modifiers.contains(KeyModifiers::CONTROL) => {
            KeyCode::Char(c.to_ascii_lowercase())
        }
        other => other,
    };
    bindings(scope)
        .find(|binding| {
            binding.keys.iter().any(|(k, m)| {
                let k = match k {
                    KeyCode::Char(c) if m.contains(KeyModifiers::CONTROL) => {
                        KeyCode::Char(c.to_ascii_lowercase())
                    }
                    other => *other,
                };
                k == code && *m == modifiers
            })
        })
        .map(|binding| binding.command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn every_key_maps_to_one_command() {
        let view = |code, modifiers| command_for(View, &key(code, modifiers));
        assert_eq!(view(KeyCode::Char('j'), NONE), Some(Command::Down));
        assert_eq!(
            view(KeyCode::Char('G'), KeyModifiers::SHIFT),
            Some(Command::Bottom)
        );
        assert_eq!(view(KeyCode::Char('c'), CTRL), Some(Command::Quit));
        assert_eq!(view(KeyCode::Char('c'), NONE), Some(Command::Cancel));
        assert_eq!(
            view(KeyCode::Char('?'), KeyModifiers::SHIFT),
            Some(Command::Help)
        );
        assert_eq!(view(KeyCode::Char('z'), NONE), None);
        assert_eq!(view(KeyCode::Char('l'), CTRL), Some(Command::Redraw));
        // In a dialog letters are typed; Ctrl-C still quits.
        assert_eq!(command_for(Dialog, &key(KeyCode::Char('r'), NONE)), None);
        assert_eq!(
            command_for(Dialog, &key(KeyCode::Char('r'), CTRL)),
            Some(Command::PlanAgain)
        );
        assert_eq!(
            command_for(Applying, &key(KeyCode::Char('c'), CTRL)),
            Some(Command::Quit)
        );
    }

    #[test]
    fn every_binding_can_fire_in_its_scope() {
        for binding in BINDINGS {
            for (code, modifiers) in binding.keys {
                assert_eq!(
                    command_for(binding.scope, &key(*code, *modifiers)),
                    Some(binding.command),
                    "{} ({code:?} {modifiers:?}) in {:?} never reaches {:?}",
                    binding.shown,
                    binding.scope,
                    binding.command
                );
            }
        }
    }

    #[test]
    fn every_help_text_fits_a_help_column() {
        for binding in BINDINGS {
            assert!(
                binding.help.chars().count() <= 32,
                "{:?} is too long",
                binding.help
            );
        }
    }

    /// How the README's key table names each scope.
    fn readme_scope(scope: Scope) -> &'static str {
        match scope {
            Scope::Anywhere => "anywhere",
            Scope::View => "views",
            Scope::Filter => "typing a filter",
            Scope::Dialog => "action dialog",
            Scope::Applying => "while applying",
            Scope::Finished => "action results",
            Scope::Help => "the help",
        }
    }

    #[test]
    fn the_readme_lists_every_binding_as_the_table_has_it() {
        let readme = include_str!("../../README.md");
        let listed: Vec<&str> = readme
            .lines()
            .skip_while(|line| !line.starts_with("| key | what it does | where |"))
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .collect();
        let expected: Vec<String> = BINDINGS
            .iter()
            .map(|b| format!("| `{}` | {} | {} |", b.shown, b.help, readme_scope(b.scope)))
            .collect();
        assert_eq!(
            listed, expected,
            "README.md's key table and BINDINGS differ"
        );
    }

    #[test]
    fn no_key_is_bound_twice_in_a_scope() {
        let mut seen = std::collections::HashSet::new();
        for binding in BINDINGS {
            for key in binding.keys {
                assert!(
                    seen.insert((binding.scope, *key)),
                    "{key:?} is bound twice in {:?}",
                    binding.scope
                );
            }
        }
    }
}
