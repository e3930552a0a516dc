//! The tenants view: one line per tenant, attention first — how a 100,000-space rollout is
//! navigated. Enter opens the board filtered to the tenant.

use crate::domain::duration;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::format;
use super::lists::{cursor_style, window};
use crate::domain::signals::Attention;
use crate::domain::text;
use crate::tui::app::App;
use crate::tui::theme::Theme;

/// The classes that get a column of their own, with their headings.
const CLASSES: [(Attention, &str); 5] = [
    (Attention::Failed, "fail"),
    (Attention::Blocked, "blkd"),
    (Attention::LeaseExpired, " exp"),
    (Attention::Stuck, "stck"),
    (Attention::HeartbeatLate, "late"),
];

pub(crate) fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let (Some(fleet), Some(now)) = (app.fleet(), app.db_now()) else {
        frame.render_widget(Paragraph::new(" loading…").style(theme.dim()), area);
        return;
    };
    if fleet.tenants.is_empty() {
        frame.render_widget(
            Paragraph::new(" no bootstraps in scope").style(theme.dim()),
            area,
        );
        return;
    }
    let wide = area.width >= 110;
    let tenant_width: usize = if wide { 24 } else { 10 };
    let rows: Vec<Row> = window(&fleet.tenants, &app.tenants, app)
        .map(|(index, t)| {
            let worst = t.worst();
            let flag = worst.map_or("ok", format::flag);
            let flag_style = worst.map_or(theme.dim(), |w| theme.attention(w));
            let mut cells = vec![
                Cell::from(flag).style(flag_style),
                Cell::from(text::fit_middle(&t.tenant, tenant_width)),
                Cell::from(format!("{:>6}", t.spaces)),
                Cell::from(format!("{:>3.0}%", t.readable_share() * 100.0)),
            ];
            for (class, _) in CLASSES {
                let n = t.count(class);
                let style = if n > 0 {
                    theme.attention(class)
                } else {
                    theme.dim()
                };
                let shown = if n > 0 { n.to_string() } else { ".".into() };
                cells.push(Cell::from(format!("{shown:>4}")).style(style));
            }
            cells.push(Cell::from(format!("{:>8}", t.documents_remaining)));
            let oldest = t.oldest.map_or(String::new(), |(class, since)| {
                let age = duration::compact(now - since);
                if wide {
                    format!("{} for {age}", class.label())
                } else {
                    format!("{} {age}", format::flag(class).to_lowercase())
                }
            });
            cells.push(Cell::from(oldest));
            Row::new(cells).style(cursor_style(&app.tenants, index, theme))
        })
        .collect();
    let mut widths = vec![
        Constraint::Length(7),
        Constraint::Length(tenant_width as u16),
        Constraint::Length(6),
        Constraint::Length(4),
    ];
    widths.extend([Constraint::Length(4); CLASSES.len()]);
    widths.extend([Constraint::Length(8), Constraint::Fill(1)]);
    let mut header = vec!["", "tenant", "spaces", "read"];
    header.extend(CLASSES.iter().map(|(_, h)| *h));
    header.extend([
        "    docs",
        if wide {
            "longest in trouble"
        } else {
            "oldest issue"
        },
    ]);
    frame.render_widget(
        Table::new(rows, widths)
            .header(Row::new(header).style(theme.heading()))
            .column_spacing(1),
        area,
    );
}
