//! Remove an orphan mutation lease (SPEC §3): delete exactly the lease the operator saw — same
//! id, tenant, space and acquisition time. Where the lease table has the later heartbeat
//! columns and the lease is still live, refuse unless forced.

use chrono::{DateTime, Utc};

use super::{Action, ActionError, Applied, Change, Outcome, Plan, Refusal, gate};
use crate::domain::model::{LeaseIdentity, MutationLease, short_id};
use crate::domain::session::Session;
use crate::domain::text;
use crate::store::read;
use crate::store::write::WriteTx;

fn check(
    session: &Session,
    seen: &LeaseIdentity,
    current: &MutationLease,
    now: DateTime<Utc>,
    force: bool,
) -> Result<(), Refusal> {
    session.check_scope(&current.tenant_id, current.knowledge_space_id)?;
    if current.identity() != *seen {
        return Err(Refusal::LeaseChanged { lease: seen.id });
    }
    if let Some(expires_at) = current.expires_at
        && expires_at > now
        && !force
    {
        return Err(Refusal::LeaseLive {
            lease: seen.id,
            expires_at,
        });
    }
    Ok(())
}

fn changes(lease: &MutationLease, now: DateTime<Utc>, forced: bool) -> Vec<Change> {
    let held = now - lease.acquired_at;
    let mut changes = vec![Change::new(
        &format!("mutation lease {}", short_id(&lease.id)),
        format!(
            "{} held for {}m by a {} writer",
            text::clean(&lease.tenant_id, 40),
            held.num_minutes(),
            text::clean(&lease.operation, 32)
        ),
        "deleted",
    )];
    changes.push(Change::new(
        &format!("space {}", short_id(&lease.knowledge_space_id)),
        "blocked for bootstrap snapshot",
        "free for its bootstrap to capture",
    ));
    if forced {
        changes.push(Change::new(
            "heartbeat check",
            "lease still live",
            "overridden (force)",
        ));
    }
    changes
}

async fn gone(session: &Session, seen: &LeaseIdentity) -> Result<Refusal, ActionError> {
    let replacement = read::lease_of_space(
        session.store().pool(),
        session.store().layout(),
        &seen.tenant_id,
        seen.knowledge_space_id,
    )
    .await?;
    Ok(Refusal::LeaseGone {
        lease: seen.id,
        replaced_by: replacement.map(|l| (l.id, l.acquired_at)),
    })
}

pub(super) async fn plan(
    session: &Session,
    seen: &LeaseIdentity,
    force: bool,
) -> Result<Plan, ActionError> {
    let action = Action::RemoveLease {
        seen: seen.clone(),
        force,
    };
    let refused = |refusal| Plan {
        action: action.clone(),
        tenant_id: Some(seen.tenant_id.clone()),
        knowledge_space_id: Some(seen.knowledge_space_id),
        verdict: Err(refusal),
    };
    if let Err(refusal) = gate(session, None) {
        return Ok(refused(refusal));
    }
    let store = session.store();
    let Some(row) = read::lease(store.pool(), store.layout(), seen.id).await? else {
        return Ok(refused(gone(session, seen).await?));
    };
    let current = MutationLease::from(row);
    let now = session.database_now().await?;
    if let Err(refusal) = check(session, seen, &current, now, force) {
        return Ok(refused(refusal));
    }
    let forced = current.expires_at.is_some_and(|e| e > now);
    Ok(Plan {
        action: action.clone(),
        tenant_id: Some(current.tenant_id.clone()),
        knowledge_space_id: Some(current.knowledge_space_id),
        verdict: Ok(changes(&current, now, forced)),
    })
}

pub(super) async fn apply(
    session: &Session,
    seen: &LeaseIdentity,
    force: bool,
    reason: &str,
) -> Result<Outcome, ActionError> {
    let mut tx = WriteTx::begin(session.store()).await?;
    let Some(locked) = tx.lock_lease(seen.id).await? else {
        let replacement = tx
            .lease_of_space(&seen.tenant_id, seen.knowledge_space_id)
            .await?;
        tx.rollback().await?;
        return Ok(Outcome::Refused(Refusal::LeaseGone {
            lease: seen.id,
            replaced_by: replacement.map(|l| (l.id, l.acquired_at)),
        }));
    };
    let current = MutationLease::from(locked.row.clone());
    let now = tx.now().await?;
    if let Err(refusal) = check(session, seen, &current, now, force) {
        tx.rollback().await?;
        return Ok(Outcome::Refused(refusal));
    }
    let forced = current.expires_at.is_some_and(|e| e > now);
    if !tx.delete_lease(&locked.row).await? {
        tx.rollback().await?;
        return Ok(Outcome::Refused(Refusal::LeaseChanged { lease: seen.id }));
    }
    let audit_id = tx
        .insert_audit(&session.audit_record(
            "remove_mutation_lease",
            &current.tenant_id,
            current.knowledge_space_id,
            None,
            Some(current.id),
            reason,
            &locked.json,
            None,
            if forced { "applied_forced" } else { "applied" },
        ))
        .await?;
    tx.commit().await?;
    Ok(Outcome::Applied(Applied {
        audit_id,
        tenant_id: current.tenant_id.clone(),
        knowledge_space_id: current.knowledge_space_id,
        changes: changes(&current, now, forced),
        before: locked.json,
        after: None,
    }))
}
