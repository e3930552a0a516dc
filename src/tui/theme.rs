//! One theme of semantic styles: widgets ask for "failed" or "selected", never for a colour.
//! With `NO_COLOR` every colour is dropped and only weight and reverse video remain — state is
//! always also written as text.

use ratatui::style::{Color, Modifier, Style};

use crate::domain::signals::Attention;

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    color: bool,
}

impl Theme {
    pub fn new(color: bool) -> Self {
        Self { color }
    }

    fn paint(&self, fg: Color) -> Style {
        if self.color {
            Style::new().fg(fg)
        } else {
            Style::new()
        }
    }

    pub(crate) fn plain(&self) -> Style {
        Style::new()
    }

    pub(crate) fn dim(&self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }

    pub(crate) fn heading(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub(crate) fn title_bar(&self) -> Style {
        if self.color {
            Style::new().bg(Color::Blue).fg(Color::White)
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// The environment label (`--label prod`): impossible to miss.
    pub(crate) fn label(&self, label: &str) -> Style {
        let loud = Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED);
        if !self.color {
            return loud;
        }
        let production = matches!(
            label.to_ascii_lowercase().as_str(),
            "prod" | "production" | "live"
        );
        if production {
            Style::new()
                .bg(Color::Red)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new()
                .bg(Color::Yellow)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD)
        }
    }

    pub(crate) fn sandbox(&self) -> Style {
        if self.color {
            Style::new()
                .bg(Color::Magenta)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        }
    }

    pub(crate) fn read_only(&self) -> Style {
        self.paint(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn read_write(&self) -> Style {
        self.paint(Color::Green).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn live(&self) -> Style {
        self.paint(Color::Green)
    }

    pub(crate) fn stale(&self) -> Style {
        if self.color {
            Style::new()
                .bg(Color::Red)
                .fg(Color::White)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        }
    }

    pub(crate) fn error(&self) -> Style {
        self.paint(Color::Red).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn ok(&self) -> Style {
        self.paint(Color::Green)
    }

    pub(crate) fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    pub(crate) fn changed(&self) -> Style {
        if self.color {
            Style::new().bg(Color::Rgb(40, 40, 90))
        } else {
            Style::new().add_modifier(Modifier::UNDERLINED)
        }
    }

    pub(crate) fn marked(&self) -> Style {
        self.paint(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn key(&self) -> Style {
        self.paint(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub(crate) fn active_tab(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD | Modifier::REVERSED)
    }

    pub(crate) fn attention(&self, attention: Attention) -> Style {
        match attention {
            Attention::Failed => self.paint(Color::Red).add_modifier(Modifier::BOLD),
            Attention::Blocked => self.paint(Color::Magenta).add_modifier(Modifier::BOLD),
            Attention::LeaseExpired | Attention::Stuck => {
                self.paint(Color::LightRed).add_modifier(Modifier::BOLD)
            }
            Attention::Reclaiming | Attention::HeartbeatLate => self.paint(Color::Yellow),
            // A writer at work: nothing to act on.
            Attention::Writing => self.dim(),
            Attention::Running => self.paint(Color::Cyan),
            Attention::Queued => self.plain(),
            Attention::Canceled => self.dim(),
            Attention::Succeeded => self.paint(Color::Green),
        }
    }
}
