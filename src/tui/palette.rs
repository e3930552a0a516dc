//! Colour depth: what the terminal says it can show (`COLORTERM`, `TERM`), and a backend that
//! writes no more than that. crossterm writes every colour as a 256-colour (`38;5;N`) or true
//! colour (`38;2;R;G;B`) code, which a 16-colour terminal (`TERM=xterm`, `vt100`, `screen`)
//! shows wrongly or not at all; for those the console writes the basic codes itself.

use std::io::{self, Write};

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::style::{Color, Modifier};
use unicode_width::UnicodeWidthStr;

/// How many colours the terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Depth {
    /// The 16 ANSI colours.
    Basic,
    /// 256 indexed colours.
    Indexed,
    /// 24-bit colour.
    True,
}

impl Depth {
    /// From `COLORTERM` (`truecolor`, `24bit`) and `TERM` (`*-256color`, `*-direct`).
    pub(crate) fn detect(term: Option<&str>, colorterm: Option<&str>) -> Self {
        if colorterm.is_some_and(|c| matches!(c, "truecolor" | "24bit")) {
            return Self::True;
        }
        match term {
            Some(t) if t.contains("direct") => Self::True,
            Some(t) if t.contains("256color") => Self::Indexed,
            _ => Self::Basic,
        }
    }
}

/// The console's backend: crossterm's, except that colours are written at the terminal's
/// depth.
pub(crate) struct DepthBackend {
    inner: CrosstermBackend<io::Stdout>,
    depth: Depth,
}

impl DepthBackend {
    pub fn new(depth: Depth) -> Self {
        Self {
            inner: CrosstermBackend::new(io::stdout()),
            depth,
        }
    }
}

/// A colour a terminal of `depth` shows: true colour where it is shown, else the nearest of
/// the 256 (the colour cube) or of the 16 (the console's palette has one such colour, a
/// background for changed rows: a dim blue, or plain blue on 16 colours).
fn fit(color: Color, depth: Depth) -> Color {
    match (color, depth) {
        (Color::Rgb(..), Depth::True) => color,
        (Color::Rgb(r, g, b), Depth::Indexed) => nearest_indexed(r, g, b),
        (Color::Rgb(r, g, b), Depth::Basic) => nearest_basic(r, g, b),
        (Color::Indexed(_), Depth::Basic) => Color::Reset,
        _ => color,
    }
}

/// The nearest colour of the 256-colour cube (indices 16–231, six levels per channel).
fn nearest_indexed(r: u8, g: u8, b: u8) -> Color {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |v: u8| {
        (0..LEVELS.len())
            .min_by_key(|i| LEVELS[*i].abs_diff(v))
            .unwrap_or(0) as u8
    };
    Color::Indexed(16 + 36 * level(r) + 6 * level(g) + level(b))
}

fn nearest_basic(r: u8, g: u8, b: u8) -> Color {
    let bright = u16::from(r) + u16::from(g) + u16::from(b) > 384;
    match (r > 100, g > 100, b > 100, bright) {
        (false, false, true, _) | (false, false, false, false) if b > r && b > g => Color::Blue,
        (true, false, false, _) => Color::Red,
        (false, true, false, _) => Color::Green,
        (true, true, false, _) => Color::Yellow,
        (true, false, true, _) => Color::Magenta,
        (false, true, true, _) => Color::Cyan,
        (true, true, true, _) => Color::White,
        _ => Color::DarkGray,
    }
}

/// The basic SGR code of a colour, as foreground (`base` 30) or background (`base` 40).
fn basic_code(color: Color, base: u8) -> Option<u8> {
    let (offset, bright) = match color {
        Color::Black => (0, false),
        Color::Red => (1, false),
        Color::Green => (2, false),
        Color::Yellow => (3, false),
        Color::Blue => (4, false),
        Color::Magenta => (5, false),
        Color::Cyan => (6, false),
        Color::Gray => (7, false),
        Color::DarkGray => (0, true),
        Color::LightRed => (1, true),
        Color::LightGreen => (2, true),
        Color::LightYellow => (3, true),
        Color::LightBlue => (4, true),
        Color::LightMagenta => (5, true),
        Color::LightCyan => (6, true),
        Color::White => (7, true),
        _ => return None,
    };
    Some(if bright {
        base + 60 + offset
    } else {
        base + offset
    })
}

/// The whole SGR sequence for a cell's style, from a reset.
fn sgr(cell: &Cell) -> String {
    let mut codes = vec!["0".to_string()];
    for (modifier, code) in [
        (Modifier::BOLD, "1"),
        (Modifier::DIM, "2"),
        (Modifier::ITALIC, "3"),
        (Modifier::UNDERLINED, "4"),
        (Modifier::REVERSED, "7"),
        (Modifier::CROSSED_OUT, "9"),
    ] {
        if cell.modifier.contains(modifier) {
            codes.push(code.to_string());
        }
    }
    let fg = basic_code(fit(cell.fg, Depth::Basic), 30);
    let bg = basic_code(fit(cell.bg, Depth::Basic), 40);
    codes.extend(fg.map(|c| c.to_string()));
    codes.extend(bg.map(|c| c.to_string()));
    format!("\x1b[{}m", codes.join(";"))
}

impl Backend for DepthBackend {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        if self.depth != Depth::Basic {
            let depth = self.depth;
            let cells: Vec<(u16, u16, Cell)> = content
                .map(|(x, y, cell)| {
                    let mut cell = cell.clone();
                    cell.fg = fit(cell.fg, depth);
                    cell.bg = fit(cell.bg, depth);
                    (x, y, cell)
                })
                .collect();
            return self.inner.draw(cells.iter().map(|(x, y, c)| (*x, *y, c)));
        }
        // 16 colours: the codes written here, the rest as crossterm would.
        let mut out = io::stdout().lock();
        let mut at: Option<(u16, u16)> = None;
        let mut style = String::new();
        for (x, y, cell) in content {
            if at != Some((x, y)) {
                write!(out, "\x1b[{};{}H", y + 1, x + 1)?;
            }
            let wanted = sgr(cell);
            if wanted != style {
                out.write_all(wanted.as_bytes())?;
                style = wanted;
            }
            let symbol = cell.symbol();
            out.write_all(symbol.as_bytes())?;
            let width = u16::try_from(symbol.width().max(1)).unwrap_or(1);
            at = Some((x.saturating_add(width), y));
        }
        out.write_all(b"\x1b[0m")?;
        Ok(())
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        self.inner.size()
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stdout().lock().flush()?;
        Backend::flush(&mut self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_depth_follows_colorterm_then_term() {
        assert_eq!(Depth::detect(Some("xterm"), Some("truecolor")), Depth::True);
        assert_eq!(Depth::detect(Some("xterm-256color"), None), Depth::Indexed);
        assert_eq!(
            Depth::detect(Some("screen-256color"), Some("")),
            Depth::Indexed
        );
        assert_eq!(Depth::detect(Some("xterm"), None), Depth::Basic);
        assert_eq!(Depth::detect(Some("vt100"), None), Depth::Basic);
    }

    #[test]
    fn each_depth_gets_the_colour_it_shows() {
        let changed = Color::Rgb(40, 40, 90);
        assert_eq!(fit(changed, Depth::True), changed);
        assert_eq!(fit(changed, Depth::Indexed), Color::Indexed(17));
        assert_eq!(fit(changed, Depth::Basic), Color::Blue);
        assert_eq!(fit(Color::Indexed(17), Depth::Basic), Color::Reset);
        assert_eq!(fit(Color::Red, Depth::Indexed), Color::Red);
    }

    #[test]
    fn sixteen_colours_get_basic_codes_only() {
        let mut cell = Cell::default();
        cell.set_fg(Color::Red);
        cell.set_bg(Color::Rgb(40, 40, 90));
        cell.modifier = Modifier::BOLD;
        assert_eq!(sgr(&cell), "\x1b[0;1;31;44m");
        cell.set_fg(Color::DarkGray);
        cell.set_bg(Color::Reset);
        cell.modifier = Modifier::empty();
        assert_eq!(sgr(&cell), "\x1b[0;90m");
    }
}
