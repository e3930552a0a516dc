//! The one flow retry and cancel share: plan from an unlocked read; apply with one store call
//! ([`crate::store::write::write_bootstrap`]), the database's function, which decides again on
//! the locked row with the same rule.

use super::action::{Action, BootstrapAction, BootstrapKind, Kind, SeenBootstrap};
use super::outcome::{Applied, Outcome, Plan};
use super::{ActionError, Declined, cancel, precondition, retry, stamp};
use crate::domain::model::Bootstrap;
use crate::domain::refusal::Refusal;
use crate::domain::session::Session;
use crate::store::db::read_tx;
use crate::store::read;
use crate::store::rows::BootstrapRow;
use crate::store::write::{BackendSlot, Written, write_bootstrap};

/// Scope first, then the action's own precondition as the database judged it over `now`
/// (`refusal`, see [`precondition`]); `Ok` carries what moved meanwhile.
fn check(
    session: &Session,
    action: &BootstrapAction,
    now: &Bootstrap,
    refusal: Option<&str>,
) -> Result<Option<String>, Refusal> {
    session.check_scope(&now.tenant_id, now.knowledge_space_id)?;
    let names = session.names();
    let (kind, seen, exact) = (action.kind(), action.seen(), action.exact_row_version());
    precondition::verdict(refusal, kind, seen, exact, now, &names)
}

pub(super) async fn plan(
    session: &Session,
    action: &Action,
    bootstrap: &BootstrapAction,
) -> Result<Plan, ActionError> {
    let seen = bootstrap.seen();
    let topology = session.topology();
    let primary = topology.primary();
    let rests_on = precondition::rests_on(bootstrap.kind(), seen, bootstrap.exact_row_version());
    let judged = read_tx!(primary, |c| read::bootstrap_judged(c, seen.id, &rests_on))?;
    let Some((row, refusal)) = judged else {
        return Ok(Plan::refused(
            action,
            Refusal::UnknownBootstrap { id: seen.id },
        ));
    };
    let now = Bootstrap::try_from(row)?;
    let verdict = match check(session, bootstrap, &now, refusal.as_deref()) {
        Err(Refusal::RetriedMeanwhile {
            space,
            was,
            now: state,
            by: None,
        }) => Err(Refusal::RetriedMeanwhile {
            by: retried_by(session, &now).await,
            space,
            was,
            now: state,
        }),
        Err(refusal) => Err(refusal),
        Ok(_) => Ok(match bootstrap.kind() {
            BootstrapKind::Retry => {
                retry::changes(&now, retry::items_to_reset(primary, now.id).await?)
            }
            BootstrapKind::Cancel => cancel::changes(&now, None),
        }),
    };
    Ok(Plan {
        action: action.clone(),
        tenant_id: Some(now.tenant_id.clone()),
        knowledge_space_id: Some(now.knowledge_space_id),
        meanwhile: precondition::meanwhile_before(seen, &now),
        now: Some(SeenBootstrap::from(&now)),
        evidence: Vec::new(),
        forced: false,
        applied_before: None,
        verdict,
    })
}

/// Who retried the job, as the audit log on the primary says: an operator whose board lags
/// (a standby's) may be looking at their own retry, which must not read as someone else's.
async fn retried_by(session: &Session, now: &Bootstrap) -> Option<String> {
    let topology = session.topology();
    if topology.capabilities().audit_unavailable().is_some() {
        return None;
    }
    let space = (now.tenant_id.as_str(), now.knowledge_space_id);
    let (audit_id, actor, host, request) = read_tx!(topology.primary(), |c| read::last_applied(
        c,
        space,
        Kind::Retry.name()
    ))
    .ok()??;
    Some(if request.is_some_and(|r| session.sent_here(&r)) {
        format!("by this console (audit record {audit_id})")
    } else {
        let who = crate::domain::text::clean(&format!("{actor} on {host}"), 80);
        format!("by {who} (audit record {audit_id})")
    })
}

pub(super) async fn apply(
    session: &Session,
    action: &Action,
    bootstrap: &BootstrapAction,
    reason: &str,
    backend: &BackendSlot,
) -> Result<Outcome, ActionError> {
    let seen = bootstrap.seen();
    let topology = session.topology();
    let stamp = stamp(session, action, reason);
    // Decided again on the locked row, by the same rule as the plan: the database's function
    // judged it and applied only if it holds; what it says is told here as it was in the plan.
    let decide = |row: &BootstrapRow, refusal: Option<&str>| -> Result<_, Declined> {
        let before = Bootstrap::try_from(row.clone())?;
        let meanwhile = check(session, bootstrap, &before, refusal)?;
        Ok((before, meanwhile))
    };
    let rests_on = precondition::rests_on(bootstrap.kind(), seen, bootstrap.exact_row_version());
    let subject = (seen.id, &rests_on);
    let written = write_bootstrap(topology.primary(), backend, subject, &stamp, decide);
    Ok(match written.await? {
        Written::AppliedBefore(audit_id) => Outcome::AlreadyApplied { audit_id },
        Written::Gone(()) => Outcome::Refused(Refusal::UnknownBootstrap { id: seen.id }),
        Written::Declined(declined) => declined.outcome()?,
        Written::Applied(written) => {
            let (before, meanwhile) = written.decided;
            let changes = match bootstrap.kind() {
                BootstrapKind::Retry => retry::changes(&before, written.items_reset),
                BootstrapKind::Cancel => cancel::changes(&before, Some(reason)),
            };
            Outcome::Applied(Applied {
                audit_id: written.head.id,
                chain_head: written.head,
                tenant_id: before.tenant_id.clone(),
                knowledge_space_id: before.knowledge_space_id,
                changes,
                before: written.before.json,
                after: Some(written.after),
                meanwhile,
            })
        }
    })
}
