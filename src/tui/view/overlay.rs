//! Overlays: the action dialog and the help screen.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};

use crate::domain::actions::{Action, Plan};
use crate::domain::model::short_id;
use crate::domain::text;
use crate::tui::app::{App, Dialog, Field, Stage};
use crate::tui::keys::BINDINGS;
use crate::tui::theme::Theme;

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [cell] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    cell
}

fn frame_block<'a>(title: String, app: &App) -> Block<'a> {
    let border = if app.display.ascii {
        BorderType::Plain
    } else {
        BorderType::Rounded
    };
    let block = Block::default().borders(Borders::ALL).title(title);
    if app.display.ascii {
        block.border_set(ratatui::symbols::border::Set {
            top_left: "+",
            top_right: "+",
            bottom_left: "+",
            bottom_right: "+",
            vertical_left: "|",
            vertical_right: "|",
            horizontal_top: "-",
            horizontal_bottom: "-",
        })
    } else {
        block.border_type(border)
    }
}

fn action_target(action: &Action) -> String {
    match action {
        Action::Retry { bootstrap_id, .. } | Action::Cancel { bootstrap_id, .. } => {
            format!("space {}", short_id(bootstrap_id))
        }
        Action::RemoveLease { seen, .. } => format!("lease {}", short_id(&seen.id)),
    }
}

fn plan_lines<'a>(plans: &'a [Plan], bulk: bool, theme: &Theme) -> Vec<Line<'a>> {
    let mut lines = Vec::new();
    for plan in plans {
        let target = plan.knowledge_space_id.map_or_else(
            || action_target(&plan.action),
            |s| format!("space {}", short_id(&s)),
        );
        match &plan.verdict {
            Ok(changes) if bulk => {
                let summary: Vec<String> = changes
                    .iter()
                    .take(1)
                    .map(|c| text::clean(&c.to_string(), 80))
                    .collect();
                lines.push(Line::from(vec![
                    Span::styled(" ✓ ", theme.ok()),
                    Span::raw(format!("{target}: {}", summary.join(""))),
                ]));
            }
            Ok(changes) => {
                lines.push(Line::from(Span::styled(
                    format!(" {target} — will change:"),
                    theme.heading(),
                )));
                for change in changes {
                    lines.push(Line::from(Span::raw(format!(
                        "   {}",
                        text::clean(&change.to_string(), 200)
                    ))));
                }
            }
            Err(refusal) => lines.push(Line::from(vec![
                Span::styled(" ✗ ", theme.error()),
                Span::styled(
                    format!("{target}: {}", text::clean(&refusal.to_string(), 300)),
                    theme.error(),
                ),
            ])),
        }
    }
    lines
}

fn input_line<'a>(label: &'a str, value: &'a str, active: bool, theme: &Theme) -> Line<'a> {
    let cursor = if active { "▏" } else { "" };
    let style = if active { theme.key() } else { theme.plain() };
    Line::from(vec![
        Span::styled(format!(" {label}: "), theme.heading()),
        Span::styled(format!("{}{cursor}", text::clean(value, 200)), style),
    ])
}

pub fn dialog(frame: &mut Frame, area: Rect, app: &App, dialog: &Dialog, theme: &Theme) {
    let width = area.width.saturating_sub(8).clamp(60, 110);
    let height = area.height.saturating_sub(4);
    let rect = centered(area, width, height);
    let mut lines = Vec::new();
    if dialog.is_bulk() {
        let ok = dialog.plans.iter().filter(|p| p.verdict.is_ok()).count();
        lines.push(Line::from(Span::styled(
            format!(
                " {} spaces selected; {ok} would apply, one transaction each",
                dialog.actions.len()
            ),
            theme.heading(),
        )));
    }
    if let Some(blocked) = &dialog.blocked {
        lines.push(Line::from(Span::styled(
            format!(" {blocked}"),
            theme.error(),
        )));
    }
    match &dialog.stage {
        Stage::Planning => lines.push(Line::from(Span::styled(" planning…", theme.dim()))),
        Stage::Broken(error) => lines.push(Line::from(Span::styled(
            format!(" could not plan: {}", text::clean(error, 300)),
            theme.error(),
        ))),
        Stage::Editing | Stage::Applying => {
            lines.extend(plan_lines(&dialog.plans, dialog.is_bulk(), theme))
        }
        Stage::Done(results) => {
            lines.push(Line::from(Span::styled(" results:", theme.heading())));
            for (applied, sentence) in results {
                let (mark, style) = if *applied {
                    (" ✓ ", theme.ok())
                } else {
                    (" ✗ ", theme.error())
                };
                lines.push(Line::from(vec![
                    Span::styled(mark, style),
                    Span::styled(text::clean(sentence, 300), style),
                ]));
            }
        }
    }
    lines.push(Line::default());
    if matches!(
        dialog.stage,
        Stage::Editing | Stage::Planning | Stage::Applying
    ) {
        lines.push(input_line(
            "reason",
            &dialog.reason,
            dialog.field == Field::Reason,
            theme,
        ));
        if dialog.confirm_expected.is_some() {
            let label = format!("type {}", dialog.confirm_prompt);
            let active = dialog.field == Field::Confirm;
            let cursor = if active { "▏" } else { "" };
            let style = if active { theme.key() } else { theme.plain() };
            lines.push(Line::from(vec![
                Span::styled(format!(" {label}: "), theme.heading()),
                Span::styled(
                    format!("{}{cursor}", text::clean(&dialog.confirm, 40)),
                    style,
                ),
            ]));
        }
        lines.push(Line::default());
    }
    let footer = match &dialog.stage {
        Stage::Applying => Span::styled(" applying…", theme.dim()),
        Stage::Done(_) | Stage::Broken(_) => Span::styled(" Enter/Esc closes", theme.dim()),
        _ => match dialog.not_ready() {
            Some(missing) => Span::styled(
                format!(" {missing} · Tab switches field · Esc cancels"),
                theme.dim(),
            ),
            None => Span::styled(
                " Enter applies · Esc cancels — nothing is written before Enter",
                theme.key(),
            ),
        },
    };
    lines.push(Line::from(footer));
    frame.render_widget(Clear, rect);
    let block = frame_block(format!(" {} ", dialog.title), app);
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        rect,
    );
}

pub fn help(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let height = (BINDINGS.len() as u16 + 4).min(area.height);
    let rect = centered(area, 76, height);
    let mut lines: Vec<Line> = BINDINGS
        .iter()
        .map(|b| {
            Line::from(vec![
                Span::styled(format!(" {:<7}", b.shown), theme.key()),
                Span::raw(b.help),
            ])
        })
        .collect();
    lines.push(Line::from(Span::styled(
        " any key closes this help",
        theme.dim(),
    )));
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(frame_block(" keys ".into(), app)),
        rect,
    );
}
