//! The one flow retry and cancel share: plan from an unlocked read; apply in one transaction
//! that locks the row, looks the request id up, decides again with the same rules, writes,
//! audits and commits.

use super::action::{Action, BootstrapAction, BootstrapKind, Kind, SeenBootstrap};
use super::outcome::{Applied, Change, Outcome, Plan};
use super::{ActionError, Decided, audit_record, cancel, finish, precondition, retry};
use crate::domain::model::Bootstrap;
use crate::domain::refusal::Refusal;
use crate::domain::session::Session;
use crate::store::db::read_tx;
use crate::store::read;
use crate::store::write::{AuditOutcome, BackendSlot, WriteTx};

/// Scope first, then the action's own precondition; `Ok` carries what moved meanwhile.
fn check(
    session: &Session,
    action: &BootstrapAction,
    now: &Bootstrap,
) -> Result<Option<String>, Refusal> {
    session.check_scope(&now.tenant_id, now.knowledge_space_id)?;
    let names = session.names();
    let (kind, seen) = (action.kind(), action.seen());
    precondition::decide(kind, seen, action.exact_row_version(), now, &names)
}

pub(super) async fn plan(
    session: &Session,
    action: &Action,
    bootstrap: &BootstrapAction,
) -> Result<Plan, ActionError> {
    let seen = bootstrap.seen();
    let topology = session.topology();
    let primary = topology.primary();
    let Some(row) = read_tx!(primary, |c| read::bootstrap(c, seen.id))? else {
        return Ok(Plan::refused(
            action,
            Refusal::UnknownBootstrap { id: seen.id },
        ));
    };
    let now = Bootstrap::try_from(row)?;
    let verdict = match check(session, bootstrap, &now) {
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
    Some(if request.is_some_and(|r| session.applied_here(&r)) {
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
    let mut tx = WriteTx::begin(session.topology().primary(), backend).await?;
    let decided = decide_and_write(session, action, bootstrap, reason, &mut tx).await;
    finish(tx, decided).await
}

async fn decide_and_write(
    session: &Session,
    action: &Action,
    bootstrap: &BootstrapAction,
    reason: &str,
    tx: &mut WriteTx,
) -> Result<Decided, ActionError> {
    let seen = bootstrap.seen();
    let locked = tx.lock_bootstrap(seen.id).await?;
    // After the row lock, so a first attempt still committing is waited for, not overtaken.
    if let Some(audit_id) = tx.audit_of_action(action.action_id()).await? {
        return Ok(Decided::RollBack(Outcome::AlreadyApplied { audit_id }));
    }
    let Some(locked) = locked else {
        let refusal = Refusal::UnknownBootstrap { id: seen.id };
        return Ok(Decided::RollBack(Outcome::Refused(refusal)));
    };
    let before = Bootstrap::try_from(locked.row)?;
    let meanwhile = match check(session, bootstrap, &before) {
        Ok(meanwhile) => meanwhile,
        Err(refusal) => return Ok(Decided::RollBack(Outcome::Refused(refusal))),
    };
    let (after, changes): (_, Vec<Change>) = match bootstrap.kind() {
        BootstrapKind::Retry => {
            let items_reset = tx.reset_items_for_retry(before.id).await?;
            let after = tx.retry_bootstrap(before.id).await?;
            (after, retry::changes(&before, items_reset as i64))
        }
        BootstrapKind::Cancel => {
            let after = tx
                .cancel_bootstrap(before.id, cancel::CANCELED_ERROR_CODE, reason)
                .await?;
            (after, cancel::changes(&before, Some(reason)))
        }
    };
    let record = tx
        .insert_audit(&audit_record(
            session,
            action,
            (&before.tenant_id, before.knowledge_space_id),
            reason,
            (&locked.json, Some(&after.json)),
            AuditOutcome::Applied,
        ))
        .await?;
    Ok(Decided::Commit(Outcome::Applied(Applied {
        audit_id: record.id,
        chain_head: record,
        tenant_id: before.tenant_id.clone(),
        knowledge_space_id: before.knowledge_space_id,
        changes,
        before: locked.json,
        after: Some(after.json),
        meanwhile,
    })))
}
