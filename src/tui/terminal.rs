//! The terminal: entering and leaving the console's screen, and a backend that writes only
//! what changed.
//!
//! ratatui diffs each frame against the last, but its crossterm backend still ends every draw
//! with style resets and a hide-cursor sequence, even when no cell changed. Over ssh that is a
//! steady trickle of bytes for nothing. [`QuietBackend`] drops those: an idle console whose
//! screen does not change writes nothing at all.

use std::io::{self, Stdout};

use crossterm::execute;
use crossterm::terminal::{EnterAlternateScreen, enable_raw_mode};
use ratatui::Terminal;
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

/// The console's terminal.
pub type Screen = Terminal<QuietBackend<CrosstermBackend<Stdout>>>;

/// Raw mode and the alternate screen; a panic restores the terminal before its report prints.
pub fn enter() -> io::Result<Screen> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = ratatui::try_restore();
        previous(info);
    }));
    enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen)?;
    Terminal::new(QuietBackend::new(CrosstermBackend::new(io::stdout())))
}

/// Leaves the alternate screen and raw mode, and shows the cursor.
pub fn leave() -> io::Result<()> {
    ratatui::try_restore()
}

/// A backend that skips empty draws and cursor changes that change nothing.
pub struct QuietBackend<B> {
    inner: B,
    /// What the cursor was last set to (`None`: unknown, so the next change is sent).
    cursor_hidden: Option<bool>,
}

impl<B> QuietBackend<B> {
    pub fn new(inner: B) -> Self {
        Self {
            inner,
            cursor_hidden: None,
        }
    }

    pub fn inner(&self) -> &B {
        &self.inner
    }
}

impl<B: Backend> Backend for QuietBackend<B> {
    type Error = B::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let mut content = content.peekable();
        if content.peek().is_none() {
            return Ok(());
        }
        self.inner.draw(content)
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        if self.cursor_hidden != Some(true) {
            self.inner.hide_cursor()?;
            self.cursor_hidden = Some(true);
        }
        Ok(())
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        if self.cursor_hidden != Some(false) {
            self.inner.show_cursor()?;
            self.cursor_hidden = Some(false);
        }
        Ok(())
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::widgets::Paragraph;

    /// Counts what reaches the inner backend.
    struct Counting {
        inner: TestBackend,
        draws: usize,
        cursor_changes: usize,
    }

    impl Backend for Counting {
        type Error = <TestBackend as Backend>::Error;
        fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
        where
            I: Iterator<Item = (u16, u16, &'a Cell)>,
        {
            self.draws += 1;
            self.inner.draw(content)
        }
        fn hide_cursor(&mut self) -> Result<(), Self::Error> {
            self.cursor_changes += 1;
            self.inner.hide_cursor()
        }
        fn show_cursor(&mut self) -> Result<(), Self::Error> {
            self.cursor_changes += 1;
            self.inner.show_cursor()
        }
        fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
            self.inner.get_cursor_position()
        }
        fn set_cursor_position<P: Into<Position>>(&mut self, p: P) -> Result<(), Self::Error> {
            self.inner.set_cursor_position(p)
        }
        fn clear(&mut self) -> Result<(), Self::Error> {
            self.inner.clear()
        }
        fn clear_region(&mut self, t: ClearType) -> Result<(), Self::Error> {
            self.inner.clear_region(t)
        }
        fn size(&self) -> Result<Size, Self::Error> {
            self.inner.size()
        }
        fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
            self.inner.window_size()
        }
        fn flush(&mut self) -> Result<(), Self::Error> {
            self.inner.flush()
        }
    }

    #[test]
    fn an_unchanged_frame_reaches_nothing() {
        let counting = Counting {
            inner: TestBackend::new(20, 2),
            draws: 0,
            cursor_changes: 0,
        };
        let mut terminal = Terminal::new(QuietBackend::new(counting)).expect("terminal");
        let draw = |terminal: &mut Terminal<QuietBackend<Counting>>, text: &str| {
            terminal
                .draw(|frame| frame.render_widget(Paragraph::new(text.to_string()), frame.area()))
                .expect("draw");
        };
        draw(&mut terminal, "live");
        draw(&mut terminal, "live");
        draw(&mut terminal, "live");
        let inner = terminal.backend().inner();
        assert_eq!((inner.draws, inner.cursor_changes), (1, 1));
        draw(&mut terminal, "stale");
        assert_eq!(terminal.backend().inner().draws, 2);
    }
}
