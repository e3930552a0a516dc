//! The leases view and the audit view: plain tables with a cursor.

use crate::domain::duration;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::format;
use crate::domain::actions::{Kind, outcome_is_forced};
use crate::domain::signals::Attention;
use crate::domain::text;
use crate::poller::{Extra, Focus};
use crate::tui::app::{App, ListState};
use crate::tui::layout;
use crate::tui::theme::Theme;

pub(super) fn window<'a, T>(
    items: &'a [T],
    list: &ListState,
    app: &App,
) -> impl Iterator<Item = (usize, &'a T)> {
    items
        .iter()
        .enumerate()
        .skip(list.offset)
        .take(layout::table_rows(app.size))
}

pub(super) fn cursor_style(list: &ListState, index: usize, theme: &Theme) -> Style {
    if index == list.cursor {
        theme.selected()
    } else {
        Style::new()
    }
}

pub(crate) fn leases(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let extra = app.extra_for(&Focus::Leases);
    let Some(Extra::Leases(board)) = extra else {
        return super::placeholder(frame, area, extra, "the leases", theme);
    };
    if board.leases.is_empty() {
        frame.render_widget(
            Paragraph::new(" no mutation leases in scope").style(theme.dim()),
            area,
        );
        return;
    }
    let names = app.names();
    // Below 110 columns the heartbeat column goes (the ORPHAN? flag says what matters) and
    // the bootstrap is told by its state alone.
    let wide = area.width >= 110;
    // Operations are up to 18 characters (`knowledge-fs-write`): whole where the line has
    // room beside a bootstrap column of 14 (and the heartbeat's 18 when wide).
    let fixed = 7 + 2 * format::id_width(names) as usize + 10 + 6 + 7;
    let others = if wide { 14 + 18 } else { 14 };
    let operation_width = (area.width as usize)
        .saturating_sub(fixed + others)
        .clamp(12, 18);
    let rows: Vec<Row> = window(&board.leases, &app.leases, app)
        .map(|(index, evidence)| {
            let lease = &evidence.lease;
            let blocks = match &evidence.job {
                Some(job) => {
                    let mut text = if job.is_blocked() { "BLOCKS" } else { "on" }.to_string();
                    // The space column already names a bootstrap whose id is its space's.
                    if job.bootstrap_id != lease.knowledge_space_id {
                        text.push_str(&format!(" {}", names.short(&job.bootstrap_id)));
                    }
                    text.push_str(&format!(" {}", job.run_state));
                    if wide {
                        text.push_str(&format!("@{}", job.checkpoint));
                    }
                    text
                }
                None => "no bootstrap".to_string(),
            };
            let live = match (evidence.live_until(), lease.expires_at) {
                (Some(until), _) => format!("live {}", duration::human(until - board.db_now)),
                (None, Some(_)) => "heartbeat expired".to_string(),
                (None, None) => String::new(),
            };
            let flag = if evidence.orphan_suspect() {
                "ORPHAN?"
            } else {
                ""
            };
            let mut cells = vec![
                Cell::from(flag).style(theme.attention(Attention::Blocked)),
                Cell::from(names.short(&lease.id)),
                Cell::from(text::fit_middle(&lease.tenant_id, 10)),
                Cell::from(names.short(&lease.knowledge_space_id)),
                // Cut with a mark, never silently: `source-delet` reads like a name.
                Cell::from(text::fit(&lease.operation, operation_width)),
                Cell::from(duration::human(evidence.held_for())),
                Cell::from(blocks),
            ];
            if wide {
                cells.push(Cell::from(live));
            }
            Row::new(cells).style(cursor_style(&app.leases, index, theme))
        })
        .collect();
    let mut widths = vec![
        Constraint::Length(7),
        Constraint::Length(format::id_width(names)),
        Constraint::Length(10),
        Constraint::Length(format::id_width(names)),
        Constraint::Length(operation_width as u16),
        Constraint::Length(6),
        Constraint::Fill(2),
    ];
    let mut header = vec![
        "",
        "lease",
        "tenant",
        "space",
        "operation",
        "age",
        "bootstrap",
    ];
    if wide {
        widths.push(Constraint::Fill(1));
        header.push("heartbeat");
    }
    let header = Row::new(header).style(theme.heading());
    frame.render_widget(
        Table::new(rows, widths).header(header).column_spacing(1),
        area,
    );
}

/// The audit table's action names in the 8 columns the view gives them.
fn short_action(action: &str) -> String {
    if action == Kind::RemoveLease.name() {
        "rm lease".to_string()
    } else {
        text::clean(action, 24)
    }
}

/// A forced action must stand out even at 80 columns.
fn short_outcome(outcome: &str) -> String {
    if outcome_is_forced(outcome) {
        "FORCED".to_string()
    } else {
        text::clean(outcome, 16)
    }
}

pub(crate) fn audit(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    // The chain's verification on the first line, the records below.
    let [top, area] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    frame.render_widget(Paragraph::new(chain_line(app, theme)), top);
    let extra = app.extra_for(&Focus::Audit);
    let Some(Extra::Audit(records)) = extra else {
        return super::placeholder(frame, area, extra, "the audit records", theme);
    };
    if records.is_empty() {
        let text = " no operator actions recorded in scope (or no audit table: see `migrate`)";
        frame.render_widget(Paragraph::new(text).style(theme.dim()), area);
        return;
    }
    // One line shorter than the other lists: the cursor is kept in sight here.
    let page = usize::from(area.height.saturating_sub(1)).max(1);
    let cursor = app.audit.cursor;
    let offset = app.audit.offset.max((cursor + 1).saturating_sub(page));
    let rows: Vec<Row> = records
        .iter()
        .enumerate()
        .skip(offset)
        .take(page)
        .map(|(index, r)| {
            Row::new(vec![
                Cell::from(r.at.format("%m-%d %H:%M:%S").to_string()),
                Cell::from(text::clean(&r.who(), 48)),
                Cell::from(short_action(&r.action)),
                Cell::from(text::clean(&r.tenant_id, 24)),
                Cell::from(app.names().short(&r.knowledge_space_id)),
                Cell::from(short_outcome(&r.outcome)),
                Cell::from(text::clean(&r.reason, 200)),
            ])
            .style(cursor_style(&app.audit, index, theme))
        })
        .collect();
    let widths = [
        Constraint::Length(14),
        Constraint::Length(16),
        Constraint::Length(8),
        Constraint::Length(10),
        Constraint::Length(format::id_width(app.names())),
        Constraint::Length(8),
        Constraint::Fill(1),
    ];
    let header = Row::new([
        "when (UTC)",
        "who",
        "action",
        "tenant",
        "space",
        "outcome",
        "reason",
    ])
    .style(theme.heading());
    frame.render_widget(
        Table::new(rows, widths).header(header).column_spacing(1),
        area,
    );
}

/// Whether the audit chain verifies, as of the last verification in the background.
fn chain_line(app: &App, theme: &Theme) -> Line<'static> {
    let chain = &app.chain;
    let ago = |at: std::time::Instant| {
        let since = app.now.saturating_duration_since(at);
        duration::human(chrono::Duration::from_std(since).unwrap_or_default())
    };
    if chain.running.is_some() || chain.pass.is_some() {
        let records = chain.pass.as_ref().map_or(0, |p| p.records) + chain.running.unwrap_or(0);
        let before = match &chain.checked {
            Some((at, Ok(v))) if v.intact() => format!(" (intact {} ago)", ago(*at)),
            Some((at, Ok(_))) => format!(" (BROKEN {} ago)", ago(*at)),
            _ => String::new(),
        };
        return Line::styled(
            format!(" audit chain: verifying… {records} records{before}"),
            theme.dim(),
        );
    }
    match &chain.checked {
        Some((at, Ok(v))) => match (&v.broken, v.unprotected.first()) {
            (None, None) => {
                // The head's digits without its record id: at 80 columns the line must hold
                // a hundred thousand records and the age of the verification.
                let head = v.verified.as_ref().map_or("empty".to_string(), |h| {
                    format!("head {}", crate::domain::audit_chain::short(&h.hex()))
                });
                Line::styled(
                    format!(
                        " audit chain intact: {} records · {head} · verified {} ago",
                        v.records,
                        ago(*at)
                    ),
                    theme.ok(),
                )
            }
            (Some(broken), _) => Line::styled(
                format!(
                    " AUDIT CHAIN BROKEN: {} · `audit verify` says more",
                    text::clean(&broken.to_string(), 300)
                ),
                theme.error(),
            ),
            (None, Some(missing)) => Line::styled(
                format!(
                    " AUDIT LOG UNPROTECTED: {} · `audit verify` says more",
                    text::clean(missing, 200)
                ),
                theme.error(),
            ),
        },
        Some((_, Err(e))) => Line::styled(
            format!(" audit chain not verified: {}", text::clean(e, 300)),
            theme.error(),
        ),
        None => Line::styled(" audit chain: not verified yet", theme.dim()),
    }
}
