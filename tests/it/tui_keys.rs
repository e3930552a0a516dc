//! Key handling as state transitions, without a terminal: filter, quick filters, sort,
//! selection, views, dialogs and bulk actions.

use crate::common;

use std::time::Duration;

use bootstrap_console::domain::actions::{Action, Confirmation, Kind, Plan, Verdict};
use bootstrap_console::domain::board::{BoardRow, Quick, SortKey};
use bootstrap_console::domain::ids::IdNames;
use bootstrap_console::domain::model::RunState;
use bootstrap_console::domain::signals::{Attention, Group};
use bootstrap_console::poller::{self, Extra, Focus};
use bootstrap_console::tui::app::{Overlay, Stage, View};
use bootstrap_console::tui::update::{Effect, Event};
use common::screens::{self, Console, id};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn app() -> Console {
    Console::new((160, 48), Extra::None, Focus::Board)
}

fn press(console: &mut Console, code: KeyCode) -> Vec<Effect> {
    console.update(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn typed(console: &mut Console, text: &str) {
    for c in text.chars() {
        press(console, KeyCode::Char(c));
    }
}

/// A dialog for one space confirms with `y` in its second field.
fn confirm_one(console: &mut Console) {
    if open(console).field != bootstrap_console::tui::app::Field::Confirm {
        press(console, KeyCode::Tab);
    }
    typed(console, "y");
}

/// The rows the board shows, in order.
fn visible(console: &Console) -> Vec<BoardRow> {
    let view = console.app.board_view().expect("a view");
    view.window(0, view.len()).collect()
}

fn visible_tenants(console: &Console) -> Vec<String> {
    visible(console)
        .iter()
        .map(|r| r.tenant.to_string())
        .collect()
}

fn ok_plan(action: Action) -> Plan {
    screens::plan_changing(action, &[("run_state", "failed", "queued")])
}

/// The plan request among `effects`: (dialog, round, actions).
fn plan_request(effects: &[Effect]) -> (u64, u64, Vec<Action>) {
    match effects {
        [
            Effect::Plan {
                dialog,
                round,
                actions,
            },
        ] => (*dialog, *round, actions.clone()),
        _ => panic!("expected a plan request, got {effects:?}"),
    }
}

/// Answers the plan request among `effects` with one plan per action; returns the dialog.
fn answer(app: &mut Console, effects: &[Effect], plan: impl Fn(Action) -> Plan) -> u64 {
    let (dialog, round, actions) = plan_request(effects);
    app.update(Event::Planned {
        dialog,
        round,
        plans: Ok(actions.into_iter().map(plan).collect()),
    });
    dialog
}

/// Opens the action dialog with `key` and answers its plan request with plans that apply.
fn open_dialog(app: &mut Console, key: char) -> u64 {
    let effects = press(app, KeyCode::Char(key));
    answer(app, &effects, ok_plan)
}

#[test]
fn the_board_starts_in_attention_order_with_the_first_row_selected() {
    let app = app();
    let attention: Vec<Attention> = visible(&app).iter().map(|r| r.signals.attention).collect();
    // Every class the fixture has (no space is just reclaimed or being written), in order.
    let expected: Vec<Attention> = Attention::ALL
        .into_iter()
        .filter(|a| !matches!(a, Attention::Reclaiming | Attention::Writing))
        .collect();
    assert_eq!(attention, expected);
    assert_eq!(app.app.board.selected, Some(id(1)));
}

#[test]
fn moving_the_cursor_follows_the_keys_and_stops_at_the_ends() {
    let mut app = app();
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Down);
    assert_eq!(app.app.board.selected, Some(id(3)));
    press(&mut app, KeyCode::Char('G'));
    assert_eq!(app.app.board.selected, Some(id(9)));
    press(&mut app, KeyCode::Down);
    assert_eq!(app.app.board.selected, Some(id(9)), "stays on the last row");
    press(&mut app, KeyCode::Char('g'));
    assert_eq!(app.app.board.selected, Some(id(1)));
    press(&mut app, KeyCode::Up);
    assert_eq!(
        app.app.board.selected,
        Some(id(1)),
        "stays on the first row"
    );
    press(&mut app, KeyCode::PageDown);
    assert_eq!(app.app.board.selected, Some(id(9)));
}

#[test]
fn the_selection_stays_on_its_space_when_a_new_snapshot_reorders_rows() {
    let mut app = app();
    press(&mut app, KeyCode::Char('G'));
    assert_eq!(app.app.board.selected, Some(id(9)));
    press(&mut app, KeyCode::Char('s')); // sort by tenant: the row moves
    assert_eq!(app.app.board.query.sort, SortKey::Tenant);
    assert_eq!(app.app.board.selected, Some(id(9)));
    let tenants = visible_tenants(&app);
    let mut sorted = tenants.clone();
    sorted.sort();
    assert_eq!(tenants, sorted);
    press(&mut app, KeyCode::Char('S'));
    assert!(app.app.board.query.reverse);
    assert_eq!(visible_tenants(&app).first(), sorted.last());
}

#[test]
fn typing_a_filter_narrows_the_board_and_esc_clears_it() {
    let mut app = app();
    press(&mut app, KeyCode::Char('/'));
    assert!(app.app.board.editing);
    typed(&mut app, "acme");
    assert_eq!(visible_tenants(&app), vec!["acme", "acme"]);
    press(&mut app, KeyCode::Enter);
    assert!(!app.app.board.editing);
    // Keys act again once the filter is closed.
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.app.board.cursor, 1);
    press(&mut app, KeyCode::Esc);
    assert_eq!(visible(&app).len(), 9, "Esc on the board clears the filter");

    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "compile_time");
    assert_eq!(visible(&app).len(), 1, "error codes are searchable");
    press(&mut app, KeyCode::Backspace);
    press(&mut app, KeyCode::Esc);
    assert!(app.app.board.query.text.is_empty() && visible(&app).len() == 9);
}

#[test]
fn quick_filters_cycle_through_attention_classes() {
    let mut app = app();
    press(&mut app, KeyCode::Char('f'));
    assert_eq!(
        app.app.board.query.quick,
        Quick::Group(Group::NeedsOperator)
    );
    assert_eq!(visible(&app).len(), 4, "failed, blocked, expired, stuck");
    press(&mut app, KeyCode::Char('f'));
    assert_eq!(app.app.board.query.quick, Quick::Group(Group::Watch));
    assert_eq!(visible(&app).len(), 1, "late");
    press(&mut app, KeyCode::Char('f'));
    assert_eq!(app.app.board.query.quick, Quick::Class(Attention::Failed));
    assert_eq!(
        visible(&app).iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![id(1)]
    );
    for _ in 0..3 {
        press(&mut app, KeyCode::Char('F'));
    }
    assert_eq!(app.app.board.query.quick, Quick::All);
}

#[test]
fn enter_opens_the_detail_and_esc_returns_with_the_poller_told_each_time() {
    let mut app = app();
    press(&mut app, KeyCode::Char('j'));
    let effects = press(&mut app, KeyCode::Enter);
    assert_eq!(app.app.view, View::Detail(id(2)));
    assert_eq!(
        effects,
        vec![Effect::Poller(poller::Instruction::Focus(Focus::Detail(
            id(2)
        )))]
    );
    let effects = press(&mut app, KeyCode::Esc);
    assert_eq!(app.app.view, View::Board);
    assert_eq!(
        effects,
        vec![Effect::Poller(poller::Instruction::Focus(Focus::Board))]
    );
}

#[test]
fn tab_cycles_board_tenants_leases_audit_and_health() {
    let mut app = app();
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.app.view, View::Tenants);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.app.view, View::Leases);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.app.view, View::Audit);
    // The first visit to Health runs the ledger check (never the polls).
    let effects = press(&mut app, KeyCode::Tab);
    assert_eq!(app.app.view, View::Health);
    assert_eq!(
        effects,
        vec![
            Effect::Poller(poller::Instruction::Focus(Focus::Board)),
            Effect::CheckHealth
        ]
    );
    let effects = press(&mut app, KeyCode::Tab);
    assert_eq!(app.app.view, View::Board);
    assert_eq!(
        effects,
        vec![Effect::Poller(poller::Instruction::Focus(Focus::Board))]
    );
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.app.view, View::Health);
    // Shift-Tab as crossterm reports it: BackTab with SHIFT set.
    app.update(Event::Key(KeyEvent::new(
        KeyCode::BackTab,
        KeyModifiers::SHIFT,
    )));
    assert_eq!(app.app.view, View::Audit);
}

#[test]
fn the_health_view_checks_once_on_its_own_and_again_on_ctrl_r() {
    use bootstrap_console::domain::health::LedgerCheck;
    let mut app = app();
    app.app.view = View::Audit;
    assert_eq!(
        press(&mut app, KeyCode::Tab),
        vec![
            Effect::Poller(poller::Instruction::Focus(Focus::Board)),
            Effect::CheckHealth
        ]
    );
    // While it runs, Ctrl-R does not start a second one.
    let ctrl_r = KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL);
    assert_eq!(
        app.update(Event::Key(ctrl_r)),
        vec![Effect::Poller(poller::Instruction::PollNow)]
    );
    app.update(Event::HealthProgress(500, 1000));
    assert_eq!(app.app.health_view.running, Some((500, 1000)));
    app.update(Event::HealthChecked(Ok(LedgerCheck::default())));
    assert_eq!(app.app.health_view.running, None);
    // Back on the view later: the last result is shown, not checked again by itself.
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        press(&mut app, KeyCode::BackTab),
        vec![Effect::Poller(poller::Instruction::Focus(Focus::Board))]
    );
    assert_eq!(
        app.update(Event::Key(ctrl_r)),
        vec![
            Effect::Poller(poller::Instruction::PollNow),
            Effect::CheckHealth
        ]
    );
}

#[test]
fn pause_interval_refresh_copy_and_quit_become_effects() {
    let mut app = app();
    assert_eq!(
        press(&mut app, KeyCode::Char('p')),
        vec![Effect::Poller(poller::Instruction::Pause(true))]
    );
    assert!(app.app.status.polling.paused);
    assert_eq!(
        press(&mut app, KeyCode::Char('p')),
        vec![Effect::Poller(poller::Instruction::Pause(false))]
    );
    assert_eq!(
        press(&mut app, KeyCode::Char('+')),
        vec![Effect::Poller(poller::Instruction::Interval(
            Duration::from_secs(1)
        ))]
    );
    assert_eq!(
        press(&mut app, KeyCode::Char('-')),
        vec![Effect::Poller(poller::Instruction::Interval(
            Duration::from_secs(2)
        ))]
    );
    let copied = press(&mut app, KeyCode::Char('y'));
    assert_eq!(copied, vec![Effect::Copy(id(1).to_string())]);
    press(&mut app, KeyCode::Char('q'));
    assert!(app.app.should_quit);
}

#[test]
fn retry_needs_a_plan_and_a_reason_before_anything_is_applied() {
    let mut app = app();
    let dialog = open_dialog(&mut app, 'r');
    let Overlay::Dialog(d) = &app.app.overlay else {
        panic!("dialog open")
    };
    assert_eq!(d.stage, Stage::Editing);
    let [action] = d.actions.as_slice() else {
        panic!("one action: {:?}", d.actions)
    };
    assert_eq!(action.kind(), Kind::Retry);
    let seen = action.seen_bootstrap().expect("a bootstrap");
    assert_eq!(
        (seen.id, seen.row_version, seen.run_state),
        (id(1), 7, RunState::Failed),
        "the action carries what the operator saw"
    );
    let planned = d.actions.clone();

    assert!(
        press(&mut app, KeyCode::Enter).is_empty(),
        "no reason, nothing applied"
    );
    typed(&mut app, "parser fixed");
    assert!(
        press(&mut app, KeyCode::Enter).is_empty(),
        "one space confirms with y: Enter moves to it"
    );
    assert_eq!(
        open(&app).field,
        bootstrap_console::tui::app::Field::Confirm
    );
    typed(&mut app, "y");
    let effects = press(&mut app, KeyCode::Enter);
    assert_eq!(
        effects,
        vec![Effect::Apply {
            dialog,
            actions: planned,
            reason: "parser fixed".into(),
            deadline: app.app.apply_deadline,
        }]
    );
    assert_eq!(
        press(&mut app, KeyCode::Esc),
        vec![Effect::StopWaiting { dialog }],
        "Esc while applying stops waiting; the dialog stays for the answer"
    );
    assert!(matches!(app.app.overlay, Overlay::Dialog(_)));
    let effects = app.update(Event::Applied {
        dialog,
        results: vec![(Verdict::Applied, "space 01010101: retry applied".into())],
        replica: None,
    });
    assert_eq!(
        effects,
        vec![Effect::Poller(poller::Instruction::PollNow)],
        "the board refreshes at once"
    );
    let Overlay::Dialog(d) = &app.app.overlay else {
        panic!("dialog still open")
    };
    assert!(matches!(d.stage, Stage::Done(_)));
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.app.overlay, Overlay::None);
}

#[test]
fn esc_cancels_a_dialog_and_nothing_is_applied() {
    let mut app = app();
    open_dialog(&mut app, 'c');
    typed(&mut app, "oops");
    assert!(press(&mut app, KeyCode::Esc).is_empty());
    assert_eq!(app.app.overlay, Overlay::None);
}

#[test]
fn a_refused_plan_cannot_be_applied() {
    let mut app = app();
    let effects = press(&mut app, KeyCode::Char('r'));
    answer(&mut app, &effects, |action| Plan {
        verdict: Err(bootstrap_console::domain::actions::Refusal::MissingReason),
        ..ok_plan(action)
    });
    typed(&mut app, "try anyway");
    assert!(press(&mut app, KeyCode::Enter).is_empty());
}

#[test]
fn removing_a_lease_requires_typing_the_first_eight_characters_of_its_id() {
    let mut app = app();
    press(&mut app, KeyCode::Char('j')); // the blocked space holds a lease
    let dialog = open_dialog(&mut app, 'x');
    let lease = screens::lease_of(2);
    typed(&mut app, "writer pod is gone");
    assert!(
        press(&mut app, KeyCode::Enter).is_empty(),
        "not confirmed yet"
    );
    let Overlay::Dialog(d) = &app.app.overlay else {
        panic!("dialog")
    };
    assert_eq!(
        d.field,
        bootstrap_console::tui::app::Field::Confirm,
        "Enter moves to the confirmation"
    );
    typed(&mut app, "6666666");
    assert!(
        press(&mut app, KeyCode::Enter).is_empty(),
        "seven characters are not enough"
    );
    typed(&mut app, "6");
    let effects = press(&mut app, KeyCode::Enter);
    let [
        Effect::Apply {
            dialog: applied,
            actions,
            reason,
            ..
        },
    ] = effects.as_slice()
    else {
        panic!("{effects:?}")
    };
    assert_eq!((*applied, reason.as_str()), (dialog, "writer pod is gone"));
    let Action::Lease(removal) = &actions[0] else {
        panic!("a lease removal: {actions:?}")
    };
    assert_eq!(
        (removal.seen(), removal.forced()),
        (&lease.identity(), false)
    );
}

#[test]
fn x_on_a_space_without_a_lease_explains_instead_of_opening_a_dialog() {
    let mut app = app();
    assert!(press(&mut app, KeyCode::Char('x')).is_empty());
    assert_eq!(app.app.overlay, Overlay::None);
    assert!(
        app.app
            .message
            .as_ref()
            .is_some_and(|m| m.error && m.text.contains("no mutation lease"))
    );
}

#[test]
fn bulk_retry_of_marked_spaces_requires_typing_the_count() {
    let mut app = app();
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(app.app.board.marked.len(), 2);
    let dialog = open_dialog(&mut app, 'r');
    let Overlay::Dialog(d) = &app.app.overlay else {
        panic!("dialog")
    };
    assert!(d.is_bulk());
    assert_eq!(d.confirmation(), Confirmation::Count(2));
    typed(&mut app, "rollout incident 7");
    press(&mut app, KeyCode::Tab);
    typed(&mut app, "3");
    assert!(
        press(&mut app, KeyCode::Enter).is_empty(),
        "the wrong count"
    );
    press(&mut app, KeyCode::Backspace);
    typed(&mut app, "2");
    let actions = apply_of(&mut app, dialog);
    assert_eq!(actions.len(), 2);
}

#[test]
fn a_plan_applied_before_is_neither_counted_nor_applied_again_as_the_cli_does() {
    let mut app = app();
    for _ in 0..3 {
        press(&mut app, KeyCode::Char(' '));
    }
    let effects = press(&mut app, KeyCode::Char('r'));
    let first = std::cell::Cell::new(true);
    let dialog = answer(&mut app, &effects, |action| {
        let mut plan = ok_plan(action);
        if first.replace(false) {
            plan.applied_before = Some(41);
        }
        plan
    });
    let Overlay::Dialog(d) = &app.app.overlay else {
        panic!("dialog")
    };
    let planned = bootstrap_console::domain::actions::Planned {
        plans: d.plans.clone(),
    };
    assert_eq!(d.confirmation(), Confirmation::Count(2));
    assert_eq!(d.confirmation(), planned.confirmation(app.app.names()));
    typed(&mut app, "rollout incident 7");
    press(&mut app, KeyCode::Tab);
    typed(&mut app, "2");
    let actions = apply_of(&mut app, dialog);
    assert_eq!(actions.len(), 2, "the one applied before is not sent again");
}

/// Presses Enter on `dialog`, which must ask for exactly one apply of it: its actions.
fn apply_of(app: &mut Console, dialog: u64) -> Vec<Action> {
    let effects = press(app, KeyCode::Enter);
    let [
        Effect::Apply {
            dialog: applied,
            actions,
            ..
        },
    ] = effects.as_slice()
    else {
        panic!("{effects:?}")
    };
    assert_eq!(*applied, dialog);
    actions.clone()
}

#[test]
fn marking_everything_the_filter_shows_and_the_bulk_cap() {
    let mut app = app();
    press(&mut app, KeyCode::Char('*'));
    assert_eq!(app.app.board.marked.len(), 9);
    press(&mut app, KeyCode::Char('*'));
    assert!(app.app.board.marked.is_empty(), "* again unmarks");
    app.app.bulk_cap = 3;
    press(&mut app, KeyCode::Char('*'));
    assert!(
        app.app.board.marked.is_empty(),
        "more than the cap: nothing is marked"
    );
    assert!(
        app.app
            .message
            .as_ref()
            .is_some_and(|m| m.error && m.text.contains("bulk cap of 3"))
    );
    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "acme");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('*'));
    assert_eq!(app.app.board.marked.len(), 2, "only what the filter shows");
    press(&mut app, KeyCode::Char('u'));
    assert!(app.app.board.marked.is_empty());
}

#[test]
fn marks_beyond_the_bulk_cap_open_a_dialog_that_only_explains() {
    let mut app = app();
    press(&mut app, KeyCode::Char('*'));
    app.app.bulk_cap = 3;
    let effects = press(&mut app, KeyCode::Char('c'));
    assert!(effects.is_empty(), "over the cap: nothing is even planned");
    let Overlay::Dialog(d) = &app.app.overlay else {
        panic!("dialog")
    };
    assert!(
        d.blocked
            .as_ref()
            .is_some_and(|b| b.contains("bulk cap of 3"))
    );
    typed(&mut app, "reason");
    assert!(press(&mut app, KeyCode::Enter).is_empty());
}

#[test]
fn enter_on_a_tenant_opens_the_board_filtered_to_it() {
    let mut app = app();
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.app.view, View::Tenants);
    let tenants = app.app.fleet().expect("fleet").tenants.clone();
    assert_eq!(
        tenants.first().map(|t| t.worst()),
        Some(Some(Attention::Failed)),
        "attention first: the tenant with a failed space leads"
    );
    let acme = tenants
        .iter()
        .position(|t| &*t.tenant == "acme")
        .expect("acme");
    for _ in 0..acme {
        press(&mut app, KeyCode::Down);
    }
    let effects = press(&mut app, KeyCode::Enter);
    assert!(effects.contains(&Effect::Poller(poller::Instruction::Focus(Focus::Board))));
    assert_eq!(app.app.view, View::Board);
    assert_eq!(visible_tenants(&app), vec!["acme", "acme"]);
    press(&mut app, KeyCode::Esc);
    assert_eq!(visible(&app).len(), 9, "Esc clears the tenant filter");
}

#[test]
fn help_opens_with_question_mark_and_any_key_closes_it() {
    let mut app = app();
    press(&mut app, KeyCode::Char('?'));
    assert_eq!(app.app.overlay, Overlay::Help);
    assert!(
        press(&mut app, KeyCode::Char('r')).is_empty(),
        "keys do not leak through help"
    );
    assert_eq!(app.app.overlay, Overlay::None);
}

#[test]
fn rows_that_change_between_snapshots_are_highlighted() {
    let mut app = app();
    let mut changes = screens::changes(screens::db_now() + chrono::Duration::seconds(1), 0);
    let queued = changes
        .upserts
        .iter_mut()
        .find(|r| r.id == id(7))
        .expect("queued row");
    queued.run_state = "canceled".into();
    app.fleet.apply(changes);
    app.deliver();
    let row = |app: &Console, n: u8| app.app.row(&id(n)).expect("row").clone();
    assert!(app.app.recently_changed(&row(&app, 7)));
    assert!(!app.app.recently_changed(&row(&app, 6)));
    let later = app.app.now + Duration::from_secs(10);
    app.update(Event::Tick(later));
    assert!(
        !app.app.recently_changed(&row(&app, 7)),
        "the highlight fades"
    );
}

fn ctrl(console: &mut Console, c: char) -> Vec<Effect> {
    console.update(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    )))
}

fn open(console: &Console) -> &bootstrap_console::tui::app::Dialog {
    let Overlay::Dialog(d) = &console.app.overlay else {
        panic!("a dialog is open")
    };
    d
}

#[test]
fn changing_the_filter_clears_marks_and_says_so() {
    let mut app = app();
    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "acme");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(app.app.board.marked.len(), 2);
    press(&mut app, KeyCode::Esc);
    assert!(app.app.board.marked.is_empty(), "marks no longer visible");
    assert!(
        app.app
            .message
            .as_ref()
            .is_some_and(|m| m.text.contains("cleared 2 mark(s)")),
        "{:?}",
        app.app.message
    );
    // The selection, not hidden marks, is what an action then targets.
    let effects = press(&mut app, KeyCode::Char('c'));
    let [Effect::Plan { actions, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(actions.len(), 1);
    assert!(!open(&app).is_bulk());

    let mut app = self::app();
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('f'));
    assert!(app.app.board.marked.is_empty(), "a quick filter too");
}

#[test]
fn a_read_only_console_refuses_actions_with_a_sentence() {
    let mut app = app();
    app.app.header.access = bootstrap_console::topology::Access::ReadOnly {
        reason: "--read-only".into(),
    };
    for key in ['r', 'c', 'x'] {
        assert!(press(&mut app, KeyCode::Char(key)).is_empty());
        assert_eq!(app.app.overlay, Overlay::None);
        assert!(
            app.app
                .message
                .as_ref()
                .is_some_and(|m| m.error && m.text.contains("not possible: --read-only")),
            "{:?}",
            app.app.message
        );
    }
}

#[test]
fn an_open_dialog_plans_again_every_few_seconds_and_keeps_the_reason() {
    let mut app = app();
    let dialog = open_dialog(&mut app, 'r');
    typed(&mut app, "parser fixed");
    let start = app.app.now;
    assert!(
        app.update(Event::Tick(start + Duration::from_secs(1)))
            .is_empty(),
        "not yet due"
    );
    let timed = app.update(Event::Tick(start + Duration::from_secs(3)));
    assert_eq!(plan_request(&timed).0, dialog);
    assert!(
        app.update(Event::Tick(start + Duration::from_secs(4)))
            .is_empty(),
        "one request at a time"
    );
    assert_eq!(open(&app).reason, "parser fixed");
    // Ctrl-R asks at once; the answer to the older request is then dropped.
    let asked = ctrl(&mut app, 'r');
    let refused = |action| Plan {
        verdict: Err(bootstrap_console::domain::actions::Refusal::MissingReason),
        ..ok_plan(action)
    };
    answer(&mut app, &timed, refused);
    assert!(
        open(&app).plans[0].verdict.is_ok(),
        "the stale answer was dropped"
    );
    answer(&mut app, &asked, ok_plan);
    assert!(open(&app).plans[0].verdict.is_ok());
    assert_eq!(open(&app).reason, "parser fixed");
    // A re-plan that fails keeps the last plan and the reason, and says so.
    let (dialog, round, _) = plan_request(&ctrl(&mut app, 'r'));
    app.update(Event::Planned {
        dialog,
        round,
        plans: Err("connection reset".into()),
    });
    let d = open(&app);
    assert_eq!(d.stage, Stage::Editing);
    assert_eq!(d.replan_error.as_deref(), Some("connection reset"));
    assert!(d.plans[0].verdict.is_ok() && d.reason == "parser fixed");
}

#[test]
fn a_changed_decision_must_be_taken_with_ctrl_y_before_enter_applies() {
    use bootstrap_console::domain::actions::Refusal;
    let mut app = app();
    let effects = press(&mut app, KeyCode::Char('r'));
    let (_, _, actions) = plan_request(&effects);
    let Some(seen_before) = actions[0].seen_bootstrap().cloned() else {
        panic!("a bootstrap action")
    };
    let ended = screens::db_now();
    let mut now = seen_before.clone();
    now.completed_at = Some(ended);
    now.row_version += 5;
    answer(&mut app, &effects, |action| Plan {
        now: Some(now.clone()),
        meanwhile: Some("retried by someone else and failed again".into()),
        verdict: Err(Refusal::NewEpisode {
            space: IdNames::EMPTY.shown(&seen_before.space),
            now: RunState::Failed,
            ended_at: Some(ended),
        }),
        ..ok_plan(action)
    });
    typed(&mut app, "parser fixed");
    assert!(press(&mut app, KeyCode::Enter).is_empty(), "Enter waits");
    assert!(
        open(&app)
            .not_ready()
            .is_some_and(|why| why.contains("Ctrl-Y")),
        "{:?}",
        open(&app).not_ready()
    );
    let effects = ctrl(&mut app, 'y');
    assert_eq!(plan_request(&effects).2[0].seen_bootstrap(), Some(&now));
    answer(&mut app, &effects, ok_plan);
    confirm_one(&mut app);
    let effects = press(&mut app, KeyCode::Enter);
    let [
        Effect::Apply {
            actions, reason, ..
        },
    ] = effects.as_slice()
    else {
        panic!("{effects:?}")
    };
    assert_eq!(reason, "parser fixed", "the typed reason survived");
    assert_eq!(actions[0].seen_bootstrap(), Some(&now));
}

#[test]
fn forcing_a_young_lease_asks_for_the_whole_lease_id() {
    use bootstrap_console::domain::actions::Refusal;
    let mut app = app();
    press(&mut app, KeyCode::Char('j'));
    let effects = press(&mut app, KeyCode::Char('x'));
    let lease = screens::lease_of(2);
    let refused = |action| Plan {
        evidence: vec!["held 2m by upload; orphan suspect after 15m".into()],
        verdict: Err(Refusal::LeaseNotOrphan {
            lease: IdNames::EMPTY.shown(&lease.id),
            evidence: "held 2m by upload".into(),
        }),
        ..ok_plan(action)
    };
    answer(&mut app, &effects, refused);
    typed(&mut app, "writer is wedged");
    press(&mut app, KeyCode::Tab);
    typed(&mut app, &IdNames::EMPTY.short(&lease.id));
    assert!(
        press(&mut app, KeyCode::Enter).is_empty(),
        "refused unless forced"
    );
    assert!(
        open(&app)
            .not_ready()
            .is_some_and(|why| why.contains("Ctrl-F"))
    );
    let effects = ctrl(&mut app, 'f');
    let Action::Lease(removal) = &plan_request(&effects).2[0] else {
        panic!("a lease removal")
    };
    assert_eq!(
        (removal.seen(), removal.forced()),
        (&lease.identity(), true)
    );
    assert_eq!(
        open(&app).confirmation(),
        Confirmation::WholeLeaseId(lease.id)
    );
    assert!(
        ctrl(&mut app, 'f').is_empty(),
        "forced once is enough; Ctrl-F again keeps what was typed"
    );
    answer(&mut app, &effects, |action| Plan {
        forced: true,
        ..ok_plan(action)
    });
    typed(&mut app, &IdNames::EMPTY.short(&lease.id));
    assert!(
        press(&mut app, KeyCode::Enter).is_empty(),
        "eight characters no longer confirm a forced removal"
    );
    ctrl(&mut app, 'u');
    typed(&mut app, &lease.id.to_string());
    let effects = press(&mut app, KeyCode::Enter);
    let [
        Effect::Apply {
            actions, reason, ..
        },
    ] = effects.as_slice()
    else {
        panic!("{effects:?}")
    };
    assert_eq!(reason, "writer is wedged");
    assert!(actions[0].is_forced());
}

#[test]
fn ctrl_c_while_an_action_is_applied_asks_once_before_quitting() {
    let mut app = app();
    open_dialog(&mut app, 'r');
    typed(&mut app, "parser fixed");
    confirm_one(&mut app);
    assert!(matches!(
        press(&mut app, KeyCode::Enter).as_slice(),
        [Effect::Apply { .. }]
    ));
    ctrl(&mut app, 'c');
    assert!(
        !app.app.should_quit,
        "the answer would be lost: asked first"
    );
    assert!(
        app.app
            .message
            .as_ref()
            .is_some_and(|m| m.text.contains("Ctrl-C again stops and quits")),
        "{:?}",
        app.app.message
    );
    ctrl(&mut app, 'c');
    assert!(app.app.should_quit);

    let mut idle = self::app();
    ctrl(&mut idle, 'c');
    assert!(
        idle.app.should_quit,
        "nothing in flight: Ctrl-C quits at once"
    );
}

#[test]
fn detail_scrolling_stops_at_the_last_line() {
    use bootstrap_console::tui::view::detail::max_scroll;
    let mut app = Console::new(
        (80, 24),
        Extra::Detail(Box::new(Some(screens::detail()))),
        Focus::Detail(id(1)),
    );
    app.app.view = View::Detail(id(1));
    let last = max_scroll(&app.app, &id(1));
    assert!(last > 0, "the fixture's detail is longer than 80×24 shows");
    press(&mut app, KeyCode::Char('G'));
    assert_eq!(
        app.app.detail.scroll, last,
        "G shows the last page, not a blank one"
    );
    for _ in 0..5 {
        press(&mut app, KeyCode::PageDown);
    }
    assert_eq!(app.app.detail.scroll, last, "PgDn stops at the end");
    press(&mut app, KeyCode::PageUp);
    assert!(app.app.detail.scroll < last, "one PgUp comes back at once");
    press(&mut app, KeyCode::Char('g'));
    assert_eq!(app.app.detail.scroll, 0);
}

/// The fixture as the next poll delivers it, with space `n` failed long ago: the most urgent.
fn deliver_with_new_failure(app: &mut Console, n: u8) {
    let now = screens::db_now() + chrono::Duration::seconds(1);
    let mut changes = screens::changes(now, 0);
    let row = changes
        .upserts
        .iter_mut()
        .find(|r| r.id == id(n))
        .expect("row");
    row.run_state = "failed".into();
    row.last_error_code = Some("parser_crash".into());
    row.worker_id = None;
    row.has_lease_token = false;
    row.lease_expires_at = None;
    row.heartbeat_at = None;
    row.updated_at = now - chrono::Duration::days(2);
    row.completed_at = Some(now - chrono::Duration::days(2));
    app.fleet.apply(changes);
    app.deliver();
}

#[test]
fn the_selection_keeps_the_most_urgent_row_until_the_operator_moves() {
    let mut app = app();
    assert_eq!(app.app.board.selected, Some(id(1)), "the most urgent row");
    deliver_with_new_failure(&mut app, 7);
    assert_eq!(
        app.app.board.selected,
        Some(id(7)),
        "a new, older failure took the top: the selection is there"
    );
    // Moving: the selection follows the chosen space from then on.
    press(&mut app, KeyCode::Char('j'));
    let chosen = app.app.board.selected.expect("a selection");
    deliver_with_new_failure(&mut app, 6);
    assert_eq!(
        app.app.board.selected,
        Some(chosen),
        "it stays on the chosen space"
    );
    // `g` follows the top again.
    press(&mut app, KeyCode::Char('g'));
    assert_eq!(app.app.board.selected, visible(&app).first().map(|r| r.id));
    deliver_with_new_failure(&mut app, 5);
    assert_eq!(app.app.board.selected, Some(visible(&app)[0].id));
}

#[test]
fn following_the_top_never_changes_an_open_dialogs_target() {
    let mut app = app();
    let effects = press(&mut app, KeyCode::Char('c'));
    let (_, _, before) = plan_request(&effects);
    deliver_with_new_failure(&mut app, 7);
    assert_eq!(app.app.board.selected, Some(id(7)));
    assert_eq!(
        open(&app).actions,
        before,
        "the dialog still acts on what it showed"
    );
}

/// A run's verdict on a chain whose last sound record is at position `seq`.
fn chain_run(records: u64, seq: i64, complete: bool) -> Event {
    use bootstrap_console::domain::audit_chain::{ChainHead, Verification};
    Event::ChainVerified(Ok(Verification {
        records,
        verified: Some(ChainHead {
            id: seq,
            seq,
            hash: vec![seq as u8; 32],
        }),
        broken: None,
        complete,
        unprotected: Vec::new(),
        expected_found: true,
        end_checked: true,
    }))
}

/// Where the run an effect asks for starts (`None`: the chain's start), and what it expects.
fn chain_start(effects: &[Effect]) -> Option<(Option<i64>, Option<String>)> {
    effects.iter().find_map(|effect| match effect {
        Effect::VerifyChain { start } => Some((
            start.from.as_ref().map(|from| from.seq),
            start.expect_head.clone(),
        )),
        _ => None,
    })
}

#[test]
fn the_audit_view_verifies_a_long_chain_in_runs_then_only_what_was_added() {
    use bootstrap_console::tui::app::ChainState;
    let mut console = app();
    let mut effects = Vec::new();
    for _ in 0..3 {
        effects = press(&mut console, KeyCode::Tab);
    }
    assert_eq!(console.app.view, View::Audit);
    assert_eq!(chain_start(&effects), Some((None, None)), "{effects:?}");
    // Opened again while a run is under way: no second run.
    press(&mut console, KeyCode::BackTab);
    assert_eq!(chain_start(&press(&mut console, KeyCode::Tab)), None);

    // The first run stops at its budget: the pass goes on from there after a pause.
    let start = console.app.now;
    console.update(chain_run(2000, 2000, false));
    assert!(console.app.chain.checked.is_none(), "no verdict yet");
    let soon = start + ChainState::PAUSE / 2;
    assert_eq!(chain_start(&console.update(Event::Tick(soon))), None);
    let later = start + ChainState::PAUSE;
    assert_eq!(
        chain_start(&console.update(Event::Tick(later))),
        Some((Some(2000), None))
    );
    console.update(chain_run(500, 2500, true));
    let Some((_, Ok(verdict))) = &console.app.chain.checked else {
        panic!("a verdict")
    };
    assert_eq!(verdict.records, 2500, "both runs counted");

    // Nothing more until it is due; then only the records added since the head.
    let checked = later;
    assert_eq!(
        chain_start(&console.update(Event::Tick(checked + ChainState::EVERY / 2))),
        None
    );
    assert_eq!(
        chain_start(&console.update(Event::Tick(checked + ChainState::EVERY * 2))),
        Some((Some(2500), None))
    );
    console.update(chain_run(3, 2503, true));
    let Some((_, Ok(verdict))) = &console.app.chain.checked else {
        panic!("a verdict")
    };
    assert_eq!(verdict.records, 2503);

    // Ctrl-R reads it all again, expecting the head verified last.
    let effects = console.update(Event::Key(KeyEvent::new(
        KeyCode::Char('r'),
        KeyModifiers::CONTROL,
    )));
    let (from, expected) = chain_start(&effects).expect("a run");
    assert_eq!(from, None);
    assert_eq!(expected, Some(format!("{:02x}", 2503 % 256).repeat(32)));

    // Away from the audit view, nothing runs.
    console.update(chain_run(2503, 2503, true));
    press(&mut console, KeyCode::Tab);
    assert_eq!(
        chain_start(&console.update(Event::Tick(checked + ChainState::EVERY * 10))),
        None
    );
}

#[test]
fn a_broken_audit_chain_is_read_from_its_start_again_never_from_its_head() {
    use bootstrap_console::domain::audit_chain::{Break, Verification};
    use bootstrap_console::tui::app::ChainState;
    let mut console = app();
    for _ in 0..3 {
        press(&mut console, KeyCode::Tab);
    }
    console.update(chain_run(10, 10, true));
    let ctrl_r = Event::Key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL));
    assert_eq!(
        chain_start(&console.update(ctrl_r)).map(|(from, _)| from),
        Some(None)
    );
    console.update(Event::ChainVerified(Ok(Verification {
        records: 4,
        verified: None,
        broken: Some(Break::Changed { id: 5, seq: 5 }),
        complete: false,
        unprotected: Vec::new(),
        expected_found: false,
        end_checked: true,
    })));
    let later = console.app.now + ChainState::EVERY * 2;
    let (from, expected) = chain_start(&console.update(Event::Tick(later))).expect("a pass");
    assert_eq!(from, None, "from the start");
    assert_eq!(
        expected,
        Some(format!("{:02x}", 10).repeat(32)),
        "still expecting the head"
    );
}

#[test]
fn the_audit_view_reads_the_whole_chain_again_every_ten_minutes() {
    use bootstrap_console::tui::app::ChainState;
    let mut console = app();
    for _ in 0..3 {
        press(&mut console, KeyCode::Tab);
    }
    let start = console.app.now;
    console.update(chain_run(10, 10, true));
    let mut at = start;
    let mut from_start = 0;
    // Every minute a pass; within ten minutes they read only what was added.
    for _ in 0..12 {
        at += ChainState::EVERY;
        let (from, _) = chain_start(&console.update(Event::Tick(at))).expect("a pass");
        if from.is_none() {
            from_start += 1;
        }
        console.update(chain_run(0, 10, true));
    }
    assert_eq!(from_start, 1, "one pass of the twelve read it all");
}

#[test]
fn ctrl_r_during_a_run_reads_the_whole_chain_once_that_run_has_ended() {
    let mut console = app();
    for _ in 0..3 {
        press(&mut console, KeyCode::Tab);
    }
    console.update(chain_run(10, 10, true));
    // Opened again: a run over what was added, and Ctrl-R while it is under way.
    press(&mut console, KeyCode::BackTab);
    let (from, _) = chain_start(&press(&mut console, KeyCode::Tab)).expect("a run");
    assert_eq!(from, Some(10));
    let ctrl_r = Event::Key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL));
    assert_eq!(
        chain_start(&console.update(ctrl_r)),
        None,
        "one run at a time"
    );
    console.update(chain_run(0, 10, true));
    let now = console.app.now;
    let (from, expected) = chain_start(&console.update(Event::Tick(now))).expect("the whole");
    assert_eq!(from, None);
    assert_eq!(expected, Some(format!("{:02x}", 10).repeat(32)));
}

#[test]
fn behind_the_too_small_screen_keys_act_on_nothing_and_q_quits() {
    let mut app = app();
    app.update(Event::Resize(40, 10));
    assert!(press(&mut app, KeyCode::Char('r')).is_empty());
    assert_eq!(app.app.overlay, Overlay::None, "no dialog opens unseen");
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.app.board.selected, Some(id(1)), "the cursor stays");
    // A dialog open before the terminal shrank takes no typing meanwhile.
    app.update(Event::Resize(160, 48));
    open_dialog(&mut app, 'r');
    app.update(Event::Resize(40, 10));
    typed(&mut app, "typed blind");
    let Overlay::Dialog(d) = &app.app.overlay else {
        panic!("the dialog stays")
    };
    assert_eq!(d.reason, "", "nothing was typed into it");
    press(&mut app, KeyCode::Char('q'));
    assert!(app.app.should_quit, "q quits, as the screen says");
}

/// An unknown result stays among what the console says at quit until it is settled; a settled
/// one replaces its line in the dialog.
#[test]
fn an_unknown_result_is_kept_for_the_quit_until_it_is_settled() {
    let mut app = app();
    let dialog = open_dialog(&mut app, 'r');
    app.update(Event::Applied {
        dialog,
        results: vec![(
            Verdict::Unknown,
            "space 1: outcome unknown — to settle: bootstrap-console retry …".into(),
        )],
        replica: None,
    });
    assert_eq!(app.app.unsettled.len(), 1);
    app.update(Event::Settled {
        dialog,
        index: 0,
        verdict: Verdict::Failed,
        line: "space 1: not applied".into(),
    });
    assert!(app.app.unsettled.is_empty());
    let Overlay::Dialog(d) = &app.app.overlay else {
        panic!("the dialog is open");
    };
    assert_eq!(
        d.stage,
        Stage::Done(vec![(Verdict::Failed, "space 1: not applied".into())])
    );
}

fn slow(console: &mut Console, code: KeyCode) -> Vec<Effect> {
    console.update_slow(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn said(console: &Console) -> String {
    console
        .app
        .message
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default()
}

#[test]
fn keys_typed_before_a_new_filters_rows_arrive_act_on_those_rows() {
    let mut app = app();
    // `f`, `f`, `f` (only failed) and `*` typed faster than the model answers: `*` waits.
    for key in ['f', 'f', 'f', '*'] {
        slow(&mut app, KeyCode::Char(key));
    }
    assert!(app.app.board_pending());
    assert!(app.app.board.marked.is_empty(), "nothing marked unseen");
    assert_eq!(app.app.held_keys.len(), 1);
    // The label still names the rows on screen, not the filter on its way.
    assert_eq!(app.app.shown_query().quick, Quick::All);
    let effects = app.deliver();
    assert!(effects.is_empty(), "{effects:?}");
    assert!(!app.app.board_pending() && app.app.held_keys.is_empty());
    assert_eq!(app.app.shown_query().quick, Quick::Class(Attention::Failed));
    let shown: Vec<_> = visible(&app).iter().map(|r| r.id).collect();
    assert_eq!(shown, vec![id(1)]);
    assert_eq!(
        app.app.board.marked.iter().copied().collect::<Vec<_>>(),
        shown
    );
    // The same keys typed slowly end the same way.
    let mut slowly = self::app();
    for key in ['f', 'f', 'f', '*'] {
        press(&mut slowly, KeyCode::Char(key));
    }
    assert_eq!(slowly.app.board.marked, app.app.board.marked);
}

#[test]
fn a_retry_typed_before_the_rows_arrive_plans_the_rows_then_shown() {
    let mut app = app();
    for key in ['f', 'f', 'f', '*'] {
        slow(&mut app, KeyCode::Char(key));
    }
    assert!(slow(&mut app, KeyCode::Char('r')).is_empty(), "r waits too");
    assert_eq!(app.app.overlay, Overlay::None);
    let effects = app.deliver();
    let (_, _, actions) = plan_request(&effects);
    let planned: Vec<_> = actions
        .iter()
        .filter_map(|a| a.seen_bootstrap().map(|seen| seen.id))
        .collect();
    assert_eq!(planned, vec![id(1)], "only the failed space on screen");
}

#[test]
fn a_filter_typed_fast_never_waits_and_moves_wait_for_its_rows() {
    let mut app = app();
    slow(&mut app, KeyCode::Char('/'));
    for c in "acme".chars() {
        slow(&mut app, KeyCode::Char(c));
    }
    assert!(app.app.held_keys.is_empty(), "typing is never held");
    assert_eq!(app.app.board.query.text, "acme");
    slow(&mut app, KeyCode::Enter);
    slow(&mut app, KeyCode::Char('j'));
    slow(&mut app, KeyCode::Char('y'));
    assert_eq!(app.app.held_keys.len(), 2);
    let effects = app.deliver();
    let rows = visible(&app);
    assert!(rows.iter().all(|r| r.tenant.contains("acme")), "{rows:?}");
    assert_eq!(effects, vec![Effect::Copy(rows[1].space.to_string())]);
}

#[test]
fn a_new_sort_is_labelled_only_with_its_rows() {
    let mut app = app();
    slow(&mut app, KeyCode::Char('s'));
    assert_eq!(app.app.board.query.sort, SortKey::Tenant);
    assert_eq!(app.app.shown_query().sort, SortKey::Attention);
    let screen = screens::render(&app.app);
    assert!(
        screen.contains("sorting…") && !screen.contains("by tenant"),
        "{screen}"
    );
    app.deliver();
    let screen = screens::render(&app.app);
    assert!(
        screen.contains("by tenant A-Z") && !screen.contains("sorting"),
        "{screen}"
    );
    press(&mut app, KeyCode::Char('S'));
    assert!(screens::render(&app.app).contains("by tenant Z-A"));
}

#[test]
fn by_tenant_orders_each_tenants_rows_by_attention_either_way() {
    let mut app = app();
    press(&mut app, KeyCode::Char('s'));
    for reversed in [false, true] {
        let rows = visible(&app);
        assert!(
            rows.windows(2).any(|p| p[0].tenant == p[1].tenant),
            "a tenant with two"
        );
        for pair in rows.windows(2) {
            if reversed {
                assert!(pair[0].tenant >= pair[1].tenant, "tenants Z-A");
            } else {
                assert!(pair[0].tenant <= pair[1].tenant, "tenants A-Z");
            }
            if pair[0].tenant == pair[1].tenant {
                assert!(
                    pair[0].signals.attention <= pair[1].signals.attention,
                    "trouble first within a tenant: {:?} before {:?}",
                    pair[0].signals.attention,
                    pair[1].signals.attention
                );
            }
        }
        press(&mut app, KeyCode::Char('S'));
    }
}

#[test]
fn q_behind_held_keys_is_typed_where_they_lead_and_ctrl_c_still_quits() {
    let mut app = app();
    for key in ['f', 'f', 'f', '*', 'r', 'q'] {
        slow(&mut app, KeyCode::Char(key));
    }
    assert!(!app.app.should_quit, "q waits behind the keys before it");
    let effects = app.deliver();
    answer(&mut app, &effects, ok_plan);
    assert_eq!(
        open(&app).reason,
        "q",
        "q went into the reason the retry asked for"
    );
    assert!(!app.app.should_quit);
    // Ctrl-C goes first whatever waits.
    slow(&mut app, KeyCode::Esc);
    for key in ['f', '*'] {
        slow(&mut app, KeyCode::Char(key));
    }
    assert!(!app.app.held_keys.is_empty());
    ctrl(&mut app, 'c');
    assert!(app.app.should_quit);
}

#[test]
fn board_keys_in_another_view_say_so_and_change_nothing() {
    let mut app = app();
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.app.view, View::Leases);
    let before = app.app.board.query.clone();
    for key in ['s', 'f', ' ', '*', 'S'] {
        assert!(press(&mut app, KeyCode::Char(key)).is_empty());
        assert!(
            said(&app).contains("works on the board"),
            "{key}: {}",
            said(&app)
        );
    }
    assert_eq!(app.app.board.query, before);
    assert!(app.app.board.marked.is_empty());
}

#[test]
fn u_says_what_it_cleared_each_time() {
    let mut app = app();
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('u'));
    assert_eq!(said(&app), "cleared 2 mark(s)");
    press(&mut app, KeyCode::Char('u'));
    assert_eq!(said(&app), "no marks to clear");
}

#[test]
fn plus_from_a_minute_steps_through_the_documented_intervals() {
    let mut app = app();
    for _ in 0..8 {
        press(&mut app, KeyCode::Char('-'));
    }
    assert_eq!(app.app.status.polling.interval, Duration::from_secs(60));
    let mut said_steps = Vec::new();
    for _ in 0..8 {
        press(&mut app, KeyCode::Char('+'));
        said_steps.push(said(&app));
    }
    assert_eq!(
        said_steps,
        [
            "polling every 30s",
            "polling every 15s",
            "polling every 10s",
            "polling every 5s",
            "polling every 2s",
            "polling every 1s",
            "polling every 0.5s",
            "polling every 0.5s (the fastest; - polls less often)"
        ]
    );
    // And the other way, to the slowest, in the same words.
    for _ in 0..8 {
        press(&mut app, KeyCode::Char('-'));
    }
    assert_eq!(
        said(&app),
        "polling every 1m (the slowest; + polls more often)"
    );
}

#[test]
fn a_message_stays_on_the_screen_it_was_said_on() {
    let mut app = app();
    press(&mut app, KeyCode::Char('+'));
    assert!(said(&app).starts_with("polling every"));
    press(&mut app, KeyCode::Tab);
    assert!(app.app.message.is_none(), "{:?}", app.app.message);
}

#[test]
fn the_hint_bar_while_typing_a_filter_offers_only_its_keys() {
    let mut app = app();
    press(&mut app, KeyCode::Char('/'));
    let screen = screens::render(&app.app);
    let hints = screen.lines().last().unwrap_or_default();
    assert!(hints.contains("keep") && hints.contains("clear"), "{hints}");
    assert!(
        !hints.contains("retry") && !hints.contains("q quit"),
        "{hints}"
    );
}

#[test]
fn esc_from_a_detail_opened_in_the_audit_view_returns_to_its_line() {
    let mut app = Console::new((160, 48), Extra::Audit(screens::audits()), Focus::Audit);
    for _ in 0..3 {
        press(&mut app, KeyCode::Tab);
    }
    assert_eq!(app.app.view, View::Audit);
    press(&mut app, KeyCode::Char('j'));
    let line = app.app.audit;
    let audit = app.app.status.focused.clone();
    press(&mut app, KeyCode::Enter);
    assert!(
        matches!(app.app.view, View::Detail(_)),
        "{:?}",
        app.app.view
    );
    // The poller now answers for the detail: the audit records are not loaded meanwhile.
    app.app.status.focused = None;
    app.deliver();
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.app.view, View::Audit);
    assert_eq!(app.app.audit, line);
    app.app.status.focused = audit;
    app.deliver();
    assert_eq!(app.app.audit, line, "still there once the records are back");
    assert_ne!(line, Default::default(), "the cursor had moved");
    // A detail opened from the board goes back to the board.
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.app.view, View::Board);
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.app.view, View::Board);
}

#[test]
fn a_marked_space_a_poll_moves_out_of_the_filter_is_unmarked_and_said() {
    let mut console = app();
    // Only what needs an operator; mark the first two rows.
    press(&mut console, KeyCode::Char('f'));
    press(&mut console, KeyCode::Char(' '));
    press(&mut console, KeyCode::Char(' '));
    assert_eq!(console.app.board.marked.len(), 2);
    let view = console.app.board_view().expect("a board");
    let first = view.get(0).expect("a row").clone();
    // A poll later the first marked space succeeded: it left the filter.
    let now = screens::changes(screens::db_now(), 0);
    let mut record = now
        .upserts
        .into_iter()
        .find(|r| r.id == first.id)
        .expect("its record");
    record.run_state = "succeeded".into();
    record.checkpoint = "published".into();
    record.completed_documents = record.total_documents;
    record.worker_id = None;
    record.has_lease_token = false;
    record.lease_expires_at = None;
    record.heartbeat_at = None;
    record.last_error_code = None;
    record.last_error_message = None;
    record.completed_at = Some(screens::db_now());
    record.version = 9;
    console
        .fleet
        .apply(bootstrap_console::store::sync::Changes {
            db_now: screens::db_now() + chrono::Duration::seconds(2),
            upserts: vec![record],
            // Every lease still held (a poll lists them all).
            leases: now.leases,
            ..Default::default()
        });
    console.deliver();
    assert_eq!(
        console.app.board.marked.len(),
        1,
        "only what is shown stays marked: {}",
        said(&console)
    );
    assert!(!console.app.board.marked.contains(&first.id));
    assert!(
        said(&console).starts_with("1 marked space(s) left the view"),
        "{}",
        said(&console)
    );
}

#[test]
fn opening_a_tenant_shows_every_space_of_it_whatever_the_filter_was() {
    let mut console = app();
    press(&mut console, KeyCode::Char('f'));
    assert_ne!(console.app.board.query.quick, Quick::All);
    press(&mut console, KeyCode::Tab);
    assert_eq!(console.app.view, View::Tenants);
    press(&mut console, KeyCode::Enter);
    assert_eq!(console.app.view, View::Board);
    let query = &console.app.board.query;
    assert_eq!(
        query.quick,
        Quick::All,
        "the earlier quick filter would hide spaces"
    );
    assert!(query.text.is_empty());
    let tenant = query.tenant.clone().expect("the tenant");
    let view = console.app.board_view().expect("a board");
    let of_tenant = console
        .fleet
        .snapshot()
        .expect("a snapshot")
        .rows
        .values()
        .filter(|r| r.tenant == tenant)
        .count();
    assert_eq!(view.len(), of_tenant, "every space of the tenant");
    assert!(said(&console).starts_with("tenant "), "{}", said(&console));
}

#[test]
fn at_80_columns_the_other_views_give_the_board_label_their_room() {
    let mut console = Console::new((80, 24), Extra::None, Focus::Board);
    press(&mut console, KeyCode::Char('f'));
    press(&mut console, KeyCode::Char(' '));
    press(&mut console, KeyCode::Char('s'));
    let screen = screens::render(&console.app);
    let tabs = screen
        .lines()
        .find(|l| l.contains("Board"))
        .expect("the tab line");
    assert!(tabs.contains("only needs an operator"), "{tabs}");
    assert!(tabs.contains("1 marked"), "{tabs}");
    assert!(
        !tabs.contains("Tenants"),
        "the other views by their initials: {tabs}"
    );
    // Wide enough, every view is named.
    let wide = Console::new((160, 48), Extra::None, Focus::Board);
    let screen = screens::render(&wide.app);
    assert!(
        screen
            .lines()
            .any(|l| l.contains("Tenants") && l.contains("Health"))
    );
}
