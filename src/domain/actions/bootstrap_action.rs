//! The one flow retry and cancel share: plan from an unlocked read; apply in one transaction
//! that locks the row, decides again with the same rules, writes, audits and commits.

use uuid::Uuid;

use super::{
    Action, ActionError, Applied, Change, Outcome, Plan, Refusal, cancel, check_bootstrap, gate,
    refused_plan, retry,
};
use crate::domain::model::{Bootstrap, RunState};
use crate::domain::session::Session;
use crate::store::read;
use crate::store::write::WriteTx;

/// Which of the two bootstrap actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Retry,
    Cancel,
}

impl Kind {
    /// As written in the audit log and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Retry => "retry",
            Kind::Cancel => "cancel",
        }
    }

    /// The action on `bootstrap_id` as seen at `seen_row_version`.
    pub fn action(self, bootstrap_id: Uuid, seen_row_version: i32) -> Action {
        match self {
            Kind::Retry => Action::Retry {
                bootstrap_id,
                seen_row_version,
            },
            Kind::Cancel => Action::Cancel {
                bootstrap_id,
                seen_row_version,
            },
        }
    }

    /// SPEC §3: the run states each action is allowed from.
    fn check(self, session: &Session, bootstrap: &Bootstrap, seen: i32) -> Result<(), Refusal> {
        let (allowed, needs): (&[RunState], _) = match self {
            Kind::Retry => (
                &[RunState::Failed, RunState::Canceled],
                "failed or canceled",
            ),
            Kind::Cancel => (&[RunState::Queued, RunState::Running], "queued or running"),
        };
        check_bootstrap(session, bootstrap, seen, self.name(), allowed, needs)
    }
}

pub(super) async fn plan(
    session: &Session,
    kind: Kind,
    bootstrap_id: Uuid,
    seen_row_version: i32,
) -> Result<Plan, ActionError> {
    let action = kind.action(bootstrap_id, seen_row_version);
    if let Err(refusal) = gate(session, None) {
        return Ok(refused_plan(&action, None, refusal));
    }
    let pool = session.store().pool();
    let Some(row) = read::bootstrap(pool, bootstrap_id).await? else {
        let refusal = Refusal::UnknownBootstrap { id: bootstrap_id };
        return Ok(refused_plan(&action, None, refusal));
    };
    let bootstrap = Bootstrap::try_from(row)?;
    if let Err(refusal) = kind.check(session, &bootstrap, seen_row_version) {
        return Ok(refused_plan(&action, Some(&bootstrap), refusal));
    }
    let changes = match kind {
        Kind::Retry => {
            let to_reset = retry::items_to_reset(pool, bootstrap_id).await?;
            retry::changes(&bootstrap, to_reset)
        }
        Kind::Cancel => cancel::changes(&bootstrap, None),
    };
    Ok(Plan {
        action,
        tenant_id: Some(bootstrap.tenant_id.clone()),
        knowledge_space_id: Some(bootstrap.knowledge_space_id),
        verdict: Ok(changes),
    })
}

pub(super) async fn apply(
    session: &Session,
    kind: Kind,
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
    if let Err(refusal) = kind.check(session, &before, seen_row_version) {
        tx.rollback().await?;
        return Ok(Outcome::Refused(refusal));
    }
    let (after, changes): (_, Vec<Change>) = match kind {
        Kind::Retry => {
            let items_reset = tx.reset_items_for_retry(bootstrap_id).await?;
            let after = tx.retry_bootstrap(bootstrap_id).await?;
            (after, retry::changes(&before, items_reset as i64))
        }
        Kind::Cancel => {
            let after = tx.cancel_bootstrap(bootstrap_id, reason).await?;
            (after, cancel::changes(&before, Some(reason)))
        }
    };
    let audit_id = tx
        .insert_audit(&session.audit_record(
            kind.name(),
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
        changes,
        before: locked.json,
        after: Some(after.json),
    }))
}
