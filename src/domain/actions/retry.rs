//! Retry (SPEC §3): a failed or canceled job goes back to `queued` in place. The checkpoint and
//! the frozen item set are kept — never a second snapshot; failed and running items return to
//! pending.

use uuid::Uuid;

use super::{
    Action, ActionError, Applied, Change, Outcome, Plan, Refusal, check_bootstrap, gate,
    refused_plan,
};
use crate::domain::model::{Bootstrap, ItemStatus, RunState};
use crate::domain::session::Session;
use crate::store::read;
use crate::store::write::WriteTx;

fn check(session: &Session, bootstrap: &Bootstrap, seen_row_version: i32) -> Result<(), Refusal> {
    check_bootstrap(
        session,
        bootstrap,
        seen_row_version,
        "retry",
        &[RunState::Failed, RunState::Canceled],
        "failed or canceled",
    )
}

fn changes(bootstrap: &Bootstrap, items_reset: i64) -> Vec<Change> {
    let mut changes = vec![Change::new(
        "run_state",
        bootstrap.run_state,
        RunState::Queued,
    )];
    if let Some(code) = &bootstrap.last_error_code {
        changes.push(Change::new("last_error_code", code, "NULL"));
    }
    if bootstrap.completed_at.is_some() {
        changes.push(Change::new("completed_at", "set", "NULL"));
    }
    changes.push(Change::new(
        "items (failed or running)",
        format!("{items_reset}"),
        "pending",
    ));
    changes.push(Change::new(
        "checkpoint (kept, no new snapshot)",
        bootstrap.checkpoint,
        bootstrap.checkpoint,
    ));
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
    let action = Action::Retry {
        bootstrap_id,
        seen_row_version,
    };
    if let Err(refusal) = gate(session, None) {
        return Ok(refused_plan(&action, None, refusal));
    }
    let pool = session.store().pool();
    let Some(row) = read::bootstrap(pool, bootstrap_id).await? else {
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
    let counts = read::item_counts(pool, bootstrap_id).await?;
    let to_reset: i64 = counts
        .iter()
        .filter(|(status, _)| {
            matches!(
                ItemStatus::parse(status),
                Some(ItemStatus::Failed | ItemStatus::Running)
            )
        })
        .map(|(_, n)| n)
        .sum();
    Ok(Plan {
        action,
        tenant_id: Some(bootstrap.tenant_id.clone()),
        knowledge_space_id: Some(bootstrap.knowledge_space_id),
        verdict: Ok(changes(&bootstrap, to_reset)),
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
    let items_reset = tx.reset_items_for_retry(bootstrap_id).await?;
    let after = tx.retry_bootstrap(bootstrap_id).await?;
    let audit_id = tx
        .insert_audit(&session.audit_record(
            "retry",
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
        changes: changes(&before, items_reset as i64),
        before: locked.json,
        after: Some(after.json),
    }))
}
