//! An operator's request from plans to outcomes, once for both front ends: [`plan_all`] plans
//! every action, [`Planned`] says which would apply and what confirms them (the one
//! [`Confirmation`] rule), and [`apply_each`] applies them one transaction after another
//! within a deadline each, with request ids, reporting every outcome as it comes and
//! tallying them. The TUI's dialog and the CLI's `retry`, `cancel` and `lease remove` only
//! render what these decide.

use std::time::Duration;

use tokio::sync::watch;

use super::{
    Action, ActionError, Confirmation, Lookup, Outcome, Plan, Verdict, apply_bounded, sentence,
};
use crate::domain::audit_chain::ChainHead;
use crate::domain::ids::IdNames;
use crate::domain::refusal::Refusal;
use crate::domain::session::Session;

/// Plans every action of a request in turn; the first the database could not plan ends it.
/// A primary the split-brain guard refuses ends it before any plan
/// ([`ActionError::PrimaryInDoubt`]).
pub async fn plan_all(session: &Session, actions: &[Action]) -> Result<Planned, ActionError> {
    if !actions.is_empty() {
        approved(session, false).await?;
    }
    plan_each(session, actions).await
}

/// [`plan_all`] without asking the split-brain guard: for a dry run, which writes nothing and
/// says the guard's refusal beside the plans.
pub(crate) async fn plan_each(
    session: &Session,
    actions: &[Action],
) -> Result<Planned, ActionError> {
    let mut plans = Vec::with_capacity(actions.len());
    for action in actions {
        plans.push(super::plan(session, action).await?);
    }
    Ok(Planned { plans })
}

/// A request's plans.
#[derive(Debug, Clone)]
pub struct Planned {
    pub plans: Vec<Plan>,
}

impl Planned {
    /// The plans that would write (see [`to_apply`]).
    pub(crate) fn to_apply(&self) -> Vec<&Plan> {
        to_apply(&self.plans)
    }

    /// What the operator must type before they are applied.
    pub fn confirmation(&self, names: &IdNames) -> Confirmation {
        Confirmation::for_plans(&self.to_apply(), names)
    }
}

/// Of a request's `plans`, those that would write: allowed, and not applied before.
pub(crate) fn to_apply(plans: &[Plan]) -> Vec<&Plan> {
    plans
        .iter()
        .filter(|p| p.verdict.is_ok() && p.applied_before.is_none())
        .collect()
}

/// What confirms a request of `asked` whose plans are `plans` (the TUI's dialog keeps both):
/// the plans that would write say it; while none would (no plans yet, or plans made before a
/// forced removal was asked for), the actions asked for do.
pub(crate) fn confirmation_of(plans: &[Plan], asked: &[Action], names: &IdNames) -> Confirmation {
    let writing = to_apply(plans);
    if writing.is_empty() {
        Confirmation::for_actions(asked, names)
    } else {
        Confirmation::for_plans(&writing, names)
    }
}

/// `session`, writing where the split-brain guard approves now (see
/// [`crate::topology::lineage`]); asked only of a session that may write, since a read-only
/// one refuses every action anyway.
/// Completes once the operator stops waiting (Esc); never without one, nor when the front end
/// goes away (the deadline still bounds the wait).
async fn operator_stops(stop: Option<watch::Receiver<bool>>) {
    let stopped = match stop {
        Some(mut stop) => stop.wait_for(|stop| *stop).await.is_ok(),
        None => false,
    };
    if !stopped {
        std::future::pending::<()>().await;
    }
}

/// `fresh`: see [`crate::topology::TopologyHandle::check_lineage`].
async fn approved(session: &Session, fresh: bool) -> Result<Session, ActionError> {
    if session.topology().access().refuses_actions() {
        return Ok(session.clone());
    }
    let approval = session.topology_handle().check_lineage(fresh).await??;
    Ok(session.with_approval(Some(approval)))
}

/// What became of a request's actions, counted as the operator is told them.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub(crate) applied: usize,
    pub(crate) refused: usize,
    /// The database failed them, certainly without writing.
    pub(crate) failed: usize,
    /// Their outcome is unknown (no answer, and the lookup could not tell).
    pub(crate) unknown: Vec<Action>,
    /// The audit records this request wrote or found written (a standby's polls wait for
    /// them before the board shows what was done).
    pub(crate) audit_ids: Vec<i64>,
    /// The audit chain's head after the last action applied (printed, to be kept).
    pub(crate) chain_head: Option<ChainHead>,
    /// The transactions of the unknown ones that got that far, by action id: what a later
    /// lookup must see end ([`super::resolve`]).
    pub(crate) backends: std::collections::HashMap<uuid::Uuid, crate::store::write::Backend>,
    /// The split-brain guard refused the primary: nothing was sent.
    pub(crate) primary_in_doubt: bool,
    /// `--primary` forced the writes: where, and past what (said to the operator).
    pub(crate) forced: Option<String>,
}

impl Tally {
    /// The transaction of an action whose outcome is unknown, when it began one.
    pub fn backend_of(&self, action: &Action) -> Option<crate::store::write::Backend> {
        self.backends.get(&action.action_id()).copied()
    }

    fn count(&mut self, action: &Action, verdict: Verdict, result: &Result<Outcome, ActionError>) {
        if let Ok(Outcome::Refused(Refusal::PrimaryInDoubt { .. })) = result {
            self.primary_in_doubt = true;
        }
        match result {
            Ok(Outcome::Applied(applied)) => {
                self.audit_ids.push(applied.audit_id);
                self.chain_head = Some(applied.chain_head.clone());
            }
            Ok(Outcome::Interrupted {
                found: Lookup::Applied { audit_id },
                ..
            }) => self.audit_ids.push(*audit_id),
            Ok(Outcome::Interrupted {
                backend: Some(backend),
                ..
            }) => {
                self.backends.insert(action.action_id(), *backend);
            }
            _ => {}
        }
        match verdict {
            Verdict::Applied => self.applied += 1,
            Verdict::Refused => self.refused += 1,
            Verdict::Failed => self.failed += 1,
            Verdict::Unknown => self.unknown.push(action.clone()),
        }
    }
}

/// Applies `actions` one after another, one transaction each, each waited for at most
/// `deadline` and resolved by its request id when unanswered. Once `stop` turns true (the
/// operator's Esc) the action in flight is looked up and the rest are not sent. Each outcome
/// reaches `report` as its sentence, in order, as it comes.
pub async fn apply_each(
    session: &Session,
    actions: &[Action],
    reason: &str,
    deadline: Duration,
    stop: Option<watch::Receiver<bool>>,
    mut report: impl FnMut(&Action, Verdict, String),
) -> Tally {
    let mut tally = Tally::default();
    // Asked again right before writing (a plan confirmed minutes ago is no approval now), and
    // given up on when the operator stops waiting.
    let checked = tokio::select! {
        checked = approved(session, true) => Some(checked),
        () = operator_stops(stop.clone()) => None,
    };
    let session = &match checked {
        Some(Ok(session)) => session,
        refused => {
            let names = session.names();
            let result = match refused {
                Some(Err(ActionError::PrimaryInDoubt(doubt))) => {
                    Ok(Outcome::Refused(Refusal::PrimaryInDoubt {
                        said: doubt.to_string(),
                    }))
                }
                Some(Err(other)) => Err(other),
                _ => {
                    for action in actions {
                        let target = action.target(&names);
                        tally.failed += 1;
                        let line =
                            format!("{target}: not applied — you stopped before it was sent");
                        report(action, Verdict::Failed, line);
                    }
                    return tally;
                }
            };
            // The reason once, in full; the other actions refer to it.
            for (index, action) in actions.iter().enumerate() {
                let (verdict, line) = sentence(action, &result, &names);
                let line = if index == 0 {
                    line
                } else {
                    format!("{}: not applied — as above", action.target(&names))
                };
                tally.count(action, verdict, &result);
                report(action, verdict, line);
            }
            return tally;
        }
    };
    // Remembered before the first write: a primary on a lower timeline of the same cluster is
    // an old one from now on, even if this request is cut short.
    if let Some(lineage) = session.approval().and_then(|a| a.lineage) {
        session.topology_handle().note_written(lineage).await;
    }
    for action in actions {
        if stop.as_ref().is_some_and(|stop| *stop.borrow()) {
            let line = format!(
                "{}: not applied — you stopped before it was sent",
                action.target(&session.names())
            );
            tally.failed += 1;
            report(action, Verdict::Failed, line);
            continue;
        }
        let give_up = operator_stops(stop.clone());
        let result = apply_bounded(session, action, reason, deadline, give_up).await;
        let (verdict, line) = sentence(action, &result, &session.names());
        tally.count(action, verdict, &result);
        report(action, verdict, line);
    }
    // Said once something was (or may have been) written.
    if let Some(approval) = session
        .approval()
        .filter(|a| a.forced && (tally.applied > 0 || !tally.unknown.is_empty()))
    {
        let said = format!(
            "written to {} as forced (--primary){}{}",
            approval.host,
            approval
                .lineage
                .map(|l| format!(", system {} timeline {:08X}", l.system_id, l.timeline))
                .unwrap_or_default(),
            approval
                .forced_over
                .as_ref()
                .map(|doubt| format!(", past the split-brain guard: {doubt}"))
                .unwrap_or_default()
        );
        let request = actions.first().map(|a| a.request().to_string());
        tracing::warn!("request {}: {said}", request.unwrap_or_default());
        tally.forced = Some(said);
    }
    tally
}
