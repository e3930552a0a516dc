//! The board: one row per space, only the rows that fit are laid out.

use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Paragraph;

use super::format;
use super::grid::{self, Value};
use crate::columns::{self, Column, Cut, Priority};
use crate::domain::board::BoardRow;
use crate::domain::model::RunState;
use crate::domain::text;
use crate::tui::app::App;
use crate::tui::layout;
use crate::tui::theme::Theme;

/// How wide a terminal must be for the board's wide form: a worker/lease column, an error
/// column and the message beside them (below it one column holds the worker, the lease or the
/// error code, which rows never have together).
const WIDE: u16 = layout::WIDE_BOARD;

/// The progress bar's cells by terminal width (none at 80 columns: the figures fit instead).
fn bar_width(width: u16) -> usize {
    match width {
        w if w >= 140 => 10,
        w if w >= WIDE => 8,
        _ => 0,
    }
}

/// The board's columns, in the order shown; their widths come from [`crate::columns`].
fn columns(wide: bool, ids: usize) -> Vec<Column> {
    let mut columns = vec![
        Column::new("", Priority::Flag, 1, 1),
        Column::new("flag", Priority::Flag, 7, 7),
        Column::new("tenant", Priority::Tenant, 4, 16).cut(Cut::Middle),
        columns::id_column("space", ids),
        Column::new("ckpt", Priority::Flag, 5, 5),
        Column::new("state", Priority::Flag, 9, 9),
        Column::new("progress", Priority::Flag, 3, 24),
    ];
    if wide {
        columns.extend([
            Column::new("worker/lease", Priority::Code, 12, 32),
            Column::new("error", Priority::Code, 24, 64),
            Column::new("message", Priority::Message, 8, 1000).filling(),
        ]);
    } else {
        // Whole codes up to 24, then the tenant grows, then this column takes what is left.
        columns.push(Column::new("worker/lease/error", Priority::Code, 24, 24).filling());
    }
    columns
}

pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let (Some(fleet), Some(now)) = (app.fleet(), app.db_now()) else {
        let text = if app.status.polling.loading {
            " loading the ledger…"
        } else {
            " loading…"
        };
        frame.render_widget(Paragraph::new(text).style(theme.dim()), area);
        return;
    };
    let view = &fleet.board;
    if view.is_empty() {
        let (text, style) = match (&app.scope_note, fleet.rows.is_empty()) {
            (Some(note), true) => (
                format!(" {} — nothing to show", text::clean(note, 300)),
                theme.error(),
            ),
            (None, true) => (" no bootstraps in scope".to_string(), theme.dim()),
            (_, false) => (
                " no space matches the filter (Esc clears it)".to_string(),
                theme.dim(),
            ),
        };
        frame.render_widget(
            Paragraph::new(text)
                .style(style)
                .wrap(ratatui::widgets::Wrap { trim: false }),
            area,
        );
        return;
    }
    let wide = area.width >= WIDE;
    let page = layout::table_rows(app.size);
    let offset = app.board.offset;
    let lines: Vec<grid::Line> = view
        .window(offset, page)
        .enumerate()
        .map(|(i, row)| {
            board_row(
                app,
                theme,
                area.width,
                &row,
                now,
                offset + i == app.board.cursor,
            )
        })
        .collect();
    let columns = columns(wide, app.names().widest());
    grid::draw(frame, area, &columns, lines, theme.heading());
}

fn board_row(
    app: &App,
    theme: &Theme,
    width: u16,
    row: &BoardRow,
    now: DateTime<Utc>,
    selected: bool,
) -> grid::Line {
    let b = row;
    let s = &row.signals;
    let ascii = app.display.ascii;
    let wide = width >= WIDE;
    let bar = bar_width(width);
    let marked = app.board.marked.contains(&b.id);
    let changed = app.recently_changed(row);
    let mark = if marked {
        "+"
    } else if changed {
        "*"
    } else {
        " "
    };
    let progress = if row.has_documents() && bar == 0 {
        format!("{}/{}", b.completed, b.total)
    } else if row.has_documents() {
        format!(
            "{} {}/{}",
            format::bar(row.fraction(), bar, ascii),
            b.completed,
            b.total
        )
    } else {
        "-".to_string()
    };
    let worker = format::holder(row, now).map(|(text, cut)| Value::plain(text).cut(cut));
    let error = b
        .error_code
        .as_deref()
        .map(|e| Value::new(text::clean(e, 64), theme.error()));
    let state_style = match b.run_state {
        RunState::Failed => theme.attention(s.attention),
        _ => theme.plain(),
    };
    let mut values = vec![
        Value::new(mark, theme.marked()),
        Value::new(format::flag(s.attention), theme.attention(s.attention)),
        Value::plain(b.tenant.to_string()),
        Value::plain(app.names().short(&b.space)),
        Value::plain(format::pipeline(b.checkpoint, ascii)),
        Value::new(b.run_state.as_str(), state_style),
        Value::plain(progress),
    ];
    let empty = || Value::plain("");
    if wide {
        values.push(worker.unwrap_or_else(empty));
        values.push(error.unwrap_or_else(empty));
        let message = app
            .board
            .message(b)
            .map(|m| text::clean(m, 400))
            .unwrap_or_default();
        values.push(Value::new(message, theme.dim()));
    } else {
        values.push(format::narrow_last(row, worker, error).unwrap_or_else(empty));
    }
    let style = if selected {
        theme.selected()
    } else if changed {
        theme.changed()
    } else {
        Style::new()
    };
    grid::Line { values, style }
}
