//! The action dialogs: opening one for the selected (or marked) spaces or lease, typing the
//! reason and the confirmation, planning again while it is open, taking a changed plan or
//! forcing a lease removal on purpose, and asking for the application as an effect.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Effect, selected_lease_line};
use crate::domain::actions::{Action, BootstrapKind, MAX_REASON_CHARS, RequestId, SeenBootstrap};
use crate::poller::{Extra, Focus};
use crate::tui::app::{App, Dialog, Field, Overlay, REPLAN_EVERY, Stage, View};
use crate::tui::keys::Command;

/// Ctrl-R plans again at once, but not more often than this while an answer is awaited: each
/// plan holds a connection the poller and the apply need too.
const REPLAN_MIN_GAP: std::time::Duration = std::time::Duration::from_secs(1);

const CONFIRM_LIMIT: usize = 40;

/// What the operator sees of each bootstrap the action targets in the current view: the
/// marked spaces on the board, else the selected one.
fn action_targets(app: &App) -> Vec<SeenBootstrap> {
    match &app.view {
        View::Board if !app.board.marked.is_empty() => app
            .board
            .marked
            .iter()
            .filter_map(|id| app.row(id))
            .map(|r| SeenBootstrap::from(&r))
            .collect(),
        View::Board => app
            .selected_row()
            .map(|r| vec![SeenBootstrap::from(&r)])
            .unwrap_or_default(),
        View::Detail(id) => match app.extra_for(&Focus::Detail(*id)) {
            Some(Extra::Detail(detail)) => detail
                .as_ref()
                .as_ref()
                .map(|d| vec![SeenBootstrap::from(&d.bootstrap)])
                .unwrap_or_default(),
            _ => app
                .row(id)
                .map(|r| vec![SeenBootstrap::from(&r)])
                .unwrap_or_default(),
        },
        _ => Vec::new(),
    }
}

/// Why no action can be taken at all, said at once; a doubt of the split-brain guard is said by
/// the dialog's plan instead, in full (it asks afresh).
fn refused_outright(app: &App) -> Option<String> {
    let access = &app.header.access;
    access
        .refuses_actions()
        .then(|| access.read_only_reason().unwrap_or_default().to_string())
}

pub(super) fn bootstrap_action(app: &mut App, kind: BootstrapKind) -> Vec<Effect> {
    if let Some(reason) = refused_outright(app) {
        let text = format!("{} is not possible: {reason}", kind.verb());
        app.say(text, true);
        return Vec::new();
    }
    let verb = kind.verb();
    let targets = action_targets(app);
    if targets.is_empty() {
        app.say(format!("select a space to {verb}"), true);
        return Vec::new();
    }
    let request = RequestId::new();
    let count = targets.len();
    let title = if count == 1 {
        format!("{verb} space {}", app.names().short(&targets[0].space))
    } else {
        format!("{verb} {count} marked spaces")
    };
    let actions: Vec<Action> = targets
        .into_iter()
        .map(|t| kind.action(t, request))
        .collect();
    let blocked = (count > app.bulk_cap).then(|| {
        format!(
            "{count} spaces exceed the bulk cap of {}: narrow the filter or the marks",
            app.bulk_cap
        )
    });
    open_dialog(app, title, request, actions, blocked)
}

pub(super) fn remove_lease(app: &mut App) -> Vec<Effect> {
    if let Some(reason) = refused_outright(app) {
        app.say(format!("remove lease is not possible: {reason}"), true);
        return Vec::new();
    }
    let lease = match &app.view {
        View::Leases => selected_lease_line(app).map(|(lease, _)| lease),
        View::Detail(id) => match app.extra_for(&Focus::Detail(*id)) {
            Some(Extra::Detail(detail)) => detail.as_ref().as_ref().and_then(|d| d.lease.clone()),
            _ => None,
        },
        View::Board => app.selected_row().and_then(|r| r.lease.as_deref().cloned()),
        View::Audit | View::Tenants | View::Health => None,
    };
    let Some(lease) = lease else {
        app.say("the selected space has no mutation lease", true);
        return Vec::new();
    };
    let code = app.names().short(&lease.id);
    let request = RequestId::new();
    let action = Action::remove_lease(lease.identity(), false, request);
    let title = format!("remove mutation lease {code}");
    open_dialog(app, title, request, vec![action], None)
}

fn open_dialog(
    app: &mut App,
    title: String,
    request: RequestId,
    actions: Vec<Action>,
    blocked: Option<String>,
) -> Vec<Effect> {
    let id = app.next_dialog_id;
    app.next_dialog_id += 1;
    let planning = blocked.is_none();
    let mut dialog = Dialog {
        id,
        title,
        request,
        actions,
        plans: Vec::new(),
        stage: if planning {
            Stage::Planning
        } else {
            Stage::Editing
        },
        round: 0,
        replanning_since: None,
        replan_error: None,
        planned_at: None,
        reason: String::new(),
        confirm: String::new(),
        field: Field::Reason,
        names: app.fleet().map(|f| f.names.clone()).unwrap_or_default(),
        blocked,
    };
    let effects = if planning {
        plan(&mut dialog, app.now, false)
    } else {
        Vec::new()
    };
    app.overlay = Overlay::Dialog(Box::new(dialog));
    effects
}

/// Asks for the dialog's plans: by the timer only when no answer is awaited; at once when the
/// operator asks (`now_please`), and any older answer is then dropped.
fn plan(dialog: &mut Dialog, now: Instant, now_please: bool) -> Vec<Effect> {
    if dialog.replanning_since.is_some() && !now_please {
        return Vec::new();
    }
    dialog.round += 1;
    dialog.replanning_since = Some(now);
    vec![Effect::Plan {
        dialog: dialog.id,
        round: dialog.round,
        actions: dialog.actions.clone(),
    }]
}

/// An open dialog plans again every [`REPLAN_EVERY`], so what it shows stays true.
pub(super) fn replan_if_due(app: &mut App) -> Vec<Effect> {
    let now = app.now;
    match &mut app.overlay {
        Overlay::Dialog(dialog)
            if dialog.stage == Stage::Editing
                && dialog.blocked.is_none()
                && dialog
                    .planned_at
                    .is_none_or(|at| now.saturating_duration_since(at) >= REPLAN_EVERY) =>
        {
            plan(dialog, now, false)
        }
        _ => Vec::new(),
    }
}

/// A key in an open dialog: `command` as the key table binds it in the dialog's stage, else
/// text for the field with the cursor.
pub(super) fn dialog_key(app: &mut App, command: Option<Command>, key: KeyEvent) -> Vec<Effect> {
    let now = app.now;
    let Overlay::Dialog(dialog) = &mut app.overlay else {
        return Vec::new();
    };
    match (&dialog.stage, command) {
        (Stage::Applying, Some(Command::Back)) => {
            let id = dialog.id;
            app.say("stopped waiting; looking the request up…", true);
            vec![Effect::StopWaiting { dialog: id }]
        }
        (Stage::Applying, _) => Vec::new(),
        (Stage::Done(results), Some(Command::Back)) => {
            // The dialog said how it went; the tally it left in the status line goes with it
            // (an outcome still unknown stays said until it is settled).
            let unknown = results
                .iter()
                .any(|(verdict, _)| *verdict == crate::domain::actions::Verdict::Unknown);
            app.overlay = Overlay::None;
            if !unknown {
                app.message = None;
            }
            Vec::new()
        }
        (Stage::Broken(_), Some(Command::Back)) => {
            app.overlay = Overlay::None;
            Vec::new()
        }
        (Stage::Done(_) | Stage::Broken(_), _) => Vec::new(),
        (_, Some(Command::Back)) => {
            app.overlay = Overlay::None;
            app.say("nothing was changed", false);
            Vec::new()
        }
        // Not for a dialog that only explains, nor faster than a plan can come back.
        (Stage::Editing, Some(Command::PlanAgain))
            if dialog.blocked.is_none()
                && dialog
                    .replanning_since
                    .is_none_or(|at| now.saturating_duration_since(at) >= REPLAN_MIN_GAP) =>
        {
            plan(dialog, now, true)
        }
        (Stage::Editing, Some(Command::TakePlan)) if dialog.decision_changed() => {
            dialog.take_new_plan();
            dialog.confirm.clear();
            plan(dialog, now, true)
        }
        (Stage::Editing, Some(Command::Force)) if dialog.forceable() => {
            dialog.force();
            // To the confirmation only once there is a reason: the lease id typed next must
            // not land in the reason, nor the reason in the confirmation.
            if !dialog.reason.trim().is_empty() {
                dialog.field = Field::Confirm;
            }
            plan(dialog, now, true)
        }
        (Stage::Editing, Some(Command::NextField)) => {
            dialog.field = match dialog.field {
                Field::Reason => Field::Confirm,
                Field::Confirm => Field::Reason,
            };
            Vec::new()
        }
        (Stage::Editing, Some(Command::Apply)) => {
            if dialog.not_ready().is_some() {
                // The dialog already shows what is missing; a field may just need the cursor.
                if !dialog.reason.trim().is_empty() {
                    dialog.field = Field::Confirm;
                }
                return Vec::new();
            }
            dialog.stage = Stage::Applying;
            vec![Effect::Apply {
                dialog: dialog.id,
                actions: dialog.applicable(),
                reason: dialog.reason.trim().to_string(),
                deadline: app.apply_deadline,
            }]
        }
        (Stage::Editing | Stage::Planning, command) => {
            let reason = dialog.field == Field::Reason;
            let field = if reason {
                &mut dialog.reason
            } else {
                &mut dialog.confirm
            };
            let limit = if reason {
                MAX_REASON_CHARS
            } else {
                CONFIRM_LIMIT
            };
            match (command, key.code) {
                (Some(Command::DeleteChar), _) => {
                    field.pop();
                }
                (Some(Command::ClearField), _) => field.clear(),
                (None, KeyCode::Char(c))
                    if !c.is_control() && !key.modifiers.contains(KeyModifiers::CONTROL) =>
                {
                    if field.chars().count() < limit {
                        field.push(c);
                    } else if reason {
                        app.say(
                            format!("a reason is at most {MAX_REASON_CHARS} characters"),
                            true,
                        );
                    }
                }
                _ => {}
            }
            Vec::new()
        }
    }
}
