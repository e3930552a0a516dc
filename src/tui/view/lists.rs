//! The leases view and the audit view: plain tables with a cursor.

use crate::domain::duration;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::format;
use super::grid::{self, Value};
use crate::columns::{self, Column, Cut, Priority};
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
    let mut columns = vec![
        Column::new("", Priority::Flag, 7, 7),
        columns::id_column("lease", names.widest()),
        Column::new("tenant", Priority::Tenant, 4, 16).cut(Cut::Middle),
        columns::id_column("space", names.widest()),
        // Operations are up to 18 characters (`knowledge-fs-write`).
        Column::new("operation", Priority::Message, 8, 18),
        Column::new("age", Priority::Code, 3, 6),
        Column::new("bootstrap", Priority::Code, 6, 48).filling(),
    ];
    if wide {
        columns.push(Column::new("heartbeat", Priority::Message, 8, 24));
    }
    let lines: Vec<grid::Line> = window(&board.leases, &app.leases, app)
        .map(|(index, evidence)| {
            let lease = &evidence.lease;
            let blocks = match &evidence.job {
                Some(job) => {
                    // Upper case only for what an operator acts on (an orphan suspect's block).
                    let mut text = match (job.is_blocked(), evidence.orphan_suspect()) {
                        (true, true) => "BLOCKS",
                        (true, false) => "blocks",
                        (false, _) => "on",
                    }
                    .to_string();
                    // The space column already names a bootstrap whose id is its space's.
                    if job.bootstrap_id != lease.knowledge_space_id {
                        text.push_str(&format!(" {}", format::id(names, &job.bootstrap_id)));
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
            // As the board says it: an orphan suspect, or a writer at work (watched only).
            let blocking = evidence.job.as_ref().is_some_and(|job| job.is_blocked());
            let (flag, flag_style) = if evidence.orphan_suspect() {
                ("ORPHAN?", theme.attention(Attention::Blocked))
            } else if blocking {
                ("writing", theme.attention(Attention::Writing))
            } else {
                ("", theme.dim())
            };
            let mut values = vec![
                Value::new(flag, flag_style),
                Value::plain(names.short(&lease.id)),
                Value::plain(lease.tenant_id.to_string()),
                Value::plain(names.short(&lease.knowledge_space_id)),
                Value::plain(lease.operation.to_string()),
                Value::plain(duration::human(evidence.held_for())),
                Value::plain(blocks),
            ];
            if wide {
                values.push(Value::plain(live));
            }
            grid::Line {
                values,
                style: cursor_style(&app.leases, index, theme),
            }
        })
        .collect();
    grid::draw(frame, area, &columns, lines, theme.heading());
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
    let columns = [
        Column::new("when (UTC)", Priority::Flag, 14, 14),
        Column::new("who", Priority::Tenant, 8, 32),
        Column::new("action", Priority::Flag, 8, 12),
        Column::new("tenant", Priority::Tenant, 4, 16).cut(Cut::Middle),
        columns::id_column("space", app.names().widest()),
        Column::new("outcome", Priority::Flag, 7, 16),
        Column::new("reason", Priority::Message, 8, 1000).filling(),
    ];
    let lines: Vec<grid::Line> = records
        .iter()
        .enumerate()
        .skip(offset)
        .take(page)
        .map(|(index, r)| grid::Line {
            values: vec![
                Value::plain(r.at.format("%m-%d %H:%M:%S").to_string()),
                Value::plain(text::clean(&r.who(), 64)),
                Value::plain(format::short_action(&r.action)),
                Value::plain(r.tenant_id.to_string()),
                Value::plain(app.names().short(&r.knowledge_space_id)),
                Value::plain(format::short_outcome(&r.outcome)),
                Value::plain(text::clean(&r.reason, 600)),
            ],
            style: cursor_style(&app.audit, index, theme),
        })
        .collect();
    grid::draw(frame, area, &columns, lines, theme.heading());
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
                let records = match v.records {
                    1 => "1 record".to_string(),
                    n => format!("{n} records"),
                };
                Line::styled(
                    format!(
                        " audit chain intact: {records} · {head} · verified {} ago",
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
