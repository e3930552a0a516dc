//! Overlays: the action dialog and the help screen.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use super::grid;
use crate::domain::actions::{Plan, Verdict};
use crate::domain::ids::IdNames;
use crate::domain::text;
use crate::tui::app::{App, Dialog, Field, Stage};
use crate::tui::keys::{self, Binding, Scope};
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

fn marks(ascii: bool) -> (&'static str, &'static str) {
    if ascii {
        (" ok ", " no ")
    } else {
        (" ✓ ", " ✗ ")
    }
}

fn plan_lines<'a>(
    plans: &'a [Plan],
    bulk: bool,
    names: &IdNames,
    ascii: bool,
    theme: &Theme,
) -> Vec<Line<'a>> {
    let (yes, no) = marks(ascii);
    let mut lines = Vec::new();
    for plan in plans {
        let target = plan.action.target(names);
        if let Some(audit_id) = plan.applied_before {
            lines.push(Line::from(vec![
                Span::styled(yes, theme.ok()),
                Span::raw(format!(
                    "{target}: this request was already applied (audit record {audit_id})"
                )),
            ]));
            continue;
        }
        if !bulk {
            for evidence in &plan.evidence {
                lines.push(Line::from(Span::raw(format!(
                    " {}",
                    text::clean(evidence, 200)
                ))));
            }
        }
        let meanwhile = plan
            .meanwhile
            .as_deref()
            .map(|m| format!(" ({})", text::clean(m, 120)))
            .unwrap_or_default();
        match &plan.verdict {
            Ok(changes) if bulk => {
                let first = changes
                    .first()
                    .map(|c| text::clean(&c.to_string(), 80))
                    .unwrap_or_default();
                lines.push(Line::from(vec![
                    Span::styled(yes, theme.ok()),
                    Span::raw(format!("{target}: {first}{meanwhile}")),
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
                if let Some(meanwhile) = &plan.meanwhile {
                    lines.push(Line::from(Span::styled(
                        format!(" {}", text::clean(meanwhile, 200)),
                        theme.dim(),
                    )));
                }
            }
            Err(refusal) => {
                let style = if refusal.decision_changed() {
                    theme.changed()
                } else {
                    theme.error()
                };
                lines.push(Line::from(vec![
                    Span::styled(no, style),
                    Span::styled(
                        format!("{target}: {}", text::clean(&refusal.to_string(), 300)),
                        style,
                    ),
                ]));
            }
        }
    }
    lines
}

fn input_line<'a>(
    label: &'a str,
    value: &'a str,
    active: bool,
    ascii: bool,
    theme: &Theme,
) -> Line<'a> {
    let cursor = match (active, ascii) {
        (false, _) => "",
        (true, false) => "▏",
        (true, true) => "_",
    };
    let style = if active { theme.key() } else { theme.plain() };
    Line::from(vec![
        Span::styled(format!(" {label}: "), theme.heading()),
        Span::styled(format!("{}{cursor}", text::clean(value, 200)), style),
    ])
}

fn result_lines<'a>(results: &'a [(Verdict, String)], ascii: bool, theme: &Theme) -> Vec<Line<'a>> {
    let (yes, no) = marks(ascii);
    let mut lines = vec![Line::from(Span::styled(" results:", theme.heading()))];
    for (verdict, sentence) in results {
        let (mark, style) = match verdict {
            Verdict::Applied => (yes, theme.ok()),
            Verdict::Unknown => (" ? ", theme.changed()),
            Verdict::Refused | Verdict::Failed => (no, theme.error()),
        };
        lines.push(Line::from(vec![
            Span::styled(mark, style),
            // Long enough for an unknown one's settle command, whole ids and reason included.
            Span::styled(text::clean(sentence, 800), style),
        ]));
    }
    lines
}

fn footer<'a>(dialog: &Dialog, theme: &Theme) -> Line<'a> {
    let span = match &dialog.stage {
        Stage::Applying => Span::styled(
            " applying… Esc stops waiting (the outcome is then looked up)",
            theme.dim(),
        ),
        Stage::Done(_) | Stage::Broken(_) => Span::styled(" Enter/Esc closes", theme.dim()),
        _ => match dialog.not_ready() {
            // The keys are in the hint bar, from the key table.
            Some(missing) => Span::styled(format!(" {missing}"), theme.dim()),
            None => Span::styled(
                " Enter applies · Esc cancels · nothing is written before Enter",
                theme.key(),
            ),
        },
    };
    Line::from(span)
}

pub(crate) fn dialog(frame: &mut Frame, area: Rect, app: &App, dialog: &Dialog, theme: &Theme) {
    let width = area.width.saturating_sub(8).clamp(60, 110);
    let height = area.height.saturating_sub(4);
    let rect = centered(area, width, height);
    let ascii = app.display.ascii;
    let mut lines = Vec::new();
    if dialog.is_bulk() {
        let ok = crate::domain::actions::to_apply(&dialog.plans).len();
        lines.push(Line::from(Span::styled(
            format!(
                " {} spaces marked; {ok} would apply, one transaction each",
                dialog.actions.len()
            ),
            theme.heading(),
        )));
    }
    if let Some(error) = &dialog.replan_error {
        lines.push(Line::from(Span::styled(
            format!(
                " could not plan again ({}); showing the last plan",
                text::clean(error, 600)
            ),
            theme.error(),
        )));
    }
    if let Some(blocked) = &dialog.blocked {
        lines.push(Line::from(Span::styled(
            format!(" {blocked}"),
            theme.error(),
        )));
    }
    // What follows the plans: the inputs (or nothing once done) and the footer.
    let mut tail = Vec::new();
    if matches!(
        dialog.stage,
        Stage::Editing | Stage::Planning | Stage::Applying
    ) {
        tail.push(Line::default());
        tail.push(input_line(
            "reason",
            &dialog.reason,
            dialog.field == Field::Reason,
            ascii,
            theme,
        ));
        let label = format!("type {}", dialog.confirmation().what_to_type());
        let active = dialog.field == Field::Confirm;
        let mut line = input_line("", &dialog.confirm, active, ascii, theme);
        line.spans[0] = Span::styled(format!(" {label}: "), theme.heading());
        tail.push(line);
    }
    tail.push(Line::default());
    tail.push(footer(dialog, theme));
    // The id to look the request up by, or to re-drive it with from the command line.
    tail.push(Line::from(Span::styled(
        format!(" request {}", dialog.request),
        theme.dim(),
    )));
    let body = match &dialog.stage {
        Stage::Planning => vec![Line::from(Span::styled(" planning…", theme.dim()))],
        Stage::Broken(error) => vec![Line::from(Span::styled(
            format!(" could not plan: {}", text::clean(error, 600)),
            theme.error(),
        ))],
        Stage::Editing | Stage::Applying => {
            plan_lines(&dialog.plans, dialog.is_bulk(), app.names(), ascii, theme)
        }
        Stage::Done(results) => result_lines(results, ascii, theme),
    };
    // Lines are wrapped here, each continuation under its own text (the inner margin kept).
    let inner = rect.width.saturating_sub(2).max(1) as usize;
    let wrap = |lines: Vec<Line<'_>>| -> Vec<Line<'static>> {
        lines
            .into_iter()
            .flat_map(|line| grid::wrap_indented(line, inner))
            .collect()
    };
    let (mut lines, tail) = (wrap(lines), wrap(tail));
    // A long list keeps the inputs and the footer on screen: it is cut, saying how much.
    let fixed = lines.len() + tail.len();
    let mut room = (rect.height as usize).saturating_sub(2 + fixed);
    let total = body.len();
    let mut shown = 0;
    for line in body {
        let rows = grid::wrap_indented(line, inner);
        // Keep one row for the "more" line unless this is the last line.
        let reserve = usize::from(shown + 1 < total);
        if rows.len() + reserve > room {
            break;
        }
        room -= rows.len();
        lines.extend(rows);
        shown += 1;
    }
    if shown < total {
        lines.push(Line::from(Span::styled(
            format!(" … and {} more", total - shown),
            theme.dim(),
        )));
    }
    lines.extend(tail);
    // The rows the dialog spans are cleared from edge to edge: no fragment of the board
    // beside it reads as part of it.
    frame.render_widget(
        Clear,
        Rect {
            x: area.x,
            width: area.width,
            ..rect
        },
    );
    let block = frame_block(format!(" {} ", dialog.title), app);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

pub(crate) fn help(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    // The keys in the glyphs this terminal gets.
    let shown = |b: &Binding| match (app.display.ascii, b.shown) {
        (true, "⏎") => "Enter",
        (true, "⌫") => "BkSp",
        (_, other) => other,
    };
    let entry = |b: &Binding| {
        vec![
            Span::styled(format!(" {:<6}", shown(b)), theme.key()),
            Span::raw(format!("{:<32}", b.help)),
        ]
    };
    let views: Vec<&Binding> = keys::bindings(Scope::View).collect();
    // One column when it fits, two on short terminals (80×24 included).
    let one_column = views.len() as u16 + 8 <= area.height;
    let mut lines: Vec<Line> = if one_column {
        views.iter().map(|b| Line::from(entry(b))).collect()
    } else {
        let half = views.len().div_ceil(2);
        (0..half)
            .map(|i| {
                let mut spans = entry(views[i]);
                if let Some(right) = views.get(i + half) {
                    spans.extend(entry(right));
                }
                Line::from(spans)
            })
            .collect()
    };
    // What the board's marks mean, in the glyphs this terminal gets.
    let ascii = app.display.ascii;
    // The flags by group, in the words the header, the tenants view and `status` use.
    let group = |g: crate::domain::signals::Group| {
        let flags: Vec<&str> = g.classes().map(super::format::flag).collect();
        format!("{}: {}", g.label(), flags.join(" "))
    };
    use crate::domain::signals::Group;
    lines.push(Line::from(vec![
        Span::styled(" flags  ", theme.key()),
        Span::raw(group(Group::NeedsOperator)),
    ]));
    lines.push(Line::from(Span::raw(format!(
        "        {} · {}",
        group(Group::Watch),
        group(Group::Progressing)
    ))));
    lines.push(Line::from(Span::raw(format!(
        "        {} (canceled: an operator's decision)",
        group(Group::Done)
    ))));
    lines.push(Line::from(vec![
        Span::styled(" marks  ", theme.key()),
        Span::raw(format!(
            "{} done/here/ahead · {} progress · ? orphan suspect · * changed",
            super::format::pipeline(crate::domain::model::Checkpoint::Rebuilding, ascii),
            super::format::bar(0.5, 4, ascii),
        )),
    ]));
    // The keys that mean something else elsewhere, from the same table: a dialog's (typing
    // aside) and those that work whatever has the focus.
    let width: usize = if one_column { 40 } else { 78 };
    let dialog = keys::bindings(Scope::Dialog)
        .chain(keys::bindings(Scope::Applying))
        .filter(|b| b.hint.is_some());
    for line in flowed(" dialog ", dialog, &shown, width) {
        lines.push(line.styled(theme));
    }
    for line in flowed(" always ", keys::bindings(Scope::Anywhere), &shown, width) {
        lines.push(line.styled(theme));
    }
    lines.push(Line::from(Span::styled(
        " any other key closes this help",
        theme.dim(),
    )));
    let width = if one_column { 42 } else { 80 };
    // Lines wider than the box wrap under their text, past their label (` flags  `).
    let lines: Vec<Line> = lines
        .into_iter()
        .flat_map(|line| grid::wrap_under(line, usize::from(width) - 2, Some(8)))
        .collect();
    let rect = centered(area, width, lines.len() as u16 + 2);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(frame_block(" keys ".into(), app)),
        rect,
    );
}

/// A line of the help's key lists: its label (on the first line only) and `key help` pairs.
struct Flowed {
    label: String,
    pairs: Vec<(String, &'static str)>,
}

impl Flowed {
    fn styled<'a>(self, theme: &Theme) -> Line<'a> {
        let mut spans = vec![Span::styled(self.label, theme.key())];
        for (i, (key, help)) in self.pairs.into_iter().enumerate() {
            let gap = if i == 0 { "" } else { " · " };
            spans.push(Span::raw(gap));
            spans.push(Span::styled(key, theme.key()));
            spans.push(Span::raw(format!(" {help}")));
        }
        Line::from(spans)
    }
}

/// `bindings` as `key help` pairs after `label`, flowed into lines of at most `width`.
fn flowed<'b>(
    label: &str,
    bindings: impl Iterator<Item = &'b Binding>,
    shown: &dyn Fn(&Binding) -> &'static str,
    width: usize,
) -> Vec<Flowed> {
    let indent = " ".repeat(label.chars().count());
    let mut lines = vec![Flowed {
        label: label.to_string(),
        pairs: Vec::new(),
    }];
    let mut used = label.chars().count();
    for b in bindings {
        let help = b.hint.unwrap_or(b.help);
        let cost = shown(b).chars().count() + 1 + help.chars().count() + 3;
        let line = lines.last_mut().expect("a line");
        if !line.pairs.is_empty() && used + cost > width {
            lines.push(Flowed {
                label: indent.clone(),
                pairs: Vec::new(),
            });
            used = indent.chars().count();
        }
        lines
            .last_mut()
            .expect("a line")
            .pairs
            .push((shown(b).to_string(), help));
        used += cost;
    }
    lines
}
