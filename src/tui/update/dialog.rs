//! The action dialogs: opening one for the selected (or marked) spaces or lease, typing the
//! reason and the confirmation, and asking for the plan and the application as effects.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use uuid::Uuid;

use super::{Effect, selected_lease_line};
use crate::domain::actions::{Action, Kind};
use crate::domain::model::short_id;
use crate::poller::{Extra, Focus};
use crate::tui::app::{App, Dialog, Field, Overlay, Stage, View};

const REASON_LIMIT: usize = 500;
const CONFIRM_LIMIT: usize = 40;

/// The (bootstrap id, row version seen) the action targets in the current view.
fn action_targets(app: &App) -> Vec<(Uuid, i32)> {
    match &app.view {
        View::Board if !app.board.marked.is_empty() => app
            .board
            .marked
            .iter()
            .filter_map(|id| app.row(id))
            .map(|r| (r.id, r.row_version))
            .collect(),
        View::Board => app
            .selected_row()
            .map(|r| vec![(r.id, r.row_version)])
            .unwrap_or_default(),
        View::Detail(id) => match app.extra_for(&Focus::Detail(*id)) {
            Some(Extra::Detail(detail)) => detail
                .as_ref()
                .as_ref()
                .map(|d| vec![(d.bootstrap.id, d.bootstrap.row_version)])
                .unwrap_or_default(),
            _ => app
                .row(id)
                .map(|r| vec![(r.id, r.row_version)])
                .unwrap_or_default(),
        },
        _ => Vec::new(),
    }
}

pub(super) fn bootstrap_action(app: &mut App, kind: Kind) -> Vec<Effect> {
    let name = kind.name();
    let targets = action_targets(app);
    if targets.is_empty() {
        app.say(format!("select a space to {name}"), true);
        return Vec::new();
    }
    let actions: Vec<Action> = targets
        .iter()
        .map(|(id, version)| match name {
            "retry" => Action::Retry {
                bootstrap_id: *id,
                seen_row_version: *version,
            },
            _ => Action::Cancel {
                bootstrap_id: *id,
                seen_row_version: *version,
            },
        })
        .collect();
    let count = actions.len();
    let title = if count == 1 {
        let space = app
            .row(&targets[0].0)
            .map_or_else(|| short_id(&targets[0].0), |r| short_id(&r.space));
        format!("{name} space {space}")
    } else {
        format!("{name} {count} spaces")
    };
    let (expected, prompt) = if count > 1 {
        (Some(count.to_string()), format!("the count ({count})"))
    } else {
        (None, String::new())
    };
    let blocked = (count > app.bulk_cap).then(|| {
        format!(
            "{count} spaces exceed the bulk cap of {}: narrow the filter or the marks",
            app.bulk_cap
        )
    });
    open_dialog(app, title, actions, expected, prompt, blocked)
}

pub(super) fn remove_lease(app: &mut App) -> Vec<Effect> {
    let lease = match &app.view {
        View::Leases => selected_lease_line(app).map(|(lease, _)| lease),
        View::Detail(id) => match app.extra_for(&Focus::Detail(*id)) {
            Some(Extra::Detail(detail)) => detail.as_ref().as_ref().and_then(|d| d.lease.clone()),
            _ => None,
        },
        View::Board => app.selected_row().and_then(|r| r.lease.as_deref().cloned()),
        View::Audit | View::Tenants => None,
    };
    let Some(lease) = lease else {
        app.say("the selected space has no mutation lease", true);
        return Vec::new();
    };
    let code = short_id(&lease.id);
    let action = Action::RemoveLease {
        seen: lease.identity(),
        force: false,
    };
    let title = format!("remove mutation lease {code}");
    open_dialog(
        app,
        title,
        vec![action],
        Some(code.clone()),
        format!("the lease id's first 8 characters ({code})"),
        None,
    )
}

fn open_dialog(
    app: &mut App,
    title: String,
    actions: Vec<Action>,
    confirm_expected: Option<String>,
    confirm_prompt: String,
    blocked: Option<String>,
) -> Vec<Effect> {
    let id = app.next_dialog_id;
    app.next_dialog_id += 1;
    let planning = blocked.is_none();
    app.overlay = Overlay::Dialog(Box::new(Dialog {
        id,
        title,
        actions: actions.clone(),
        plans: Vec::new(),
        stage: if planning {
            Stage::Planning
        } else {
            Stage::Editing
        },
        reason: String::new(),
        confirm: String::new(),
        field: Field::Reason,
        confirm_expected,
        confirm_prompt,
        blocked,
    }));
    if planning {
        vec![Effect::Plan {
            dialog: id,
            actions,
        }]
    } else {
        Vec::new()
    }
}

pub(super) fn dialog_key(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    let Overlay::Dialog(dialog) = &mut app.overlay else {
        return Vec::new();
    };
    match (&dialog.stage, key.code) {
        (Stage::Applying, _) => Vec::new(),
        (Stage::Done(_) | Stage::Broken(_), KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q')) => {
            app.overlay = Overlay::None;
            Vec::new()
        }
        (_, KeyCode::Esc) => {
            app.overlay = Overlay::None;
            app.say("nothing was changed", false);
            Vec::new()
        }
        (Stage::Editing, KeyCode::Tab | KeyCode::BackTab) => {
            if dialog.confirm_expected.is_some() {
                dialog.field = match dialog.field {
                    Field::Reason => Field::Confirm,
                    Field::Confirm => Field::Reason,
                };
            }
            Vec::new()
        }
        (Stage::Editing, KeyCode::Enter) => {
            if dialog.not_ready().is_some() {
                // The dialog already shows what is missing; a field may just need the cursor.
                if dialog.confirm_expected.is_some() && !dialog.reason.trim().is_empty() {
                    dialog.field = Field::Confirm;
                }
                return Vec::new();
            }
            dialog.stage = Stage::Applying;
            vec![Effect::Apply {
                dialog: dialog.id,
                actions: dialog.applicable(),
                reason: dialog.reason.trim().to_string(),
            }]
        }
        (Stage::Editing | Stage::Planning, code) => {
            let field = match dialog.field {
                Field::Reason => &mut dialog.reason,
                Field::Confirm => &mut dialog.confirm,
            };
            let limit = if dialog.field == Field::Reason {
                REASON_LIMIT
            } else {
                CONFIRM_LIMIT
            };
            match code {
                KeyCode::Backspace => {
                    field.pop();
                }
                KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    field.clear()
                }
                KeyCode::Char(c) if !c.is_control() && field.chars().count() < limit => {
                    field.push(c)
                }
                _ => {}
            }
            Vec::new()
        }
        _ => Vec::new(),
    }
}
