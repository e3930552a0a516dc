//! Drawing: a pure function of the [`App`]. Each area has its own `draw`; the layout is shared
//! with `update` through [`crate::tui::layout`].

mod board;
mod chrome;
pub mod detail;
pub mod format;
mod grid;
mod health;
mod lists;
mod overlay;
mod tenants;

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

use super::app::{App, MIN_HEIGHT, MIN_WIDTH, Overlay, View};
use super::layout;
use super::theme::Theme;
use crate::domain::text;
use crate::poller::Extra;

pub fn draw(frame: &mut Frame, app: &App) {
    // Text from the database says what it holds in ASCII (`\u{202e}`) where only ASCII goes.
    text::in_ascii(app.display.ascii, || draw_views(frame, app));
    if app.display.ascii {
        asciify(frame.buffer_mut());
    }
}

/// Under `--ascii` (or a locale that is not UTF-8) nothing but ASCII reaches the terminal:
/// the console's glyphs become their ASCII forms; anything else left (text that did not come
/// through [`text::clean`], which escapes it) a `?`.
fn asciify(buffer: &mut ratatui::buffer::Buffer) {
    for cell in buffer.content.iter_mut() {
        let symbol = cell.symbol();
        if symbol.is_ascii() {
            continue;
        }
        let mut chars = symbol.chars();
        let glyph = match (chars.next(), chars.next()) {
            (Some(ch), None) => text::ascii_glyph(ch).filter(|g| g.len() == 1),
            _ => None,
        };
        cell.set_symbol(glyph.unwrap_or("?"));
    }
}

fn draw_views(frame: &mut Frame, app: &App) {
    let theme = Theme::new(app.display.color);
    let area = frame.area();
    if super::app::too_small(area.width, area.height) {
        too_small(frame, app, &theme);
        return;
    }
    let areas = layout::areas(area);
    chrome::title(frame, areas.title, app, &theme);
    chrome::summary(frame, areas.summary, app, &theme);
    chrome::tabs(frame, areas.tabs, app, &theme);
    match &app.view {
        View::Board => board::draw(frame, areas.body, app, &theme),
        View::Tenants => tenants::draw(frame, areas.body, app, &theme),
        View::Detail(id) => detail::draw(frame, areas.body, app, id, &theme),
        View::Leases => lists::leases(frame, areas.body, app, &theme),
        View::Audit => lists::audit(frame, areas.body, app, &theme),
        View::Health => health::draw(frame, areas.body, app, &theme),
    }
    chrome::status_line(frame, areas.status, app, &theme);
    chrome::hints(frame, areas.hints, app, &theme);
    match &app.overlay {
        Overlay::None => {}
        Overlay::Help => overlay::help(frame, area, app, &theme),
        Overlay::Dialog(dialog) => overlay::dialog(frame, area, app, dialog, &theme),
    }
}

/// A view whose data is not there: why not (its query failed), or that it is on its way.
fn placeholder(frame: &mut Frame, area: Rect, extra: Option<&Extra>, what: &str, theme: &Theme) {
    let line = match extra {
        Some(Extra::Unavailable(reason)) => Line::styled(
            format!(
                " could not read {what}: {} (the board keeps polling)",
                crate::domain::text::clean(reason, 300)
            ),
            theme.error(),
        ),
        _ => Line::styled(format!(" loading {what}…"), theme.dim()),
    };
    frame.render_widget(Paragraph::new(line).wrap(Wrap { trim: true }), area);
}

fn too_small(frame: &mut Frame, _app: &App, theme: &Theme) {
    let area = frame.area();
    let text = vec![
        Line::styled("terminal too small", theme.error()),
        Line::raw(format!(
            "{}×{} here; bootstrap-console needs at least {MIN_WIDTH}×{MIN_HEIGHT}",
            area.width, area.height
        )),
        Line::raw("enlarge the window, or press q to quit"),
    ];
    // Room for the lines once wrapped on a narrow window, so the way out is never cut off.
    let [middle] = Layout::vertical([Constraint::Length(6)])
        .flex(Flex::Center)
        .areas(area);
    frame.render_widget(
        Paragraph::new(text).centered().wrap(Wrap { trim: true }),
        middle,
    );
}
