//! The Health view: the ledger's invariant findings (the last check, run on demand) and the
//! running spaces far slower than their peers (from the polls' progress history).

use crate::domain::duration;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, LineGauge, Paragraph, Wrap};

use super::grid::{self, Value};
use super::lists::cursor_style;
use crate::columns::{self, Column, Cut, Priority};
use crate::domain::text;
use crate::tui::app::App;
use crate::tui::theme::Theme;

pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let [top, walk, body] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(area);
    let walk_line = text::fit(&resync_line(app), usize::from(walk.width));
    frame.render_widget(Paragraph::new(Line::styled(walk_line, theme.dim())), walk);
    let health = &app.health_view;
    match (&health.running, &health.checked) {
        (Some((done, total)), _) => {
            let ratio = if *total > 0 {
                (*done as f64 / *total as f64).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let gauge = LineGauge::default()
                .ratio(ratio)
                .label(format!(" checking the ledger: {done}/{total} spaces "))
                .filled_style(theme.live())
                .unfilled_style(theme.dim());
            // Filled and unfilled apart by shape, not only by colour (NO_COLOR, monochrome).
            let gauge = if app.display.ascii {
                gauge.filled_symbol("#").unfilled_symbol("-")
            } else {
                gauge.filled_symbol("█").unfilled_symbol("░")
            };
            frame.render_widget(gauge, top);
        }
        (None, Some((at, Ok(found)))) => {
            let waited = app.now.saturating_duration_since(*at);
            let ago = duration::compact(
                chrono::Duration::from_std(waited).unwrap_or(chrono::Duration::zero()),
            );
            // Where the cursor is first: at 80 columns the end of the line goes.
            let at = match health.listed_len() {
                0 => String::new(),
                n => format!("{}/{n} · ", health.list.cursor + 1),
            };
            // What matters first (at 80 columns the end of the line goes): how many findings,
            // how many slow spaces (none is news too), then when and how to check again.
            let mut line = format!(
                " {at}{} finding(s) in {} · {} slow · checked {ago} ago · C-r again",
                found.findings.len(),
                found.bootstraps_checked,
                health.outliers.len()
            );
            for skipped in &found.skipped {
                line.push_str(&format!(" · skipped {}", text::clean(skipped, 80)));
            }
            let style = if found.findings.is_empty() {
                theme.ok()
            } else {
                theme.error()
            };
            // Cut with a mark where 80 columns cannot hold it all.
            let line = text::fit(&line, usize::from(top.width));
            frame.render_widget(Paragraph::new(Line::styled(line, style)), top);
        }
        (None, Some((_, Err(e)))) => {
            let line = format!(
                " the ledger check failed: {} · C-r tries again",
                text::clean(e, 200)
            );
            let line = text::fit(&line, usize::from(top.width));
            frame.render_widget(Paragraph::new(Line::styled(line, theme.error())), top);
        }
        (None, None) => {
            let line = " the ledger is checked on demand: C-r checks it";
            frame.render_widget(Paragraph::new(Line::styled(line, theme.dim())), top);
        }
    }
    rows(frame, body, app, theme);
}

/// How far the resync walk is, and how long a cycle takes at its pace: within one cycle, any
/// change a poll's delta could not see (a hand-made update, a deletion) is on the board.
fn resync_line(app: &App) -> String {
    let Some(sync) = app.status.polling.sync.filter(|s| s.table_pages > 0) else {
        return " resync: starts after the first load".to_string();
    };
    let through = (sync.cycle_page as f64 / sync.table_pages as f64 * 100.0).clamp(0.0, 100.0);
    let cycle = sync.cycle_estimate.map_or("-".to_string(), |c| {
        duration::compact(chrono::Duration::from_std(c).unwrap_or(chrono::Duration::zero()))
    });
    format!(
        " resync {through:.0}% of {} pages · a cycle about {cycle} · {} cycle(s) done",
        sync.table_pages, sync.cycles
    )
}

/// Findings, then outliers, one line each, under one cursor; only the lines in sight are
/// formatted (a broken ledger may have a finding per space).
fn rows(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let names = app.names();
    let health = &app.health_view;
    let findings = health.findings();
    let total = health.listed_len();
    if total == 0 {
        let text = if health.checked.is_some() {
            " nothing found; no slow space (judged on 1 min of history, 5 peers)"
        } else {
            " no slow space (judged on 1 min of history, 5 peers)"
        };
        frame.render_widget(Paragraph::new(text).style(theme.dim()), area);
        return;
    }
    // The selected line in full below the list: what is wrong, the evidence, what helps.
    let [list, selected] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(7)]).areas(area);
    frame.render_widget(
        Paragraph::new(selected_text(app))
            .wrap(Wrap { trim: true })
            .block(
                Block::default()
                    .borders(Borders::TOP)
                    .border_style(theme.dim()),
            ),
        selected,
    );
    // This list is shorter than the other views' (the selected line takes the bottom): the
    // cursor is kept in sight here.
    let page = usize::from(list.height.saturating_sub(1)).max(1);
    let cursor = health.list.cursor;
    let offset = health.list.offset.max((cursor + 1).saturating_sub(page));
    let columns = [
        Column::new("check", Priority::Flag, 8, 24),
        Column::new("tenant", Priority::Tenant, 4, 16).cut(Cut::Middle),
        columns::id_column("space", names.widest()),
        // What is left; the pane below has it whole.
        Column::new("what is wrong", Priority::Message, 8, 1000).filling(),
    ];
    let line = |index: usize| -> [String; 4] {
        match findings.get(index) {
            Some(f) => [
                f.check.name().to_string(),
                f.tenant_id.to_string(),
                names.short(&f.knowledge_space_id.unwrap_or(f.bootstrap_id)),
                text::clean(&f.problem, 600),
            ],
            None => {
                let o = &health.outliers[index - findings.len()];
                [
                    "slow".to_string(),
                    o.tenant.to_string(),
                    names.short(&o.space),
                    format!(
                        "{:.1} docs/min, under a tenth of the median {:.1} of {} rebuilding \
                         ({}/{})",
                        o.rate, o.median, o.peers, o.completed, o.total
                    ),
                ]
            }
        }
    };
    let lines: Vec<grid::Line> = (offset..total.min(offset + page))
        .map(|index| {
            let [check, tenant, id, problem] = line(index);
            grid::Line {
                values: vec![
                    Value::new(check, theme.error()),
                    Value::plain(tenant),
                    Value::plain(id),
                    Value::plain(problem),
                ],
                style: cursor_style(&health.list, index, theme),
            }
        })
        .collect();
    grid::draw(frame, list, &columns, lines, theme.heading());
}

/// The selected finding (or outlier) whole: problem, evidence, action.
fn selected_text(app: &App) -> Vec<Line<'static>> {
    let health = &app.health_view;
    let cursor = health.list.cursor;
    let findings = health.findings();
    if let Some(f) = findings.get(cursor) {
        return vec![
            Line::raw(format!(" {}", text::clean(&f.problem, 300))),
            Line::raw(format!(" evidence: {}", text::clean(&f.evidence, 300))),
            Line::raw(format!(" action: {}", f.action)),
        ];
    }
    match health.outliers.get(cursor.saturating_sub(findings.len())) {
        Some(o) => vec![
            Line::raw(format!(
                " rebuilding at {:.1} documents/min over its recent history, where the {} \
                 spaces rebuilding with enough history make a median of {:.1}",
                o.rate, o.peers, o.median
            )),
            Line::raw(
                " action: look at its worker and its current document (detail: Enter): its \
                 worker lease is live and it still moves, far slower than its peers",
            ),
        ],
        None => Vec::new(),
    }
}
