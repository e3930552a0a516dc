//! The tenants view: one line per tenant, attention first — how a 100,000-space rollout is
//! navigated. Enter opens the board filtered to the tenant.

use crate::domain::duration;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;

use super::format;
use super::grid::{self, Value};
use super::lists::{cursor_style, window};
use crate::columns::{Column, Cut, Priority};
use crate::domain::signals::{Attention, Group};
use crate::tui::app::App;
use crate::tui::theme::Theme;

/// The classes that need an operator, each with a column of its own (then one for everything
/// watched), with their headings.
const CLASSES: [(Attention, &str); 4] = [
    (Attention::Failed, "fail"),
    (Attention::Blocked, "blkd"),
    (Attention::LeaseExpired, " exp"),
    (Attention::Stuck, "stck"),
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
    let mut columns = vec![
        Column::new("", Priority::Flag, 7, 7),
        Column::new("tenant", Priority::Tenant, 6, 32).cut(Cut::Middle),
        Column::new("spaces", Priority::Flag, 6, 10),
        Column::new("read", Priority::Flag, 4, 4),
        // Needs an operator: the group's count, then its classes one by one.
        Column::new("oper", Priority::Flag, 4, 8),
    ];
    columns.extend(
        CLASSES
            .iter()
            .map(|(_, heading)| Column::new(heading, Priority::Flag, 4, 8)),
    );
    columns.extend([
        Column::new("watch", Priority::Flag, 5, 8),
        Column::new("    docs", Priority::Flag, 8, 12),
        Column::new(
            if wide {
                "longest in trouble"
            } else {
                "oldest issue"
            },
            // How long first (`2h00m blocked`): where the column is narrow, the age stays whole
            // and the class is cut, and the tenant keeps its room.
            Priority::Message,
            8,
            400,
        )
        .filling(),
    ]);
    let lines: Vec<grid::Line> = window(&fleet.tenants, &app.tenants, app)
        .map(|(index, t)| {
            let worst = t.worst();
            // Nothing to act on or watch: `ok` once all is readable, else a plain mark.
            let calm = if t.readable == t.spaces { "ok" } else { "-" };
            let flag = worst.map_or(calm, format::flag);
            let flag_style = worst.map_or(theme.dim(), |w| theme.attention(w));
            let mut values = vec![
                Value::new(flag, flag_style),
                Value::plain(t.tenant.to_string()),
                Value::plain(format!("{:>6}", t.spaces)),
                Value::plain(format!("{:>3.0}%", t.readable_share() * 100.0)),
            ];
            // A count in its class's style, or a dim dot for none.
            let count = |n: u32, like: Attention, width: usize| {
                let (shown, style) = if n > 0 {
                    (n.to_string(), theme.attention(like))
                } else {
                    (".".to_string(), theme.dim())
                };
                Value::new(format!("{shown:>width$}"), style)
            };
            values.push(count(
                t.in_group(Group::NeedsOperator),
                Attention::Failed,
                4,
            ));
            for (class, _) in CLASSES {
                values.push(count(t.count(class), class, 4));
            }
            values.push(count(t.in_group(Group::Watch), Attention::HeartbeatLate, 5));
            values.push(Value::plain(format!("{:>8}", t.documents_remaining)));
            let oldest = t.oldest.map_or(String::new(), |(class, since)| {
                let age = duration::compact(now - since);
                if wide {
                    format!("{} for {age}", class.label())
                } else {
                    format!("{age} {}", format::flag(class).to_lowercase())
                }
            });
            values.push(Value::plain(oldest));
            grid::Line {
                values,
                style: cursor_style(&app.tenants, index, theme),
            }
        })
        .collect();
    grid::draw(frame, area, &columns, lines, theme.heading());
}
