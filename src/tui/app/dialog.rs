//! The action dialog's state: the plans, the reason, the confirmation, then the results. The
//! plans are made again every few seconds while it is open, keeping what was typed; a plan
//! whose decision changed must be taken on purpose before Enter applies anything.

use std::time::{Duration, Instant};

use std::sync::Arc;

use crate::domain::actions::{self, Action, Confirmation, Plan, Refusal, RequestId, Verdict};
use crate::domain::ids::IdNames;

/// How often an open dialog plans again by itself (Ctrl-R plans at once).
pub const REPLAN_EVERY: Duration = Duration::from_secs(3);

/// Which input of a dialog has the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Reason,
    Confirm,
}

/// Where a dialog is in its life.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// Waiting for the first plans.
    Planning,
    /// Plans shown; the operator types the reason (and the confirmation).
    Editing,
    /// Plans could not be made (database error).
    Broken(String),
    Applying,
    /// One line per action.
    Done(Vec<(Verdict, String)>),
}

/// The action dialog.
#[derive(Debug, Clone, PartialEq)]
pub struct Dialog {
    /// Matches results to the dialog that asked for them.
    pub(crate) id: u64,
    pub(crate) title: String,
    /// The operator's request; each action carries an id derived from it.
    pub request: RequestId,
    pub actions: Vec<Action>,
    pub plans: Vec<Plan>,
    pub stage: Stage,
    /// Which request for plans is the latest: answers to older ones are dropped (a plan
    /// taken with Ctrl-Y or forced with Ctrl-F must not be overwritten by a stale answer).
    pub(crate) round: u64,
    /// When plans were last asked for, while an answer is awaited.
    pub(crate) replanning_since: Option<Instant>,
    /// Why the latest re-plan failed; the last plans stay shown (the apply decides again
    /// anyway).
    pub replan_error: Option<String>,
    /// When the plans shown were asked for.
    pub(crate) planned_at: Option<Instant>,
    pub reason: String,
    /// What the operator typed to confirm (see [`Dialog::confirmation`]).
    pub(crate) confirm: String,
    pub field: Field,
    /// How ids were shown when the dialog opened: the lease id to type is the one shown.
    pub(crate) names: Arc<IdNames>,
    /// Set when the request exceeds the bulk cap: the dialog only explains.
    pub blocked: Option<String>,
}

impl Dialog {
    pub fn is_bulk(&self) -> bool {
        self.actions.len() > 1
    }

    /// Actions whose plan says they would write (the pipeline's [`actions::to_apply`]).
    pub(crate) fn applicable(&self) -> Vec<Action> {
        let writing = actions::to_apply(&self.plans);
        writing.into_iter().map(|p| p.action.clone()).collect()
    }

    /// Whether a plan's decision changed since the operator looked: Enter waits for Ctrl-Y.
    pub fn decision_changed(&self) -> bool {
        self.plans.iter().any(Plan::decision_changed)
    }

    /// A lease removal refused because the lease is not an orphan suspect (Ctrl-F forces),
    /// not forced yet.
    pub(crate) fn forceable(&self) -> bool {
        let forced = self.actions.iter().any(Action::is_forced);
        !forced
            && self
                .plans
                .iter()
                .any(|p| matches!(p.verdict, Err(Refusal::LeaseNotOrphan { .. })))
    }

    /// Takes the plans' new decisions: every changed action is decided on what is there now.
    pub(crate) fn take_new_plan(&mut self) {
        self.actions = self.plans.iter().map(Plan::replanned_action).collect();
    }

    /// Turns the lease removal into a forced one, whose confirmation is the whole lease id.
    pub(crate) fn force(&mut self) {
        for action in &mut self.actions {
            let lease = match action {
                Action::Lease(removal) => Some(removal.seen().clone()),
                Action::Bootstrap(_) => None,
            };
            if let Some(seen) = lease {
                let id = seen.id;
                *action = Action::remove_lease(seen, true, self.request);
                self.title = format!("FORCE removal of mutation lease {}", self.names.short(&id));
            }
        }
        self.confirm.clear();
    }

    /// What must be typed to confirm, by the rule the CLI follows too
    /// ([`actions::confirmation_of`]).
    pub fn confirmation(&self) -> Confirmation {
        actions::confirmation_of(&self.plans, &self.actions, &self.names)
    }

    /// Why Enter would not apply yet; `None` when it would.
    pub fn not_ready(&self) -> Option<String> {
        if let Some(blocked) = &self.blocked {
            return Some(blocked.clone());
        }
        match &self.stage {
            Stage::Editing => {}
            Stage::Planning => return Some("waiting for the plan".into()),
            _ => return Some("nothing to apply".into()),
        }
        if self.decision_changed() {
            return Some("the decision changed since you looked: Ctrl-Y takes the new plan".into());
        }
        if self.forceable() {
            return Some("not an orphan suspect: Ctrl-F forces the removal".into());
        }
        if self.applicable().is_empty() {
            return Some("nothing would apply".into());
        }
        if self.reason.trim().is_empty() {
            return Some("type a reason".into());
        }
        let confirmation = self.confirmation();
        (!confirmation.accepts(&self.confirm))
            .then(|| format!("type {} to confirm", confirmation.what_to_type()))
    }
}
