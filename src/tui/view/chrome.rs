//! The parts around the table: title bar, rollout summary with the checkpoint × run-state
//! matrix, view tabs, status line and key hints.

use crate::domain::duration;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

use super::format;
use crate::domain::board::{Quick, SortKey};
use crate::domain::model::{Checkpoint, RunState};
use crate::domain::signals::{Attention, Group};
use crate::domain::text;
use crate::tui::app::{App, Dialog, Overlay, Stage, View};
use crate::tui::keys::{self, Command, Scope};
use crate::tui::theme::Theme;

pub(crate) fn title(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let h = &app.header;
    let mut spans = Vec::new();
    if area.width >= 120 {
        spans.push(Span::styled(" bootstrap-console ", theme.title_bar()));
        spans.push(Span::raw(" "));
    }
    if let Some(label) = &h.label {
        let label = text::clean(label, 16).to_uppercase();
        spans.push(Span::styled(format!(" {label} "), theme.label(&label)));
        spans.push(Span::raw(" "));
    }
    if h.sandbox {
        spans.push(Span::styled(" SANDBOX ", theme.sandbox()));
        spans.push(Span::raw(" "));
    }
    if matches!(h.access, crate::topology::Access::InDoubt { .. }) {
        // Kept in view while the doubt lasts: the status line that said why fades.
        spans.push(Span::styled(
            "READ-ONLY: PRIMARY IN DOUBT ",
            theme.read_only(),
        ));
    } else if h.needs_migrate && h.access.is_read_only() {
        spans.push(Span::styled(
            "READ-ONLY: ACTIONS NEED MIGRATE ",
            theme.read_only(),
        ));
    } else if h.access.is_read_only() {
        spans.push(Span::styled("READ-ONLY ", theme.read_only()));
    } else {
        spans.push(Span::styled("READ-WRITE ", theme.read_write()));
    }
    spans.push(poll_health(app, theme));
    if let Some(replica) = replication(app, theme, area.width < 120) {
        spans.push(replica);
    }
    let scope = h
        .tenant_scope
        .as_deref()
        .map_or("all tenants".to_string(), |t| {
            format!("tenant {}", text::clean(t, 24))
        });
    spans.push(Span::styled(format!(" {scope} "), theme.heading()));
    // The target takes what is left; it is the least urgent part of the line.
    let used: usize = spans.iter().map(|s| s.width()).sum();
    let room = usize::from(area.width).saturating_sub(used + 1);
    if room > 8 {
        let primary = app.status.polling.primary.as_deref().unwrap_or(&h.target);
        let target = format!("{primary}{}", h.polls);
        spans.push(Span::styled(text::clean(&target, room), theme.dim()));
    }
    frame.render_widget(
        Paragraph::new(super::grid::fit_line(spans, area.width)),
        area,
    );
}

/// Polling at a glance: live with the real period and the console's own cost per poll,
/// paused, or stale. It only changes when polling changes, so an idle console writes nothing.
fn poll_health(app: &App, theme: &Theme) -> Span<'static> {
    let health = &app.status.polling;
    if let Some(failing) = app.failing_for() {
        let age = app.snapshot_age().map_or("no data yet".to_string(), |a| {
            format!("stale {}", duration::human_std(a))
        });
        let waiting = if health.locked {
            "ledger locked"
        } else {
            "reconnecting"
        };
        return Span::styled(
            format!(" {age}, {waiting} ({}) ", duration::human_std(failing)),
            theme.stale(),
        );
    }
    if health.paused {
        // Frozen at the snapshot's database time (UTC, as the database keeps it).
        let as_of = app.fleet().map_or(String::new(), |f| {
            format!("· as of {} UTC ", f.db_now.format("%H:%M:%S"))
        });
        return Span::styled(format!(" PAUSED {as_of}"), theme.read_only());
    }
    let Some(age) = app.snapshot_age() else {
        let text = if health.loading {
            "loading the ledger…"
        } else {
            "connecting…"
        };
        return Span::styled(text, theme.dim());
    };
    let period = health.period.unwrap_or(health.interval);
    // A poll is late once two periods passed without one: then its age matters (not while
    // polls wait on purpose for the standby to replay an action).
    if age > period.max(health.interval) * 2 && app.awaiting_replica.is_none() {
        return Span::styled(
            format!(" late: last poll {} ago ", duration::human_std(age)),
            theme.stale(),
        );
    }
    // The interval as set; when polls are spaced out, the measured period in whole seconds
    // (its jitter would otherwise redraw the header on every poll).
    let period = match health.period {
        Some(period) if health.slowed => {
            std::time::Duration::from_secs(period.as_secs_f64().round().max(1.0) as u64)
        }
        _ => health.interval,
    };
    let slowed = if health.slowed { " slowed" } else { "" };
    let style = if health.slowed {
        theme.stale()
    } else {
        theme.live()
    };
    // The first load is no measure of a poll's cost: until a regular poll, none is shown.
    let cost = health
        .poll_time
        .map_or(String::new(), |t| format!(" · poll {}", poll_cost(t)));
    Span::styled(
        format!("live every {}{cost}{slowed}", duration::interval(period)),
        style,
    )
}

/// A poll's cost as the cadence rounds it (1, 2, 5 per decade): `<1ms`, `20ms`, `2s`.
fn poll_cost(time: std::time::Duration) -> String {
    match time.as_millis() {
        0 => "<1ms".to_string(),
        ms if ms < 1000 => format!("{ms}ms"),
        _ => format!("{}s", time.as_secs()),
    }
}

/// How far behind the standby that polls read is, when they read one: in sync, or the lag and
/// the WAL still to replay — then the board's ages are as of the last replayed commit, which
/// it says — in warning style past [`crate::store::replica::LAG_WARNING`]; a standby or
/// primary that does not answer.
/// Narrow terminals get the short forms.
fn replication(app: &App, theme: &Theme, narrow: bool) -> Option<Span<'static>> {
    let health = &app.status.polling;
    let say = |long: &str, short: &str, style| {
        let text = if narrow { short } else { long };
        Some(Span::styled(format!(" · {text}"), style))
    };
    if health.primary_silent {
        return say(
            "the primary does not answer: nothing can be planned or applied",
            "PRIMARY SILENT",
            theme.stale(),
        );
    }
    if health.reader_down {
        return say(
            "standby unreachable: polls read the primary",
            "standby gone",
            theme.stale(),
        );
    }
    let Some(r) = health.replication else {
        // Polls that were to read a standby read a primary (promoted, or misnamed).
        if app.header.polls.is_empty() || app.snapshot_age().is_none() {
            return None;
        }
        if health.reader_promoted {
            return say(
                "STANDBY PROMOTED: polls read the new primary",
                "STANDBY PROMOTED",
                theme.stale(),
            );
        }
        return say(
            "polls read a primary: the read URL is no standby",
            "read URL: a primary",
            theme.stale(),
        );
    };
    if !r.measured {
        return say("a standby, lag not measured", "standby", theme.dim());
    }
    if r.caught_up() {
        return say("standby in sync", "in sync", theme.live());
    }
    let (Some(bytes), Some(delay)) = (r.bytes_behind(), r.delay()) else {
        return say(
            "standby lag unknown: ages as of the last poll that could tell",
            "lag unknown",
            theme.stale(),
        );
    };
    let style = if delay >= crate::store::replica::LAG_WARNING {
        theme.stale()
    } else {
        theme.dim()
    };
    let lag = format!("lag {} {}", duration::human(delay), human_bytes(bytes));
    // The board is judged by the model's clock, which never goes back: that is the instant
    // its ages are as of.
    let as_of = app.fleet().map_or(String::new(), |f| {
        format!(", ages as of {}", f.db_now.format("%H:%M:%S"))
    });
    say(&format!("standby {lag}{as_of}"), &lag, style)
}

fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b}B"),
        b if b < 1024 * 1024 => format!("{:.0}kB", b as f64 / 1024.0),
        b => format!("{:.1}MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// ` 93 docs/min ▂▃▅▇█▇▅▃ · 474 docs`: the rate, its history over the session where there is
/// room (the chart gives way before the documents left).
fn pace_line(app: &App, s: &crate::domain::board::Summary, width: usize) -> String {
    let rate = s
        .documents_per_minute
        .map_or("-".to_string(), |r| format!("{r:.0}"));
    let head = format!(" {rate} docs/min");
    let tail = format!(" · {} docs", s.documents_remaining);
    if app.pace.points().len() < 2 {
        return format!("{head}{tail}");
    }
    let room = width.saturating_sub(head.len() + 2);
    let tail_width = UnicodeWidthStr::width(tail.as_str());
    // The documents left are a number the operator reads; the chart gives way first.
    if room < 8 + tail_width {
        return format!("{head}{tail}");
    }
    let spark = (room - tail_width).min(24);
    format!(
        "{head} {}{tail}",
        app.pace.rate_sparkline(spark, app.display.ascii)
    )
}

pub(crate) fn summary(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let [left, right] =
        Layout::horizontal([Constraint::Min(28), Constraint::Length(52)]).areas(area);
    let Some(fleet) = app.fleet() else {
        let waiting = Paragraph::new(" waiting for the first snapshot…").style(theme.dim());
        frame.render_widget(waiting, area);
        return;
    };
    let s = &fleet.summary;
    let running = s.running_captured();
    // The ETA says what it covers: running jobs, not the ones waiting for an operator.
    let eta = match s.eta {
        Some(eta) if running > 0 => format!("{} for {running} running", duration::human(eta)),
        _ if running > 0 => format!("- for {running} running"),
        _ => "- (nothing running)".to_string(),
    };
    // The groups in the one vocabulary (see `Group`): what needs an operator, by class, then
    // what is only watched, and the canceled apart (an operator's decision).
    let operator = s.in_group(Group::NeedsOperator);
    let operator_line = Span::styled(
        format!(" needs an operator {operator}"),
        if operator > 0 {
            theme.attention(Attention::Failed)
        } else {
            theme.dim()
        },
    );
    let watch = s.in_group(Group::Watch);
    let watch_style = if watch > 0 {
        theme.attention(Attention::HeartbeatLate)
    } else {
        theme.dim()
    };
    // The numbers always fit; the bar only where there is room for it (a rollout of 100,000
    // spaces needs the width on 80 columns).
    let readable = format!(
        "{}/{} {:.0}%",
        s.readable,
        s.spaces,
        s.readable_share() * 100.0
    );
    let readable = if s.spaces == 0 {
        // Nothing in scope is not "100% readable".
        "- (no spaces in scope)".to_string()
    } else if usize::from(left.width) >= " readable ".len() + 9 + readable.len() {
        let mut line = format!(
            "{} {readable}",
            format::bar(s.readable_share(), 8, app.display.ascii)
        );
        // Where there is room: the share over the session.
        let room = usize::from(left.width)
            .saturating_sub(" readable ".len() + UnicodeWidthStr::width(line.as_str()) + 2);
        if room >= 8 && app.pace.points().len() > 1 {
            line.push(' ');
            line.push_str(&app.pace.readable_sparkline(room.min(24), app.display.ascii));
        }
        line
    } else {
        readable
    };
    // One column kept free: the matrix on the right starts right after.
    let pace = pace_line(app, s, usize::from(left.width).saturating_sub(1));
    let count = |a: Attention| {
        let n = s.count(a);
        let style = if n > 0 {
            theme.attention(a)
        } else {
            theme.dim()
        };
        Span::styled(format!("{} {n}  ", format::flag(a).to_lowercase()), style)
    };
    let lines = vec![
        Line::from(vec![
            Span::styled(" readable ", theme.heading()),
            Span::raw(readable),
        ]),
        Line::from(vec![Span::styled(" ETA ", theme.heading()), Span::raw(eta)]),
        match fleet.problems.first() {
            // Rows the console cannot read matter more than the rate.
            Some(problem) => Line::from(Span::styled(
                format!(
                    " {} unreadable row(s): {}",
                    fleet.problems.len(),
                    text::clean(&problem.to_string(), 120)
                ),
                theme.error(),
            )),
            None => Line::from(Span::styled(pace, theme.dim())),
        },
        Line::from(operator_line),
        Line::from(vec![
            Span::raw("  "),
            count(Attention::Failed),
            count(Attention::Blocked),
        ]),
        Line::from(vec![
            Span::raw("  "),
            count(Attention::LeaseExpired),
            count(Attention::Stuck),
        ]),
        Line::from(vec![
            Span::styled(format!(" watch {watch}"), watch_style),
            Span::styled(
                format!(" · {} canceled", s.count(Attention::Canceled)),
                theme.dim(),
            ),
        ]),
    ];
    // Each line ends in a mark where the column cannot hold it.
    let lines: Vec<Line> = lines
        .into_iter()
        .map(|line| super::grid::fit_line(line.spans, left.width.saturating_sub(1)))
        .collect();
    frame.render_widget(Paragraph::new(lines), left);
    frame.render_widget(Paragraph::new(matrix_lines(app, theme)), right);
}

/// Checkpoints down, run states across.
fn matrix_lines(app: &App, theme: &Theme) -> Vec<Line<'static>> {
    let Some(fleet) = app.fleet() else {
        return Vec::new();
    };
    let short = |state: RunState| match state {
        RunState::Queued => "queued",
        RunState::Running => "running",
        RunState::Succeeded => "succeed",
        RunState::Failed => "failed",
        RunState::Canceled => "cancel",
    };
    let mut header = format!("{:<11}", "");
    for state in RunState::ALL {
        header.push_str(&format!("{:>8}", short(*state)));
    }
    let mut lines = vec![Line::from(Span::styled(header, theme.heading()))];
    for checkpoint in Checkpoint::ALL {
        let name = checkpoint.short_name();
        let mut spans = vec![Span::styled(format!(" {name:<10}"), theme.heading())];
        for state in RunState::ALL {
            let n = fleet.summary.in_state(*checkpoint, *state);
            let style = if n == 0 {
                theme.dim()
            } else if *state == RunState::Failed {
                theme.attention(Attention::Failed)
            } else {
                theme.plain()
            };
            let shown = if n == 0 {
                ".".to_string()
            } else {
                n.to_string()
            };
            spans.push(Span::styled(format!("{shown:>8}"), style));
        }
        lines.push(Line::from(spans));
    }
    lines
}

/// Unicode or ASCII variants of the few symbols the chrome uses.
struct Glyphs {
    bar: &'static str,
    into: &'static str,
    cursor: &'static str,
    enter: &'static str,
}

fn glyphs(ascii: bool) -> Glyphs {
    if ascii {
        Glyphs {
            bar: "|",
            into: ">",
            cursor: "_",
            enter: "Enter",
        }
    } else {
        Glyphs {
            bar: "│",
            into: "›",
            cursor: "▏",
            enter: "⏎",
        }
    }
}

pub(crate) fn tabs(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let g = glyphs(app.display.ascii);
    let current = match app.view {
        // A detail belongs to the view it was opened from.
        View::Detail(_) => match app.detail_from {
            Some(View::Leases) => 2,
            Some(View::Audit) => 3,
            Some(View::Health) => 4,
            _ => 0,
        },
        View::Board => 0,
        View::Tenants => 1,
        View::Leases => 2,
        View::Audit => 3,
        View::Health => 4,
    };
    // The other views by their initials where the label needs the room (`B  T  Leases  A  H`):
    // what the rows on screen are matters more than the names of the views not shown.
    let tab_spans = |short: bool| {
        let mut spans = vec![Span::raw(" ")];
        for (i, name) in ["Board", "Tenants", "Leases", "Audit", "Health"]
            .iter()
            .enumerate()
        {
            let style = if i == current {
                theme.active_tab()
            } else {
                theme.dim()
            };
            let name = if short && i != current {
                &name[..1]
            } else {
                name
            };
            spans.push(Span::styled(format!(" {name} "), style));
            spans.push(Span::raw(" "));
        }
        spans
    };
    let mut spans = tab_spans(false);
    if let View::Detail(id) = &app.view {
        // The whole id: the other tabs give it their room; the one it was opened from stays.
        let kept = spans
            .drain(..)
            .skip(1 + 2 * current)
            .take(2)
            .collect::<Vec<_>>();
        spans = vec![Span::raw(" ")];
        spans.extend(kept);
        spans.push(Span::styled(
            format!("{} detail {id} ", g.into),
            theme.heading(),
        ));
    }
    if app.view == View::Board {
        // Most important first, so 80 columns keep it: how many rows, then what narrows or
        // orders them (the defaults are not repeated).
        // The label says what the rows on screen are: a new filter or order is named when its
        // rows arrive, and until then the label says they are on their way.
        let query = app.shown_query();
        let (shown, total) = app.fleet().map_or((0, 0), |f| (f.board.len(), f.total()));
        let count = if shown == total {
            format!("{total} spaces")
        } else {
            format!("{shown} of {total}")
        };
        spans.push(Span::styled(format!("{} {count}", g.bar), theme.dim()));
        if app.board_pending() {
            let asked = &app.board.query;
            let what = if asked.sort != query.sort || asked.reverse != query.reverse {
                "sorting"
            } else {
                "filtering"
            };
            spans.push(Span::styled(format!(" · {what}…"), theme.stale()));
        }
        let marked = app.board.marked.len();
        if marked > 0 {
            spans.push(Span::styled(format!(" · {marked} marked"), theme.marked()));
        }

        if let Some(tenant) = &query.tenant {
            spans.push(Span::styled(format!(" {} tenant ", g.bar), theme.dim()));
            spans.push(Span::styled(text::clean(tenant, 24), theme.key()));
        }
        // The prompt echoes what is typed; otherwise the filter of the rows shown.
        let typed = if app.board.editing {
            &app.board.query.text
        } else {
            &query.text
        };
        if app.board.editing || !typed.is_empty() {
            let cursor = if app.board.editing { g.cursor } else { "" };
            spans.push(Span::styled(format!(" {} ", g.bar), theme.dim()));
            let style = if app.board.editing {
                theme.key()
            } else {
                theme.plain()
            };
            spans.push(Span::styled(
                format!("/{}{cursor}", text::clean(typed, 40)),
                style,
            ));
        }
        if query.quick != Quick::All {
            spans.push(Span::styled(format!(" {} only ", g.bar), theme.dim()));
            spans.push(Span::styled(query.quick.label(), theme.key()));
        }
        if query.sort != SortKey::Attention || query.reverse {
            spans.push(Span::styled(
                format!(" {} by {}", g.bar, query.sort.label(query.reverse)),
                theme.dim(),
            ));
        }
    } else if app.view == View::Tenants {
        let count = app.fleet().map_or(0, |f| f.tenants.len());
        spans.push(Span::styled(
            format!("{} {count} tenants, attention first", g.bar),
            theme.dim(),
        ));
    }
    let width = |spans: &[Span]| spans.iter().map(Span::width).sum::<usize>();
    if !matches!(app.view, View::Detail(_)) && width(&spans) > usize::from(area.width) {
        let label = spans.split_off(tab_spans(false).len());
        spans = tab_spans(true);
        spans.extend(label);
    }
    frame.render_widget(
        Paragraph::new(super::grid::fit_line(spans, area.width)),
        area,
    );
}

pub(crate) fn status_line(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    // A sentence longer than the line ends in an ellipsis, not mid-word with no sign.
    let fit = |text: String| text::fit(&text, usize::from(area.width));
    let line = if let (Some(failing), Some(error)) =
        (app.failing_for(), &app.status.polling.last_error)
    {
        let age = app
            .snapshot_age()
            .map_or("no data yet".to_string(), duration::human_std);
        // A lock is said as the lock it is, with its holder: nothing needs reconnecting.
        let text = if app.status.polling.locked {
            format!(" stale for {age} — {}", text::clean(error, 200))
        } else {
            format!(
                " stale for {age} — reconnecting (failing {}): {}",
                duration::human_std(failing),
                text::clean(error, 200)
            )
        };
        Line::from(Span::styled(fit(text), theme.stale()))
    } else if let Some(waiting) = &app.awaiting_replica {
        let waited = app.now.saturating_duration_since(waiting.since).as_secs();
        let text = if waiting.gave_up {
            format!(
                " applied {waited}s ago; not on the standby yet (the board shows the state before)"
            )
        } else {
            format!(" applied; waiting for the replica ({waited}s)")
        };
        Line::from(Span::styled(fit(text), theme.stale()))
    } else if let Some(message) = &app.message {
        let style = if message.error {
            theme.error()
        } else {
            theme.ok()
        };
        Line::from(Span::styled(
            fit(format!(" {}", text::clean(&message.text, 300))),
            style,
        ))
    } else if app.status.polling.paused {
        Line::from(Span::styled(
            " polling paused — p resumes",
            theme.read_only(),
        ))
    } else {
        Line::default()
    };
    frame.render_widget(Paragraph::new(line), area);
}

/// The keys an operator needs most in the current view and mode, most important first, so a
/// narrow terminal keeps them. Actions appear only where they can be taken.
fn hinted(app: &App) -> Vec<Command> {
    let acts = !app.header.access.refuses_actions();
    let mut keys = vec![Command::Help, Command::Quit];
    match app.view {
        View::Board => {
            keys.extend([Command::Filter, Command::QuickNext, Command::Open]);
            if acts {
                keys.extend([Command::Retry, Command::Cancel, Command::RemoveLease]);
                keys.push(if app.board.marked.is_empty() {
                    Command::Mark
                } else {
                    Command::ClearMarks
                });
            }
        }
        View::Detail(_) => {
            keys.push(Command::Back);
            if acts {
                keys.extend([Command::Retry, Command::Cancel, Command::RemoveLease]);
            }
            keys.push(Command::Copy);
        }
        View::Tenants => keys.push(Command::Open),
        View::Audit | View::Health => keys.extend([Command::Open, Command::Refresh]),
        View::Leases => {
            keys.push(Command::Open);
            if acts {
                keys.push(Command::RemoveLease);
            }
        }
    }
    keys.extend([Command::NextView, Command::Pause]);
    keys
}

/// The keys of the open dialog that work now, from the key table (in its order).
fn dialog_hints(dialog: &Dialog, enter: &str) -> Vec<(String, &'static str)> {
    let scope = match dialog.stage {
        Stage::Applying => Scope::Applying,
        Stage::Done(_) | Stage::Broken(_) => Scope::Finished,
        Stage::Planning | Stage::Editing => Scope::Dialog,
    };
    let works = |command: Command| match command {
        Command::TakePlan => dialog.decision_changed(),
        Command::Force => dialog.forceable(),
        // Only what works now: Enter once nothing is missing, plans once there are some.
        Command::Apply => dialog.not_ready().is_none(),
        Command::NextField => dialog.blocked.is_none(),
        Command::PlanAgain => dialog.stage == Stage::Editing && dialog.blocked.is_none(),
        _ => true,
    };
    keys::bindings(scope)
        .filter(|b| works(b.command))
        .filter_map(|b| {
            let shown = if b.shown == "⏎" { enter } else { b.shown };
            Some((shown.to_string(), b.hint?))
        })
        .collect()
}

/// The keys of the filter prompt (from the key table, in its order), then how to quit.
fn filter_hints(enter: &str) -> Vec<(String, &'static str)> {
    let quit = keys::bindings(Scope::Anywhere).find(|b| b.command == Command::Quit);
    keys::bindings(Scope::Filter)
        .chain(quit)
        .map(|b| {
            let shown = if b.shown == "⏎" { enter } else { b.shown };
            (shown.to_string(), b.hint.unwrap_or(b.help))
        })
        .collect()
}

/// The keys of the current view and mode, as (key, word).
fn view_hints(app: &App, enter: &str) -> Vec<(String, &'static str)> {
    hinted(app)
        .into_iter()
        .filter_map(|command| {
            let binding = keys::binding(Scope::View, command)?;
            let shown = if command == Command::Open {
                enter
            } else {
                binding.shown
            };
            let hint = match (command, &app.view) {
                (Command::Open, View::Tenants) => "board",
                (Command::Open, View::Leases | View::Audit | View::Health) => "space",
                (Command::Refresh, View::Health) => "check again",
                (Command::Refresh, View::Audit) => "verify again",
                _ => binding.hint.unwrap_or(binding.help),
            };
            Some((shown.to_string(), hint))
        })
        .collect()
}

pub(crate) fn hints(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let g = glyphs(app.display.ascii);
    let keys = match &app.overlay {
        Overlay::Dialog(dialog) => dialog_hints(dialog, g.enter),
        Overlay::Help => vec![("any key".to_string(), "closes the help")],
        // While a filter is typed, its own keys: every other key types into it.
        Overlay::None if app.board.editing => filter_hints(g.enter),
        Overlay::None => view_hints(app, g.enter),
    };
    let mut spans = vec![Span::raw(" ")];
    for (shown, hint) in keys {
        let key = Span::styled(shown, theme.key());
        let label = Span::raw(format!(" {hint} "));
        // Whole hints only: a key without its word (or half a word) helps nobody.
        let used: usize = spans.iter().map(Span::width).sum();
        if used + key.width() + label.width() > usize::from(area.width) + 1 {
            break;
        }
        spans.push(key);
        spans.push(label);
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
