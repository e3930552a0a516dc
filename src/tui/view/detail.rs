//! The detail of one bootstrap: every field, the snapshot metadata, items by status, failed
//! items with their errors, the running item, the space's mutation lease and recent audit.

use crate::domain::duration;
use chrono::{DateTime, Utc};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use uuid::Uuid;

use super::format;
use crate::domain::detail::Detail;
use crate::domain::ids::IdNames;
use crate::domain::model::ItemStatus;
use crate::domain::signals::lease_is_orphan_suspect;
use crate::domain::text;
use crate::poller::{Extra, Focus};
use crate::tui::app::App;
use crate::tui::layout;
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, id: &Uuid, theme: &Theme) {
    let extra = app.extra_for(&Focus::Detail(*id));
    let Some(paragraph) = paragraph(app, id, theme, area.width) else {
        return super::placeholder(frame, area, extra, "the detail", theme);
    };
    let (text_area, more) = text_area(&paragraph, area);
    // The content may have shrunk since the operator scrolled: never past its end.
    let last = last_scroll(&paragraph, text_area);
    let scroll = app.detail.scroll.min(last);
    frame.render_widget(paragraph.scroll((scroll, 0)), text_area);
    // Content below the screen is said on the last line, never left to be guessed.
    if let Some(line) = more {
        let below = usize::from(last - scroll);
        let (down, up) = if app.display.ascii {
            ("v", "^")
        } else {
            ("↓", "↑")
        };
        let text = match (below, scroll) {
            (0, _) => format!(" {up} end of the detail (k/PgUp back up)"),
            (n, _) => format!(" {down} {n} more line(s) below: j/PgDn"),
        };
        frame.render_widget(Paragraph::new(Line::styled(text, theme.key())), line);
    }
}

/// Where the detail's text goes: the whole body, or all but its last line when the text is
/// longer than the body (that line then says how much is below).
fn text_area(paragraph: &Paragraph, area: Rect) -> (Rect, Option<Rect>) {
    if paragraph.line_count(area.width) <= usize::from(area.height) || area.height < 2 {
        return (area, None);
    }
    let text = Rect {
        height: area.height - 1,
        ..area
    };
    let line = Rect {
        y: area.y + area.height - 1,
        height: 1,
        ..area
    };
    (text, Some(line))
}

/// The detail as one paragraph, once it is loaded, wrapped to `width`: a field's value wraps
/// under the value (past its name), other lines under their own text.
fn paragraph<'a>(app: &'a App, id: &Uuid, theme: &Theme, width: u16) -> Option<Paragraph<'a>> {
    let lines = match app.extra_for(&Focus::Detail(*id)) {
        Some(Extra::Detail(detail)) => match detail.as_ref() {
            Some(detail) => detail_lines(detail, app, theme),
            None => vec![Line::from(Span::styled(
                " this bootstrap no longer exists in scope (Esc returns to the board)",
                theme.error(),
            ))],
        },
        _ => return None,
    };
    let width = usize::from(width.max(1));
    let lines: Vec<Line> = lines
        .into_iter()
        .flat_map(|line| {
            let named = line.spans.len() > 1 && line.spans[0].width() == FIELD_NAME_WIDTH;
            let indent = named.then_some(FIELD_NAME_WIDTH);
            super::grid::wrap_under(line, width, indent)
        })
        .collect();
    Some(Paragraph::new(lines).wrap(Wrap { trim: false }))
}

/// The farthest the paragraph scrolls in `area`: its last line at the bottom.
fn last_scroll(paragraph: &Paragraph, area: Rect) -> u16 {
    let lines = paragraph.line_count(area.width);
    u16::try_from(lines.saturating_sub(usize::from(area.height))).unwrap_or(u16::MAX)
}

/// How far the detail of `id` scrolls on the terminal as it is now (scrolling stops there).
pub fn max_scroll(app: &App, id: &Uuid) -> u16 {
    let screen = Rect::new(0, 0, app.size.0, app.size.1);
    let body = layout::areas(screen).body;
    let theme = Theme::new(app.display.color);
    // Laid out as drawn: escaped text (under ASCII) is longer and wraps into more lines.
    text::in_ascii(app.display.ascii, || {
        paragraph(app, id, &theme, body.width).map_or(0, |p| last_scroll(&p, text_area(&p, body).0))
    })
}

/// The most of an error message the detail shows: far more than any real one.
const MESSAGE_LINES: usize = 2_000;
const MESSAGE_LINE_CHARS: usize = 20_000;

fn when(at: DateTime<Utc>, now: DateTime<Utc>) -> String {
    format!(
        "{} ({} ago)",
        at.format("%Y-%m-%d %H:%M:%S UTC"),
        duration::human(now - at)
    )
}

/// How wide a field's name is drawn (with its leading space): values line up after it.
const FIELD_NAME_WIDTH: usize = 23;

fn field<'a>(name: &'a str, value: String, theme: &Theme) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!(" {name:<22}"), theme.heading()),
        Span::raw(value),
    ])
}

fn section<'a>(title: &'a str, theme: &Theme) -> Line<'a> {
    Line::from(Span::styled(format!(" ── {title} "), theme.key()))
}

pub(crate) fn detail_lines<'a>(d: &'a Detail, app: &App, theme: &Theme) -> Vec<Line<'a>> {
    let b = &d.bootstrap;
    let now = d.db_now;
    let ascii = app.display.ascii;
    let row = app.row(&b.id);
    let row = row.as_ref();
    let mut lines = vec![section("bootstrap", theme)];
    lines.push(field("bootstrap id", b.id.to_string(), theme));
    lines.push(field("tenant", text::clean(&b.tenant_id, 120), theme));
    lines.push(field("space", b.knowledge_space_id.to_string(), theme));
    lines.push(field(
        "idempotency key",
        text::clean(&b.idempotency_key, 120),
        theme,
    ));
    lines.push(field(
        "checkpoint",
        format!("{} {}", format::pipeline(b.checkpoint, ascii), b.checkpoint),
        theme,
    ));
    let attention = row.map_or(String::new(), |r| {
        format!("  [{}]", format::flag(r.signals.attention))
    });
    lines.push(field(
        "run state",
        format!("{}{attention}", b.run_state),
        theme,
    ));
    // What blocks a blocked space, on the first screen (its whole section is further down).
    if let (Some(lease), Some(true)) = (&d.lease, row.map(|r| r.signals.blocked_by_lease)) {
        let suspect =
            lease_is_orphan_suspect(lease.acquired_at, lease.expires_at, now, &app.thresholds);
        let mut value = format!(
            "lease {} ({}) held {}",
            format::id(app.names(), &lease.id),
            text::clean(&lease.operation, 32),
            duration::human(now - lease.acquired_at)
        );
        let style = if suspect {
            value.push_str(" — ORPHAN SUSPECT (x removes it)");
            theme.attention(crate::domain::signals::Attention::Blocked)
        } else {
            value.push_str(" — a writer at work");
            theme.plain()
        };
        lines.push(Line::from(vec![
            Span::styled(format!(" {:<22}", "blocked by"), theme.heading()),
            Span::styled(value, style),
        ]));
    }
    lines.push(field(
        "documents",
        format!(
            "{}/{} {}",
            b.completed_documents,
            b.total_documents,
            format::bar(
                if b.total_documents > 0 {
                    f64::from(b.completed_documents) / f64::from(b.total_documents)
                } else {
                    0.0
                },
                20,
                ascii
            )
        ),
        theme,
    ));
    let shown_now = app.db_now().unwrap_or(now);
    if let Some(rate) = row.and_then(|r| r.rate_per_minute(shown_now)) {
        let eta = row
            .and_then(|r| r.eta(shown_now))
            .map_or("-".into(), duration::human);
        lines.push(field(
            "rate",
            format!("{rate:.0} docs/min, ETA {eta}"),
            theme,
        ));
    }
    match &b.worker {
        Some(w) => {
            lines.push(field("worker", text::clean(&w.worker_id, 120), theme));
            lines.push(field("lease token", w.token.to_string(), theme));
            let left = w.expires_at - now;
            let expiry = if left <= chrono::Duration::zero() {
                format!("EXPIRED {} ago", duration::human(-left))
            } else {
                format!("in {}", duration::human(left))
            };
            lines.push(field("lease expires", expiry, theme));
            lines.push(field("last heartbeat", when(w.heartbeat_at, now), theme));
        }
        None => lines.push(field("worker", "none".into(), theme)),
    }
    if b.last_error_code.is_some() || b.last_error_message.is_some() {
        let code = b
            .last_error_code
            .as_deref()
            .map_or(String::new(), |c| text::clean(c, 64));
        lines.push(Line::from(vec![
            Span::styled(format!(" {:<22}", "last error"), theme.heading()),
            Span::styled(code, theme.error()),
        ]));
        // The whole message, wrapped (the detail scrolls); bounded only against a runaway.
        let message = b.last_error_message.as_deref().unwrap_or("");
        for line in text::clean_lines(message, MESSAGE_LINES, MESSAGE_LINE_CHARS) {
            lines.push(Line::from(Span::raw(format!("   {line}"))));
        }
    }
    lines.push(field("row version", b.row_version.to_string(), theme));
    if let Some(p) = &b.publication {
        lines.push(field(
            "published",
            format!(
                "{} rev {} fp {}",
                // Whole: nothing on screen tells publications apart.
                p.publication_id,
                p.head_revision,
                text::clean(&p.fingerprint, 24)
            ),
            theme,
        ));
    }
    lines.push(field("created", when(b.created_at, now), theme));
    lines.push(field("updated", when(b.updated_at, now), theme));
    if let Some(done) = b.completed_at {
        lines.push(field("completed", when(done, now), theme));
    }

    lines.push(section("snapshot metadata", theme));
    let metadata = serde_json::to_string_pretty(&b.snapshot_metadata).unwrap_or_default();
    for line in text::clean_lines(&metadata, 20, 200) {
        lines.push(Line::from(Span::raw(format!("   {line}"))));
    }

    lines.push(section("items", theme));
    let counts: Vec<String> = ItemStatus::ALL
        .iter()
        .map(|s| format!("{s} {}", d.count(*s)))
        .collect();
    lines.push(Line::from(Span::raw(format!("   {}", counts.join("  ")))));
    // The documents listed are told apart from each other.
    let documents = IdNames::new(
        d.failed_items
            .iter()
            .chain(&d.running_item)
            .map(|item| item.document_asset_id),
    );
    if let Some(item) = &d.running_item {
        lines.push(field(
            "running item",
            format!(
                "#{} {} v{} attempt {}",
                item.ordinal,
                documents.short(&item.document_asset_id),
                item.document_version,
                item.compilation_attempt_id
                    .map_or("-".into(), |a| a.to_string())
            ),
            theme,
        ));
    }
    if !d.failed_items.is_empty() {
        lines.push(Line::from(Span::styled(
            format!("   failed items ({} shown):", d.failed_items.len()),
            theme.error(),
        )));
        for item in &d.failed_items {
            let error = item
                .last_error
                .as_deref()
                .map_or(String::new(), |e| text::clean(e, 300));
            lines.push(Line::from(vec![
                Span::raw(format!(
                    "   #{:<5} {} ",
                    item.ordinal,
                    documents.short(&item.document_asset_id)
                )),
                Span::styled(error, theme.error()),
            ]));
        }
    }

    lines.push(section("mutation lease", theme));
    match &d.lease {
        Some(lease) => {
            let suspect =
                lease_is_orphan_suspect(lease.acquired_at, lease.expires_at, now, &app.thresholds);
            lines.push(field("lease id", lease.id.to_string(), theme));
            lines.push(field("operation", text::clean(&lease.operation, 64), theme));
            lines.push(field("acquired", when(lease.acquired_at, now), theme));
            if let Some(expires) = lease.expires_at {
                lines.push(field("heartbeat expires", when(expires, now), theme));
            }
            if suspect {
                lines.push(Line::from(Span::styled(
                    "   ORPHAN SUSPECT: older than the orphan threshold; if its writer is gone, x removes it",
                    theme.attention(crate::domain::signals::Attention::Blocked),
                )));
            }
        }
        None => lines.push(Line::from(Span::raw("   none"))),
    }

    lines.push(section("recent operator actions", theme));
    match &d.audit {
        Err(why) => lines.push(Line::from(Span::styled(
            format!("   {}", text::clean(why, 200)),
            theme.read_only(),
        ))),
        Ok(records) if records.is_empty() => lines.push(Line::from(Span::raw("   none"))),
        Ok(records) => {
            for r in records {
                lines.push(Line::from(Span::raw(format!(
                    "   {} {} {} {} — {}",
                    r.at.format("%Y-%m-%d %H:%M:%S"),
                    text::clean(&r.who(), 100),
                    text::clean(&r.action, 32),
                    text::clean(&r.outcome, 16),
                    text::clean(&r.reason, 200)
                ))));
            }
        }
    }
    lines
}
