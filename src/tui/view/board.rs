//! The board: one row per space, only the rows that fit are laid out.

use crate::domain::duration;
use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::format;
use crate::domain::board::BoardRow;
use crate::domain::model::RunState;
use crate::domain::text;
use crate::tui::app::App;
use crate::tui::layout;
use crate::tui::theme::Theme;

/// Column widths for narrow (80-column) and wide terminals.
struct Columns {
    tenant: u16,
    worker: u16,
    bar: usize,
    progress: u16,
    error_code: u16,
    message: bool,
}

fn columns(width: u16) -> Columns {
    if width >= 140 {
        Columns {
            tenant: 16,
            worker: 24,
            bar: 10,
            progress: 22,
            error_code: 24,
            message: true,
        }
    } else if width >= 110 {
        Columns {
            tenant: 12,
            worker: 14,
            bar: 8,
            progress: 18,
            error_code: 20,
            message: true,
        }
    } else {
        // 80 columns: the numbers without the bar, so whole error codes fit beside them.
        Columns {
            tenant: 8,
            // The width a worker's name gets in the shared column (see `draw`).
            worker: 20,
            bar: 0,
            progress: 9,
            error_code: 0,
            message: false,
        }
    }
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
    let c = columns(area.width);
    let mut widths = vec![
        Constraint::Length(1),
        Constraint::Length(7),
        Constraint::Length(c.tenant),
        Constraint::Length(format::id_width(app.names())),
        Constraint::Length(5),
        Constraint::Length(9),
        Constraint::Length(c.progress),
        Constraint::Length(c.worker),
    ];
    let mut header = vec![
        "",
        "flag",
        "tenant",
        "space",
        "ckpt",
        "state",
        "progress",
        "worker/lease",
    ];
    if c.message {
        widths.push(Constraint::Length(c.error_code));
        widths.push(Constraint::Fill(1));
        header.extend(["error", "message"]);
    } else {
        // Narrow: one column for the worker or lease and the error code, which rows never
        // have together (a failed or canceled job has no worker): the code stays whole.
        widths.pop();
        header.pop();
        widths.push(Constraint::Fill(1));
        header.push("worker/lease/error");
    }
    let page = layout::table_rows(app.size);
    let offset = app.board.offset;
    let rows: Vec<Row> = view
        .window(offset, page)
        .enumerate()
        .map(|(i, row)| board_row(app, theme, &c, row, now, offset + i == app.board.cursor))
        .collect();
    let table = Table::new(rows, widths)
        .header(Row::new(header).style(theme.heading()))
        .column_spacing(1);
    frame.render_widget(table, area);
}

fn board_row<'a>(
    app: &App,
    theme: &Theme,
    c: &Columns,
    row: &'a BoardRow,
    now: DateTime<Utc>,
    selected: bool,
) -> Row<'a> {
    let b = row;
    let s = &row.signals;
    let ascii = app.display.ascii;
    let marked = app.board.marked.contains(&b.id);
    let changed = app.recently_changed(row);
    let mark = if marked {
        "+"
    } else if changed {
        "*"
    } else {
        " "
    };
    let progress = if (b.total > 0 || b.checkpoint.index() > 0) && c.bar == 0 {
        format!("{}/{}", b.completed, b.total)
    } else if b.total > 0 || b.checkpoint.index() > 0 {
        format!(
            "{} {}/{}",
            format::bar(row.fraction(), c.bar, ascii),
            b.completed,
            b.total
        )
    } else {
        "-".to_string()
    };
    let worker = match (&b.worker, &row.lease) {
        (Some(w), _) => {
            let left = row.lease_remaining(now).unwrap_or_default();
            let name = tail(
                &text::clean(&w.worker_id, 64),
                usize::from(c.worker).saturating_sub(6),
            );
            if s.lease_expired {
                format!("{name} exp")
            } else {
                format!("{name} {}", duration::human(left))
            }
        }
        (None, Some(lease)) => {
            let age = row
                .lease_age(now)
                .map(duration::compact)
                .unwrap_or_default();
            let suspect = if s.lease_orphan_suspect { "?" } else { "" };
            if c.message {
                format!("lease{suspect} {age} {}", text::clean(&lease.operation, 20))
            } else {
                format!("lease{suspect} {age}")
            }
        }
        (None, None) => String::new(),
    };
    let error_code = b
        .error_code
        .as_deref()
        .map(|e| text::clean(e, 64))
        .unwrap_or_default();
    let state_style = match b.run_state {
        RunState::Failed => theme.attention(s.attention),
        _ => theme.plain(),
    };
    let error = Cell::from(Line::from(Span::styled(error_code.clone(), theme.error())));
    let mut cells = vec![
        Cell::from(mark).style(theme.marked()),
        Cell::from(format::flag(s.attention)).style(theme.attention(s.attention)),
        Cell::from(text::fit_middle(&b.tenant, usize::from(c.tenant))),
        Cell::from(app.names().short(&b.space)),
        Cell::from(format::pipeline(b.checkpoint, ascii)),
        Cell::from(b.run_state.as_str()).style(state_style),
        Cell::from(progress),
    ];
    if c.message {
        cells.extend([Cell::from(worker), error]);
    } else if error_code.is_empty() {
        cells.push(Cell::from(worker));
    } else {
        cells.push(error);
    }
    if c.message {
        let message = b
            .error_message
            .as_deref()
            .map(|m| text::clean(m, 200))
            .unwrap_or_default();
        cells.push(Cell::from(message).style(theme.dim()));
    }
    let style = if selected {
        theme.selected()
    } else if changed {
        theme.changed()
    } else {
        Style::new()
    };
    Row::new(cells).style(style)
}

/// The last `n` characters (worker ids differ at the end: `worker-2.1`).
fn tail(text: &str, n: usize) -> String {
    let count = text.chars().count();
    if count <= n {
        return text.to_string();
    }
    let kept: String = text.chars().skip(count + 1 - n).collect();
    format!("…{kept}")
}
