//! Every key binding in one table: the handlers match on [`Command`], and the help screen and the
//! hint bar are generated from the same table, so they can never disagree.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
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
}

/// One row of the key table.
pub struct Binding {
    pub keys: &'static [(KeyCode, KeyModifiers)],
    /// How the keys are written on screen.
    pub shown: &'static str,
    pub command: Command,
    /// At most 32 characters: the help screen has two columns on an 80×24 terminal.
    pub help: &'static str,
    /// Shown in the hint bar at the bottom of the board.
    pub hint: Option<&'static str>,
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;

pub const BINDINGS: &[Binding] = &[
    Binding {
        keys: &[(KeyCode::Up, NONE), (KeyCode::Char('k'), NONE)],
        shown: "↑/k",
        command: Command::Up,
        help: "move up",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Down, NONE), (KeyCode::Char('j'), NONE)],
        shown: "↓/j",
        command: Command::Down,
        help: "move down",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::PageUp, NONE), (KeyCode::Char('b'), CTRL)],
        shown: "PgUp",
        command: Command::PageUp,
        help: "page up",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::PageDown, NONE), (KeyCode::Char('f'), CTRL)],
        shown: "PgDn",
        command: Command::PageDown,
        help: "page down",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Char('g'), NONE), (KeyCode::Home, NONE)],
        shown: "g",
        command: Command::Top,
        help: "first row",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Char('G'), NONE), (KeyCode::End, NONE)],
        shown: "G",
        command: Command::Bottom,
        help: "last row",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Enter, NONE)],
        shown: "⏎",
        command: Command::Open,
        help: "open the selected space/tenant",
        hint: Some("detail"),
    },
    Binding {
        keys: &[(KeyCode::Esc, NONE)],
        shown: "Esc",
        command: Command::Back,
        help: "back / close / clear filter",
        hint: Some("back"),
    },
    Binding {
        keys: &[(KeyCode::Tab, NONE)],
        shown: "Tab",
        command: Command::NextView,
        help: "next view (board ... health)",
        hint: Some("view"),
    },
    Binding {
        keys: &[(KeyCode::BackTab, NONE)],
        shown: "S-Tab",
        command: Command::PrevView,
        help: "previous view",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Char('/'), NONE)],
        shown: "/",
        command: Command::Filter,
        help: "filter tenant/space/worker/code",
        hint: Some("filter"),
    },
    Binding {
        keys: &[(KeyCode::Char('f'), NONE)],
        shown: "f",
        command: Command::QuickNext,
        help: "quick filter: next class",
        hint: Some("quick"),
    },
    Binding {
        keys: &[(KeyCode::Char('F'), NONE)],
        shown: "F",
        command: Command::QuickPrev,
        help: "quick filter: previous class",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Char('s'), NONE)],
        shown: "s",
        command: Command::Sort,
        help: "sort: attention/tenant/prog/idle",
        hint: Some("sort"),
    },
    Binding {
        keys: &[(KeyCode::Char('S'), NONE)],
        shown: "S",
        command: Command::SortReverse,
        help: "reverse the sort",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Char('p'), NONE)],
        shown: "p",
        command: Command::Pause,
        help: "pause / resume polling",
        hint: Some("pause"),
    },
    Binding {
        keys: &[(KeyCode::Char('+'), NONE), (KeyCode::Char('='), NONE)],
        shown: "+",
        command: Command::Faster,
        help: "poll more often",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Char('-'), NONE)],
        shown: "-",
        command: Command::Slower,
        help: "poll less often",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Char('R'), CTRL), (KeyCode::Char('l'), CTRL)],
        shown: "C-r",
        command: Command::Refresh,
        help: "poll now; audit, health: again",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Char('y'), NONE)],
        shown: "y",
        command: Command::Copy,
        help: "copy id (OSC 52, works over ssh)",
        hint: Some("copy id"),
    },
    Binding {
        keys: &[(KeyCode::Char('r'), NONE)],
        shown: "r",
        command: Command::Retry,
        help: "retry selected or marked spaces",
        hint: Some("retry"),
    },
    Binding {
        keys: &[(KeyCode::Char('c'), NONE)],
        shown: "c",
        command: Command::Cancel,
        help: "cancel selected or marked spaces",
        hint: Some("cancel"),
    },
    Binding {
        keys: &[(KeyCode::Char('x'), NONE)],
        shown: "x",
        command: Command::RemoveLease,
        help: "remove the mutation lease",
        hint: Some("lease"),
    },
    Binding {
        keys: &[(KeyCode::Char(' '), NONE)],
        shown: "Space",
        command: Command::Mark,
        help: "mark / unmark for a bulk action",
        hint: Some("mark"),
    },
    Binding {
        keys: &[(KeyCode::Char('*'), NONE)],
        shown: "*",
        command: Command::MarkAll,
        help: "mark all spaces the filter shows",
        hint: None,
    },
    Binding {
        keys: &[(KeyCode::Char('u'), NONE)],
        shown: "u",
        command: Command::ClearMarks,
        help: "clear all marks",
        hint: Some("clear marks"),
    },
    Binding {
        keys: &[(KeyCode::Char('?'), NONE)],
        shown: "?",
        command: Command::Help,
        help: "this help",
        hint: Some("help"),
    },
    Binding {
        keys: &[(KeyCode::Char('q'), NONE), (KeyCode::Char('c'), CTRL)],
        shown: "q",
        command: Command::Quit,
        help: "quit; C-z suspend, C-l redraw",
        hint: Some("quit"),
    },
];

/// The command bound to a key, if any. Shift is ignored for characters: terminals differ in
/// whether they report it for `G` or `?`.
pub fn command_for(key: &KeyEvent) -> Option<Command> {
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
    BINDINGS
        .iter()
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
        assert_eq!(
            command_for(&key(KeyCode::Char('j'), NONE)),
            Some(Command::Down)
        );
        assert_eq!(
            command_for(&key(KeyCode::Char('G'), KeyModifiers::SHIFT)),
            Some(Command::Bottom)
        );
        assert_eq!(
            command_for(&key(KeyCode::Char('c'), CTRL)),
            Some(Command::Quit)
        );
        assert_eq!(
            command_for(&key(KeyCode::Char('c'), NONE)),
            Some(Command::Cancel)
        );
        assert_eq!(
            command_for(&key(KeyCode::Char('?'), KeyModifiers::SHIFT)),
            Some(Command::Help)
        );
        assert_eq!(command_for(&key(KeyCode::Char('z'), NONE)), None);
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

    #[test]
    fn no_key_is_bound_twice() {
        let mut seen = std::collections::HashSet::new();
        for binding in BINDINGS {
            for key in binding.keys {
                assert!(seen.insert(*key), "{key:?} is bound twice");
            }
        }
    }
}
