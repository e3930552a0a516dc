//! Cancel (SPEC §3): a queued or running job becomes `canceled`. Clearing the lease columns
//! fences a live worker out — its next fenced write fails. Items are untouched, and the space
//! stays unreadable until retried.

use uuid::Uuid;

use super::{
    Action, ActionError, Applied, Change, Outcome, Plan, Refusal, check_bootstrap, gate,
    refused_plan,
};
use crate::domain::model::{Bootstrap, RunState};
use crate::domain::session::Session;
use crate::domain::text;
use crate::store::read;
use crate::store::write::WriteTx;

/// What a canceled job records as its error code.
pub const CANCELED_ERROR_CODE: &str = "operator_canceled";

fn check(session: &Session, bootstrap: &Bootstrap, seen_row_version: i32) -> Result<(), Refusal> {
    check_bootstrap(
        session,
        bootstrap,
        seen_row_version,
        "cancel",
        &[RunState::Queued, RunState::Running],
        "queued or running",
    )
}

fn changes(bootstrap: &Bootstrap, reason: Option<&str>) -> Vec<Change> {
    let mut changes = vec![Change::new(
        "run_state",
        bootstrap.run_state,
        RunState::Canceled,
    )];
    if let Some(worker) = &bootstrap.worker {
        changes.push(Change::new(
            "worker lease (its next write will fail)",
            text::clean(&worker.worker_id, 40),
            "released",
        ));
    }
    changes.push(Change::new(
        "last_error_code",
        bootstrap.last_error_code.as_deref().unwrap_or("NULL"),
        CANCELED_ERROR_CODE,
    ));
    changes.push(Change::new(
        "last_error_message",
        "…",
        reason.map_or("your reason".to_string(), |r| text::clean(r, 60)),
    ));
    changes.push(Change::new("readable", "no", "no (until retried)"));
    changes.push(Change::new(
        "row_version",
        bootstrap.row_version,
        bootstrap.row_version + 1,
    ));
    changes
}

pub(super) async fn plan(
    session: &Session,
    bootstrap_id: Uuid,
    seen_row_version: i32,
) -> Result<Plan, ActionError> {
    let action = Action::Cancel {
        bootstrap_id,
        seen_row_version,
    };
    if let Err(refusal) = gate(session, None) {
        return Ok(refused_plan(&action, None, refusal));
    }
    let Some(row) = read::bootstrap(session.store().pool(), bootstrap_id).await? else {
        return Ok(refused_plan(
            &action,
            None,
            Refusal::UnknownBootstrap { id: bootstrap_id },
        ));
    };
    let bootstrap = Bootstrap::try_from(row)?;
    if let Err(refusal) = check(session, &bootstrap, seen_row_version) {
        return Ok(refused_plan(&action, Some(&bootstrap), refusal));
    }
    Ok(Plan {
        action,
        tenant_id: Some(bootstrap.tenant_id.clone()),
        knowledge_space_id: Some(bootstrap.knowledge_space_id),
        verdict: Ok(changes(&bootstrap, None)),
    })
}

pub(super) async fn apply(
    session: &Session,
    bootstrap_id: Uuid,
    seen_row_version: i32,
    reason: &str,
) -> Result<Outcome, ActionError> {
    let mut tx = WriteTx::begin(session.store()).await?;
    let Some(locked) = tx.lock_bootstrap(bootstrap_id).await? else {
        tx.rollback().await?;
        return Ok(Outcome::Refused(Refusal::UnknownBootstrap {
            id: bootstrap_id,
        }));
    };
    let before = Bootstrap::try_from(locked.row)?;
    if let Err(refusal) = check(session, &before, seen_row_version) {
        tx.rollback().await?;
        return Ok(Outcome::Refused(refusal));
    }
    let after = tx.cancel_bootstrap(bootstrap_id, reason).await?;
    let audit_id = tx
        .insert_audit(&session.audit_record(
            "cancel",
            &before.tenant_id,
            before.knowledge_space_id,
            Some(bootstrap_id),
            None,
            reason,
            &locked.json,
            Some(&after.json),
            "applied",
        ))
        .await?;
    tx.commit().await?;
    Ok(Outcome::Applied(Applied {
        audit_id,
        tenant_id: before.tenant_id.clone(),
        knowledge_space_id: before.knowledge_space_id,
        changes: changes(&before, Some(reason)),
        before: locked.json,
        after: Some(after.json),
    }))
}
