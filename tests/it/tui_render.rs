//! Rendering snapshots of every view at 80×24 and 160×48 from fixed fixture data (ratatui's test
//! backend), including a failed space whose error message is full of escape sequences.

use crate::common;

use bootstrap_console::domain::actions::Plan;
use bootstrap_console::domain::audit_chain::{Break, ChainHead, Verification};
use bootstrap_console::poller::{Extra, Focus};
use bootstrap_console::tui::app::{App, Overlay, View};
use bootstrap_console::tui::update::{self, Event};
use bootstrap_console::tui::view;
use common::screens::{self, id};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

fn render(app: &App) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(app.size.0, app.size.1)).expect("terminal");
    terminal.draw(|frame| view::draw(frame, app)).expect("draw");
    terminal
}

fn screen_text(terminal: &Terminal<TestBackend>) -> String {
    terminal
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|cell| cell.symbol())
        .collect()
}

/// Nothing from the database reaches the terminal as a control character.
fn assert_no_controls(terminal: &Terminal<TestBackend>) {
    for cell in terminal.backend().buffer().content() {
        assert!(
            !cell
                .symbol()
                .chars()
                .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "a control character reached the screen: {:?}",
            cell.symbol()
        );
    }
}

fn snapshot(name: &str, app: &App) {
    let terminal = render(app);
    assert_no_controls(&terminal);
    insta::assert_snapshot!(
        format!("{name}_{}x{}", app.size.0, app.size.1),
        terminal.backend()
    );
}

fn detail_app(size: (u16, u16)) -> App {
    let mut app = screens::app(
        size,
        Extra::Detail(Box::new(Some(screens::detail()))),
        Focus::Detail(id(1)),
    );
    app.view = View::Detail(id(1));
    app
}

#[test]
fn the_board() {
    for size in SIZES {
        snapshot("board", &screens::app(size, Extra::None, Focus::Board));
    }
}

#[test]
fn the_detail_of_a_failed_space_with_a_hostile_error() {
    for size in SIZES {
        let app = detail_app(size);
        snapshot("detail", &app);
        let text = screen_text(&render(&app));
        assert!(
            text.contains("FATAL") && text.contains('␛'),
            "the message is shown, defused"
        );
    }
}

#[test]
fn the_tenants_view() {
    for size in SIZES {
        let mut app = screens::app(size, Extra::None, Focus::Tenants);
        app.view = View::Tenants;
        snapshot("tenants", &app);
        let text = screen_text(&render(&app));
        assert!(text.contains("acme"), "{text}");
    }
}

#[test]
fn the_leases_view() {
    for size in SIZES {
        let mut app = screens::app(size, Extra::Leases(screens::leases()), Focus::Leases);
        app.view = View::Leases;
        snapshot("leases", &app);
    }
}

#[test]
fn the_audit_view() {
    for size in SIZES {
        let mut app = screens::app(size, Extra::Audit(screens::audits()), Focus::Audit);
        app.view = View::Audit;
        let verified = app.now - std::time::Duration::from_secs(12);
        app.chain.checked = Some((verified, Ok(chain(None))));
        snapshot("audit", &app);
    }
}

#[test]
fn the_help_screen() {
    for size in SIZES {
        let mut app = screens::app(size, Extra::None, Focus::Board);
        app.overlay = Overlay::Help;
        snapshot("help", &app);
    }
}

#[test]
fn the_retry_dialog_shows_the_plan_and_asks_for_a_reason() {
    for size in SIZES {
        let changes = [("run_state", "failed", "queued"), ("row_version", "7", "8")];
        let plan = |action| screens::plan_changing(action, &changes);
        let app = dialog_after(size, "r", plan, "parser fixed");
        snapshot("dialog_retry", &app);
    }
}

#[test]
fn a_terminal_that_is_too_small() {
    let app = screens::app((60, 20), Extra::None, Focus::Board);
    snapshot("too_small", &app);
    assert!(screen_text(&render(&app)).contains("terminal too small"));
}

#[test]
fn ascii_mode_draws_no_unicode_line_or_block_characters() {
    let mut app = screens::app((160, 48), Extra::None, Focus::Board);
    app.display.ascii = true;
    let board = screen_text(&render(&app));
    app.overlay = Overlay::Help;
    let help = screen_text(&render(&app));
    for text in [&board, &help] {
        for forbidden in ['●', '◉', '○', '█', '░', '─', '│', '╭', '╮'] {
            assert!(!text.contains(forbidden), "{forbidden} drawn in ASCII mode");
        }
    }
    assert!(
        board.contains("@....") && board.contains("##@.."),
        "the ASCII pipeline is drawn"
    );
    assert!(
        board.contains("[#") || board.contains("#."),
        "ASCII progress bars are drawn"
    );
}

#[test]
fn no_color_leaves_state_readable_as_text() {
    let mut app = screens::app((160, 48), Extra::None, Focus::Board);
    app.display.color = false;
    let terminal = render(&app);
    for cell in terminal.backend().buffer().content() {
        assert_eq!(cell.fg, Color::Reset, "no foreground colour with NO_COLOR");
        assert_eq!(cell.bg, Color::Reset, "no background colour with NO_COLOR");
    }
    let text = screen_text(&terminal);
    for flag in ["FAILED", "BLOCKED", "EXPIRED", "STUCK", " late ", "PROD"] {
        assert!(text.contains(flag), "{flag} is written out");
    }
}

fn key(c: char) -> Event {
    Event::Key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char(c),
        crossterm::event::KeyModifiers::NONE,
    ))
}

#[test]
fn counts_as_wide_as_a_real_rollouts_keep_every_digit_at_80_columns() {
    let mut fleet = screens::many(100_000);
    let mut app = screens::app((80, 24), Extra::None, Focus::Board);
    let mut status = app.status.clone();
    status.fleet = Some(std::sync::Arc::new(fleet.snapshot().expect("a snapshot")));
    update::update(&mut app, Event::Poll(Box::new(status)));
    let text = screen_text(&render(&app));
    assert!(text.contains("readable 20000/100000 20%"), "{text}");
    assert!(text.contains("│ 100000 spaces"), "{text}");
}

/// The last line of the screen: the key hints.
fn hint_line(app: &App) -> String {
    let text = screen_text(&render(app));
    let width = usize::from(app.size.0);
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len() - width..].iter().collect()
}

#[test]
fn hints_offer_only_what_the_view_and_mode_allow() {
    let mut app = screens::app((160, 48), Extra::None, Focus::Board);
    assert!(hint_line(&app).contains("r retry"), "{}", hint_line(&app));
    app.header.access = bootstrap_console::topology::Access::ReadOnly {
        reason: "--read-only".into(),
    };
    let hints = hint_line(&app);
    for action in ["r retry", "c cancel", "x lease", "mark"] {
        assert!(
            !hints.contains(action),
            "{action} offered read-only: {hints}"
        );
    }
    app.view = View::Tenants;
    assert!(!hint_line(&app).contains("/ filter"), "{}", hint_line(&app));
    // At 80 columns every hint shown is whole.
    let narrow = screens::app((80, 24), Extra::None, Focus::Board);
    let hints = hint_line(&narrow);
    let last = hints.split_whitespace().last().expect("hints");
    assert!(
        ["mark", "view", "pause", "lease"].contains(&last),
        "a hint cut short: {hints}"
    );
}

#[test]
fn the_tabs_line_counts_marked_spaces() {
    let mut app = screens::app((80, 24), Extra::None, Focus::Board);
    update::update(&mut app, key(' '));
    update::update(&mut app, key(' '));
    let text = screen_text(&render(&app));
    assert!(text.contains("9 spaces · 2 marked"), "{text}");
}

#[test]
fn the_eta_covers_the_running_jobs_and_the_groups_say_what_needs_an_operator() {
    use bootstrap_console::domain::model::{Checkpoint, RunState};
    let app = screens::app((80, 24), Extra::None, Focus::Board);
    let fleet = app.fleet().expect("fleet");
    let s = &fleet.summary;
    let running: i64 = fleet
        .rows
        .values()
        .filter(|r| r.run_state == RunState::Running && r.checkpoint != Checkpoint::PendingSnapshot)
        .map(|r| i64::from(r.total - r.completed))
        .sum();
    assert_eq!(s.documents_running, running);
    assert!(
        s.documents_remaining > running,
        "the fixture's failed and canceled jobs have documents left too"
    );
    let rate = s.documents_per_minute.expect("a rate");
    let eta = s.eta.expect("an ETA").num_milliseconds() as f64;
    assert!(
        (eta - running as f64 / rate * 60_000.0).abs() < 1.0,
        "{eta}"
    );
    let text = screen_text(&render(&app));
    assert!(text.contains("ETA 2m58s for 3 running"), "{text}");
    assert!(text.contains("needs an operator 4"), "{text}");
    assert!(text.contains("watch 1"), "{text}");
}

/// A verification of three records, intact or with `broken`.
fn chain(broken: Option<Break>) -> Verification {
    Verification {
        records: 3,
        verified: Some(ChainHead {
            id: 3,
            seq: 3,
            hash: vec![0x9f; 32],
        }),
        broken,
        complete: true,
        unprotected: Vec::new(),
        expected_found: true,
        end_checked: true,
    }
}

#[test]
fn a_broken_audit_chain_is_the_audit_views_first_line_at_80_columns() {
    let mut app = screens::app((80, 24), Extra::Audit(screens::audits()), Focus::Audit);
    app.view = View::Audit;
    let text = screen_text(&render(&app));
    assert!(text.contains(" audit chain: not verified yet"), "{text}");

    app.chain.running = Some(2000);
    let text = screen_text(&render(&app));
    assert!(
        text.contains("audit chain: verifying… 2000 records"),
        "{text}"
    );

    app.chain.running = None;
    app.chain.checked = Some((app.now, Ok(chain(Some(Break::Changed { id: 2, seq: 2 })))));
    let text = screen_text(&render(&app));
    assert!(
        text.contains(" AUDIT CHAIN BROKEN: record 2 (chain position 2) was changed"),
        "{text}"
    );
    assert!(
        text.contains("rm lease") || text.contains("retry"),
        "the records still show: {text}"
    );

    let mut unguarded = chain(None);
    unguarded.unprotected = vec!["trigger audit_log_no_change is disabled".into()];
    app.chain.checked = Some((app.now, Ok(unguarded)));
    let text = screen_text(&render(&app));
    assert!(
        text.contains(" AUDIT LOG UNPROTECTED: trigger audit_log_no_change is disabled"),
        "{text}"
    );

    app.chain.checked = Some((
        app.now,
        Err("audit unavailable: role x lacks SELECT".into()),
    ));
    let text = screen_text(&render(&app));
    assert!(
        text.contains(" audit chain not verified: audit unavailable: role x lacks SELECT"),
        "{text}"
    );
}

#[test]
fn a_forced_lease_removal_stands_out_in_the_audit_view_at_80_columns() {
    let mut records = screens::audits();
    records[0].action = "remove_mutation_lease".into();
    records[0].outcome = "applied_forced".into();
    records[0].db_role = Some("alice".into());
    let mut app = screens::app((80, 24), Extra::Audit(records), Focus::Audit);
    app.view = View::Audit;
    let text = screen_text(&render(&app));
    assert!(
        text.contains("rm lease") && text.contains("FORCED") && text.contains("alice (oncall"),
        "{text}"
    );
}

#[test]
fn eighty_columns_keep_whole_error_codes_help_and_an_ellipsis_for_long_messages() {
    let mut app = screens::app((80, 24), Extra::None, Focus::Board);
    let text = screen_text(&render(&app));
    assert!(
        text.contains("compile_timeout") && text.contains("operator_canceled"),
        "{text}"
    );
    assert!(
        hint_line(&app).starts_with(" ? help"),
        "{}",
        hint_line(&app)
    );
    app.say(
        "a sentence far longer than the eighty columns of the status line, which must end in an \
         ellipsis",
        true,
    );
    let lines: Vec<String> = text_lines(&render(&app), 80);
    let status = &lines[lines.len() - 2];
    assert!(status.trim_end().ends_with('…'), "{status}");
}

fn text_lines(terminal: &Terminal<TestBackend>, width: usize) -> Vec<String> {
    let chars: Vec<char> = screen_text(terminal).chars().collect();
    chars.chunks(width).map(|c| c.iter().collect()).collect()
}

/// A session's pace: the rate sparkline beside docs/min where there is room (at 80 columns
/// the documents left are kept and the chart gives way), the readable share's where there is
/// room; ASCII under --ascii.
#[test]
fn the_summary_charts_the_pace_of_the_session() {
    let start = chrono::DateTime::from_timestamp(1_800_000_000, 0).expect("time");
    for (size, ascii) in [((80, 24), false), ((160, 48), false), ((160, 48), true)] {
        let mut app = screens::app(size, Extra::None, Focus::Board);
        app.display.ascii = ascii;
        app.pace = bootstrap_console::domain::pace::Pace::default();
        // The session's first minute only sets the baseline.
        app.pace.record(start, 1_000, 0.0);
        // A fleet that slowed to a stall, while the readable share grew: documents completed
        // in each 15 s between polls.
        let mut completed = 1_000;
        for (i, documents) in [15, 22, 30, 30, 8, 0, 0].into_iter().enumerate() {
            completed += documents;
            let at = start + chrono::Duration::seconds(60 + i as i64 * 15);
            app.pace.record(at, completed, i as f64 / 10.0);
        }
        let text = screen_text(&render(&app));
        let (rate_chart, share_chart) = if ascii {
            ("docs/min ,+##:__", ",,:-=")
        } else {
            ("docs/min ▂▆██▃▁▁", "▂▂▃▄▅")
        };
        if size.0 > 80 {
            assert!(text.contains(rate_chart), "{size:?}:\n{text}");
            assert!(text.contains(share_chart), "{size:?}:\n{text}");
        } else {
            assert!(text.contains("docs/min · 474 docs"), "{size:?}:\n{text}");
        }
    }
}

#[test]
fn the_health_view() {
    use bootstrap_console::domain::health::{Check, Finding, LedgerCheck};
    for size in SIZES {
        let mut app = screens::app(size, Extra::None, Focus::Board);
        app.view = View::Health;
        let finding = Finding {
            check: Check::ItemCount,
            tenant_id: "initech".into(),
            knowledge_space_id: Some(id(3)),
            bootstrap_id: id(3),
            problem: "snapshot captured with 3 documents, but 2 items frozen".into(),
            evidence: "checkpoint=rebuilding run_state=failed total_documents=3 \
                       completed_documents=1 items=2 succeeded=1 running=0"
                .into(),
            action: Check::ItemCount.action(),
        };
        app.health_view.checked = Some((
            app.now,
            Ok(LedgerCheck {
                findings: vec![finding],
                bootstraps_checked: 9,
                skipped: Vec::new(),
                database_time: None,
            }),
        ));
        snapshot("health", &app);
    }
}

/// Opens a dialog with `keys` on the board, answers its plans with `verdict`, then types
/// `typed` into the reason: the dialog as the operator sees it.
fn dialog_after(
    size: (u16, u16),
    keys: &str,
    plan: impl Fn(bootstrap_console::domain::actions::Action) -> Plan,
    typed: &str,
) -> App {
    let mut app = screens::app(size, Extra::None, Focus::Board);
    let mut effects = Vec::new();
    for c in keys.chars() {
        effects = update::update(&mut app, key(c));
    }
    answer(&mut app, &effects, &plan);
    for c in typed.chars() {
        update::update(&mut app, key(c));
    }
    app
}

/// Answers the plan request among `effects` with `plan` for each action.
fn answer(
    app: &mut App,
    effects: &[update::Effect],
    plan: impl Fn(bootstrap_console::domain::actions::Action) -> Plan,
) {
    let (dialog, round, actions) = match effects {
        [
            update::Effect::Plan {
                dialog,
                round,
                actions,
            },
        ] => (*dialog, *round, actions.clone()),
        other => panic!("expected a plan request: {other:?}"),
    };
    if let Overlay::Dialog(open) = &mut app.overlay {
        // A fixed request id, so the picture does not change from run to run.
        open.request = bootstrap_console::domain::actions::RequestId::from_uuid(id(42));
    }
    update::update(
        app,
        Event::Planned {
            dialog,
            round,
            plans: Ok(actions.into_iter().map(plan).collect()),
        },
    );
}

fn changes_plan(
    from: &str,
    to: &str,
) -> impl Fn(bootstrap_console::domain::actions::Action) -> Plan {
    let (from, to) = (from.to_string(), to.to_string());
    move |action| screens::plan_changing(action, &[("run_state", &from, &to)])
}

#[test]
fn the_cancel_dialog() {
    for size in SIZES {
        let app = dialog_after(
            size,
            "c",
            changes_plan("running", "canceled"),
            "maintenance",
        );
        snapshot("dialog_cancel", &app);
    }
}

#[test]
fn the_bulk_dialog_asks_for_the_count() {
    for size in SIZES {
        let app = dialog_after(size, "  r", changes_plan("failed", "queued"), "incident 7");
        snapshot("dialog_bulk", &app);
    }
}

#[test]
fn the_lease_dialog_asks_for_the_lease_id_and_a_forced_one_for_the_whole_id() {
    use bootstrap_console::domain::actions::Refusal;
    for size in SIZES {
        let lease = |action| Plan {
            evidence: vec!["held 2h10m by upload, past the orphan threshold of 15m".into()],
            ..changes_plan("held by its upload writer", "deleted")(action)
        };
        let app = dialog_after(size, "jx", lease, "writer pod is gone");
        snapshot("dialog_lease", &app);

        let young = |action| Plan {
            evidence: vec!["held 2m by upload, younger than the orphan threshold".into()],
            verdict: Err(Refusal::LeaseNotOrphan {
                lease: bootstrap_console::domain::ids::IdNames::EMPTY.shown(&id(6)),
                evidence: "held 2m by upload".into(),
            }),
            ..changes_plan("held", "deleted")(action)
        };
        let mut app = dialog_after(size, "jx", young, "writer is wedged");
        let effects = update::update(
            &mut app,
            Event::Key(crossterm::event::KeyEvent::new(
                crossterm::event::KeyCode::Char('f'),
                crossterm::event::KeyModifiers::CONTROL,
            )),
        );
        let forced = |action| Plan {
            forced: true,
            ..lease(action)
        };
        answer(&mut app, &effects, forced);
        snapshot("dialog_forced", &app);
    }
}

/// The header in each state that changes what the operator may trust or do.
#[test]
fn the_header_when_stale_read_only_not_migrated_or_reading_a_standby() {
    use bootstrap_console::topology::Access;
    for size in SIZES {
        let mut app = screens::app(size, Extra::None, Focus::Board);
        let at = app.now;
        app.status.polling.failing_since = at.checked_sub(std::time::Duration::from_secs(42));
        app.status.polling.polled_at = at.checked_sub(std::time::Duration::from_secs(45));
        app.status.polling.last_error = Some("connection refused".into());
        snapshot("header_stale", &app);

        let mut app = screens::app(size, Extra::None, Focus::Board);
        app.header.access = Access::ReadOnly {
            reason: "role observer lacks UPDATE on legacy_space_publication_bootstraps".into(),
        };
        snapshot("header_read_only", &app);

        let mut app = screens::app(size, Extra::None, Focus::Board);
        app.header.access = Access::ReadOnly {
            reason: "actions need `bootstrap-console migrate` first: this database lacks the \
                     console's audit table"
                .into(),
        };
        app.header.needs_migrate = true;
        snapshot("header_not_migrated", &app);

        let mut app = screens::app(size, Extra::None, Focus::Board);
        let now = screens::db_now();
        app.status.polling.replication = Some(bootstrap_console::store::replica::Replication {
            standby_now: now,
            replayed: Some(bootstrap_console::store::replica::Lsn(4096)),
            replayed_at: Some(now - chrono::Duration::seconds(31)),
            primary: Some(bootstrap_console::store::replica::Lsn(4096 + 2_100_000)),
            measured: true,
            complete_until: Some(now - chrono::Duration::seconds(31)),
        });
        snapshot("header_replica", &app);
    }
}

/// The help screen is the key table: every view key with its help, and every dialog key and
/// key that works anywhere with its hint.
#[test]
fn the_help_screen_lists_every_binding_of_the_key_table() {
    use bootstrap_console::tui::keys::{self, Scope};
    for size in SIZES {
        let mut app = screens::app(size, Extra::None, Focus::Board);
        app.overlay = Overlay::Help;
        let terminal = render(&app);
        let lines: Vec<String> = (0..size.1)
            .map(|y| {
                (0..size.0)
                    .map(|x| terminal.backend().buffer()[(x, y)].symbol().to_string())
                    .collect()
            })
            .collect();
        let shows = |text: &str| lines.iter().any(|line| line.contains(text));
        for binding in keys::bindings(Scope::View) {
            let entry = format!("{:<6}{}", binding.shown, binding.help);
            assert!(shows(&entry), "{size:?}: the help lacks {entry:?}");
        }
        for scope in [Scope::Dialog, Scope::Applying, Scope::Anywhere] {
            for binding in keys::bindings(scope) {
                let Some(hint) = binding.hint else { continue };
                let entry = format!("{} {hint}", binding.shown);
                assert!(shows(&entry), "{size:?}: the help lacks {entry:?}");
            }
        }
    }
}

/// A sentence longer than the dialog wraps under its own text: the inner margin is kept on
/// every row.
#[test]
fn wrapped_dialog_lines_keep_the_inner_margin() {
    let long = "held 2h10m by upload, past the orphan threshold of 15m; its writer last \
                heartbeat an hour ago from pod upload-7f9c4 on node eu-west-2b, which no \
                longer answers";
    let plan = |action| {
        let mut plan = screens::plan_changing(action, &[("run_state", "failed", "queued")]);
        plan.evidence = vec![long.to_string()];
        plan
    };
    let app = dialog_after((80, 24), "r", plan, "writer pod is gone");
    let screen = screens::render(&app);
    let rows: Vec<&str> = screen.lines().collect();
    let inside: Vec<&&str> = rows
        .iter()
        .filter(|r| r.trim_start().starts_with('│'))
        .collect();
    assert!(inside.iter().any(|r| r.contains("no")), "{rows:#?}");
    let wrapped = inside
        .iter()
        .filter(|r| r.contains("heartbeat") || r.contains("longer answers"))
        .count();
    assert!(wrapped >= 1, "the sentence wraps:\n{}", rows.join("\n"));
    for row in inside {
        let after = row.trim_start().trim_start_matches('│');
        assert!(after.starts_with(' '), "text against the border: {row}");
    }
}

/// A field's value too long for the line wraps under the value, not back at the margin.
#[test]
fn a_long_detail_field_wraps_under_its_value() {
    let mut detail = screens::detail();
    detail.bootstrap.idempotency_key = format!("legacy-space-{}", "k".repeat(120));
    let mut app = screens::app(
        (80, 24),
        Extra::Detail(Box::new(Some(detail))),
        Focus::Detail(id(1)),
    );
    app.view = View::Detail(id(1));
    let screen = screens::render(&app);
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows
        .iter()
        .position(|r| r.contains("idempotency key"))
        .expect("the field");
    let next = rows[at + 1];
    assert!(
        next.starts_with(&" ".repeat(23)) && next.contains("kkk"),
        "{}",
        rows.join("\n")
    );
}
