//! The terminal: entering and leaving the console's screen, and a backend that writes only
//! what changed.
//!
//! ratatui diffs each frame against the last, but its crossterm backend still ends every draw
//! with style resets and a hide-cursor sequence, even when no cell changed. Over ssh that is a
//! steady trickle of bytes for nothing. [`QuietBackend`] drops those: an idle console whose
//! screen does not change writes nothing at all (measured by `cargo bench --bench fleet` on the
//! real binary at 80×24: 0 B/s, against 81 B/s for ratatui's backend on the same frames).
//!
//! [`enter`] installs the console's own panic hook: it restores the terminal, then chains to
//! the hook it replaced (color-eyre's), so a report prints on a usable screen — unless the
//! terminal is already gone (a dropped ssh session), when nothing is written to it at all.
//! `TERM` unset or `dumb` is refused before the screen is entered ([`term_can_draw`]), and a
//! locale that is not UTF-8 (`LC_ALL`, then `LC_CTYPE`, then `LANG`; none set is the C locale)
//! makes the console draw in ASCII, as `--ascii` does.

use std::io;

use crossterm::execute;
use crossterm::terminal::{EnterAlternateScreen, enable_raw_mode};
use ratatui::Terminal;

use super::palette::{Depth, DepthBackend};
use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

/// The console's terminal.
pub(crate) type Screen = Terminal<QuietBackend<DepthBackend>>;

/// Raw mode and the alternate screen; a panic restores the terminal before its report prints.
pub(crate) fn enter() -> io::Result<Screen> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // With the terminal gone, a report written to it would fail inside this hook, and a
        // panic there aborts: say nothing (the process still ends by unwinding).
        if TERMINAL_GONE.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let _ = ratatui::try_restore();
        previous(info);
    }));
    enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen)?;
    Terminal::new(QuietBackend::new(DepthBackend::new(depth())))
}

/// The terminal's colour depth, from the environment.
fn depth() -> Depth {
    let var = |name: &str| std::env::var(name).ok();
    Depth::detect(var("TERM").as_deref(), var("COLORTERM").as_deref())
}

/// Set once the terminal went away: nothing may be written to it any more.
static TERMINAL_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Leaves the alternate screen and raw mode, and shows the cursor (hidden cursors are
/// terminal-wide, not per screen).
pub(crate) fn leave() -> io::Result<()> {
    execute!(io::stdout(), crossterm::cursor::Show)?;
    ratatui::try_restore()
}

/// Whether the terminal on standard input is still there (after a hang-up it answers EIO,
/// and the console may not get SIGHUP — a relay, an orphaned process group). A terminal whose
/// other side closed can still answer as a terminal; it reports the hang-up when polled, which
/// the key reader may never pass on (its own thread meets the error, not the console).
pub(crate) fn still_there() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::io::IsTerminal;
    use std::os::fd::AsFd;
    let stdin = io::stdin();
    if !stdin.is_terminal() {
        return false;
    }
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(_) => !fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR)),
        Err(_) => true,
    }
}

/// The terminal's keys and resizes, read on a thread of their own: the event loop only
/// receives them, so a reader that stops returning (crossterm reads a terminal whose other
/// side closed again and again) cannot hold it, and [`still_there`] still ends the console.
/// The channel closes after the first error, which is passed on.
pub(crate) fn key_reader()
-> tokio::sync::mpsc::UnboundedReceiver<io::Result<crossterm::event::Event>> {
    let (events, received) = tokio::sync::mpsc::unbounded_channel();
    std::thread::Builder::new()
        .name("keys".into())
        .spawn(move || {
            // Reads only what is there, and stops once the console stops listening: keys
            // typed while it exits stay for the shell.
            while !events.is_closed() {
                let event = match crossterm::event::poll(std::time::Duration::from_millis(100)) {
                    Ok(false) => continue,
                    Ok(true) => crossterm::event::read(),
                    Err(e) => Err(e),
                };
                let failed = event.is_err();
                if events.send(event).is_err() || failed {
                    break;
                }
            }
        })
        .ok();
    received
}

/// Whether a shell with job control can bring a stopped console back: not when the console
/// leads its own session (`ssh -t host bootstrap-console`), where nothing could `fg` it.
pub(crate) fn job_control() -> bool {
    match (nix::unistd::getsid(None), nix::unistd::getpgrp()) {
        (Ok(session), group) => session != group,
        _ => false,
    }
}

/// The locale that decides the character set: the first of `LC_ALL`, `LC_CTYPE`, `LANG` that
/// is set (`None`: the "C" locale). `var` reads one variable.
pub(crate) fn locale(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|name| var(name).filter(|value| !value.is_empty()))
}

/// Whether the locale's character set is UTF-8, deciding as the C library does: the first of
/// `LC_ALL`, `LC_CTYPE`, `LANG` that is set; none (the "C" locale) is not UTF-8. `var` reads
/// one variable.
pub(crate) fn locale_is_utf8(var: impl Fn(&str) -> Option<String>) -> bool {
    locale(var).is_some_and(|locale| {
        let codeset = locale.to_ascii_lowercase();
        codeset.contains("utf-8") || codeset.contains("utf8")
    })
}

/// Whether `TERM` names a terminal that can draw the console (not unset, not `dumb`).
pub(crate) fn term_can_draw(term: Option<&str>) -> bool {
    term.is_some_and(|t| !t.is_empty() && t != "dumb")
}

/// Whether an error says the terminal itself is gone (a hung-up pseudo-terminal answers EIO,
/// a closed pipe EPIPE), so nothing more can be shown on it.
pub(crate) fn is_gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe | io::ErrorKind::UnexpectedEof | io::ErrorKind::NotConnected
    ) || matches!(
        e.raw_os_error(),
        Some(libc::EIO | libc::ENXIO | libc::ENOTTY | libc::EBADF)
    )
}

/// Job control: the shell gets its terminal back as it was, the process stops (SIGSTOP, since
/// the console handles SIGTSTP itself), and when continued (`fg`) the console takes raw mode and
/// its screen again and redraws everything.
pub(crate) fn suspend(screen: &mut Screen) -> io::Result<()> {
    leave()?;
    tracing::info!("suspended");
    let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGSTOP);
    tracing::info!("continued");
    enable_raw_mode()?;
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        crossterm::terminal::Clear(crossterm::terminal::ClearType::All)
    )?;
    // A fresh terminal forgets the last frame, so the next draw sends every cell. (Its
    // `clear` would ask the terminal where the cursor is and wait for the answer.)
    *screen = Terminal::new(QuietBackend::new(DepthBackend::new(depth())))?;
    Ok(())
}

/// A backend that skips empty draws and cursor changes that change nothing.
pub struct QuietBackend<B> {
    inner: B,
    /// What the cursor was last set to (`None`: unknown, so the next change is sent).
    cursor_hidden: Option<bool>,
    /// The terminal went away: nothing is written any more (ratatui's own clean-up on drop
    /// would fail and report it on the dead terminal, which aborts the process).
    gone: bool,
}

impl<B> QuietBackend<B> {
    pub fn new(inner: B) -> Self {
        Self {
            inner,
            cursor_hidden: None,
            gone: false,
        }
    }

    /// From now on, write nothing: the terminal is gone.
    pub(crate) fn forget_terminal(&mut self) {
        self.gone = true;
        TERMINAL_GONE.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl<B: Backend> Backend for QuietBackend<B> {
    type Error = B::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let mut content = content.peekable();
        if self.gone || content.peek().is_none() {
            return Ok(());
        }
        self.inner.draw(content)
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        if self.gone {
            return Ok(());
        }
        if self.cursor_hidden != Some(true) {
            self.inner.hide_cursor()?;
            self.cursor_hidden = Some(true);
        }
        Ok(())
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        if self.gone {
            return Ok(());
        }
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
        if self.gone {
            return Ok(());
        }
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        if self.gone {
            return Ok(());
        }
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        if self.gone {
            return Ok(());
        }
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        if self.gone {
            return Ok(());
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_locale_decides_utf8_as_the_c_library_does() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(locale_is_utf8(env(&[("LANG", "en_US.UTF-8")])));
        assert!(locale_is_utf8(env(&[
            ("LC_CTYPE", "C.utf8"),
            ("LANG", "C")
        ])));
        assert!(!locale_is_utf8(env(&[
            ("LC_ALL", "C"),
            ("LANG", "en_US.UTF-8")
        ])));
        assert!(!locale_is_utf8(env(&[("LANG", "de_DE.ISO-8859-1")])));
        assert!(!locale_is_utf8(env(&[])), "no locale is the C locale");
        assert!(locale_is_utf8(env(&[("LC_ALL", ""), ("LANG", "C.UTF-8")])));
        assert!(!term_can_draw(None) && !term_can_draw(Some("dumb")));
        assert!(term_can_draw(Some("xterm-256color")));
    }

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
        let inner = &terminal.backend().inner;
        assert_eq!((inner.draws, inner.cursor_changes), (1, 1));
        draw(&mut terminal, "stale");
        assert_eq!(terminal.backend().inner.draws, 2);
    }
}
