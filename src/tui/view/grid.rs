//! The views' tables, laid out by [`crate::columns`]: every value fitted to its column with a
//! mark where it is cut, so ratatui never cuts one silently.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::widgets::{Cell, Row, Table};

use crate::columns::{Column, Cut, Laid};

/// Cells are one apart.
const SPACING: u16 = 1;

/// One value of a row, with its style, and how it is cut when its column's own way does not
/// suit it (a worker's name in a column of codes).
pub(crate) struct Value {
    pub(crate) text: String,
    pub(crate) style: Style,
    pub(crate) cut: Option<Cut>,
}

impl Value {
    pub(crate) fn new(text: impl Into<String>, style: Style) -> Self {
        Self {
            text: text.into(),
            style,
            cut: None,
        }
    }

    pub(crate) fn plain(text: impl Into<String>) -> Self {
        Self::new(text, Style::new())
    }

    pub(crate) fn cut(mut self, cut: Cut) -> Self {
        self.cut = Some(cut);
        self
    }
}

/// A row: its values (one per column) and its own style (the cursor, a change).
pub(crate) struct Line {
    pub(crate) values: Vec<Value>,
    pub(crate) style: Style,
}

/// Draws `lines` under the columns' titles (in `heading`).
pub(crate) fn draw(
    frame: &mut Frame,
    area: Rect,
    columns: &[Column],
    lines: Vec<Line>,
    heading: Style,
) {
    let texts: Vec<Vec<&str>> = lines
        .iter()
        .map(|l| l.values.iter().map(|v| v.text.as_str()).collect())
        .collect();
    let laid = Laid::out(columns, &texts, area.width, SPACING);
    let shown: Vec<usize> = (0..columns.len()).filter(|i| laid.shown(*i)).collect();
    let widths: Vec<Constraint> = shown
        .iter()
        .map(|&i| Constraint::Length(laid.widths[i]))
        .collect();
    let header = Row::new(shown.iter().map(|&i| {
        let c = &columns[i];
        Cell::from(crate::columns::fit(c.title, laid.widths[i], Cut::End))
    }))
    .style(heading);
    let rows: Vec<Row> = lines
        .into_iter()
        .map(|line| {
            let mut values: Vec<Option<Value>> = line.values.into_iter().map(Some).collect();
            let cells: Vec<Cell> = shown
                .iter()
                .map(|&i| {
                    let c = &columns[i];
                    let value = values.get_mut(i).and_then(Option::take);
                    match value {
                        Some(v) => Cell::from(crate::columns::fit(
                            &v.text,
                            laid.widths[i],
                            v.cut.unwrap_or(c.cut),
                        ))
                        .style(v.style),
                        None => Cell::from(""),
                    }
                })
                .collect();
            Row::new(cells).style(line.style)
        })
        .collect();
    frame.render_widget(
        Table::new(rows, widths)
            .header(header)
            .column_spacing(SPACING),
        area,
    );
}

/// `spans` on one line `width` cells wide: whole when they fit, else cut with a mark at the
/// end (ratatui would cut them silently).
pub(crate) fn fit_line(
    spans: Vec<ratatui::text::Span<'_>>,
    width: u16,
) -> ratatui::text::Line<'static> {
    use ratatui::text::Span;
    use unicode_width::UnicodeWidthChar;
    let width = usize::from(width);
    let total: usize = spans.iter().map(Span::width).sum();
    let owned = |span: &Span<'_>, content: String| Span::styled(content, span.style);
    if total <= width {
        return ratatui::text::Line::from(
            spans
                .iter()
                .map(|s| owned(s, s.content.to_string()))
                .collect::<Vec<_>>(),
        );
    }
    let mut out = Vec::new();
    let mut used = 0;
    let room = width.saturating_sub(1);
    for span in &spans {
        let mut kept = String::new();
        for ch in span.content.chars() {
            let w = ch.width().unwrap_or(0);
            if used + w > room {
                break;
            }
            used += w;
            kept.push(ch);
        }
        let full = kept.len() == span.content.len();
        out.push(owned(span, kept));
        if !full {
            out.push(owned(span, crate::text::ELLIPSIS.to_string()));
            break;
        }
    }
    ratatui::text::Line::from(out)
}

/// `line` in rows of at most `width` cells, broken at spaces where it can be, each row after
/// the first indented like the line's text (past its leading spaces, or a leading mark such as
/// ` ✓ `), so a wrapped sentence keeps the dialog's inner margin.
pub(crate) fn wrap_indented(
    line: ratatui::text::Line<'_>,
    width: usize,
) -> Vec<ratatui::text::Line<'static>> {
    wrap_under(line, width, None)
}

/// [`wrap_indented`], each row after the first indented by `indent` cells when given.
pub(crate) fn wrap_under(
    line: ratatui::text::Line<'_>,
    width: usize,
    indent: Option<usize>,
) -> Vec<ratatui::text::Line<'static>> {
    use unicode_width::UnicodeWidthChar;
    let cells: Vec<(char, ratatui::style::Style)> = line
        .spans
        .iter()
        .flat_map(|span| {
            let style = line.style.patch(span.style);
            span.content.chars().map(move |c| (c, style))
        })
        .collect();
    let width_of = |c: char| c.width().unwrap_or(0);
    let total: usize = cells.iter().map(|(c, _)| width_of(*c)).sum();
    let owned = |cells: &[(char, ratatui::style::Style)]| -> ratatui::text::Line<'static> {
        let mut spans: Vec<ratatui::text::Span<'static>> = Vec::new();
        for (c, style) in cells {
            match spans.last_mut() {
                Some(last) if last.style == *style => last.content.to_mut().push(*c),
                _ => spans.push(ratatui::text::Span::styled(c.to_string(), *style)),
            }
        }
        ratatui::text::Line::from(spans)
    };
    if total <= width || width < 8 {
        return vec![owned(&cells)];
    }
    let first_is_mark = line
        .spans
        .first()
        .is_some_and(|s| matches!(s.content.trim(), "✓" | "✗" | "?" | "ok" | "no"));
    let indent = match indent {
        Some(indent) => indent,
        None if first_is_mark => line.spans[0].width(),
        None => cells.iter().take_while(|(c, _)| *c == ' ').count(),
    }
    .min(width / 2);
    let mut rows = Vec::new();
    let mut start = 0;
    let mut lead = 0;
    while start < cells.len() {
        let room = width - lead;
        // The longest piece that fits, ending before a space where there is one.
        let mut used = 0;
        let mut end = start;
        let mut last_space = None;
        while end < cells.len() && used + width_of(cells[end].0) <= room {
            if cells[end].0 == ' ' && end > start {
                last_space = Some(end);
            }
            used += width_of(cells[end].0);
            end += 1;
        }
        if end < cells.len()
            && let Some(space) = last_space
        {
            end = space;
        }
        let end = end.max(start + 1);
        let mut row: Vec<(char, ratatui::style::Style)> =
            std::iter::repeat_n((' ', ratatui::style::Style::new()), lead).collect();
        row.extend_from_slice(&cells[start..end]);
        rows.push(owned(&row));
        start = end;
        while start < cells.len() && cells[start].0 == ' ' {
            start += 1;
        }
        lead = indent;
    }
    rows
}
