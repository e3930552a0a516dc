//! Remove an orphan mutation lease (domain contract §3, see [`crate::domain`]): delete exactly
//! the lease the operator saw — same id, tenant, space and acquisition time. The plan shows the
//! evidence: the lease's age against the orphan threshold, its heartbeat where the table has
//! one, its operation and the space it blocks. A lease that is not an orphan suspect is
//! refused unless forced, and a forced removal is audited as forced.

use super::action::{Action, LeaseRemoval};
use super::outcome::{Applied, Change, Outcome, Plan};
use super::{ActionError, Decided, audit_record, finish};
use crate::domain::ids::IdNames;
use crate::domain::leases::{LeaseBoard, LeaseEvidence};
use crate::domain::model::{LeaseIdentity, MutationLease};
use crate::domain::refusal::Refusal;
use crate::domain::session::Session;
use crate::domain::text;
use crate::store::db::read_tx;
use crate::store::read;
use crate::store::write::{AuditOutcome, BackendSlot, WriteTx};

/// Scope, identity, then the orphan evidence (unless forced). `Ok` says whether force was
/// needed.
fn check(
    session: &Session,
    seen: &LeaseIdentity,
    evidence: &LeaseEvidence,
    force: bool,
) -> Result<bool, Refusal> {
    let current = &evidence.lease;
    session.check_scope(&current.tenant_id, current.knowledge_space_id)?;
    if current.identity() != *seen {
        return Err(Refusal::LeaseChanged {
            lease: session.names().shown(&seen.id),
        });
    }
    let forced = !evidence.orphan_suspect();
    if forced && !force {
        return Err(Refusal::LeaseNotOrphan {
            lease: session.names().shown(&seen.id),
            evidence: evidence.summary(),
        });
    }
    Ok(forced)
}

fn changes(evidence: &LeaseEvidence, forced: bool, names: &IdNames) -> Vec<Change> {
    let lease = &evidence.lease;
    // What freeing the space does depends on whether its bootstrap waits for the lease.
    let (from, to) = match &evidence.job {
        Some(job) if job.is_blocked() => ("blocked by the writer", "free for its bootstrap"),
        _ => ("held by the writer", "free for other writers"),
    };
    let mut changes = vec![
        Change::new(
            &format!("mutation lease {}", names.short(&lease.id)),
            format!("held by its {} writer", text::clean(&lease.operation, 32)),
            "deleted",
        ),
        Change::new(
            &format!("space {}", names.short(&lease.knowledge_space_id)),
            from,
            to,
        ),
    ];
    if forced {
        changes.push(Change::new(
            "orphan check",
            "not an orphan suspect",
            "overridden (forced, audited as such)",
        ));
    }
    changes
}

async fn gone(session: &Session, seen: &LeaseIdentity) -> Result<Refusal, ActionError> {
    let topology = session.topology();
    let primary = topology.primary();
    let layout = *primary.layout();
    let replacement = read_tx!(primary, |c| read::lease_of_space(
        &mut *c,
        &layout,
        &seen.tenant_id,
        seen.knowledge_space_id
    ))?;
    let names = session.names();
    Ok(Refusal::LeaseGone {
        lease: names.shown(&seen.id),
        replaced_by: replacement.map(|l| (names.shown(&l.id), l.acquired_at)),
    })
}

pub(super) async fn plan(
    session: &Session,
    action: &Action,
    removal: &LeaseRemoval,
) -> Result<Plan, ActionError> {
    let (seen, force) = (removal.seen(), removal.forced());
    let topology = session.topology();
    let primary = topology.primary();
    let layout = *primary.layout();
    let rows = read_tx!(primary, |c| read::leases(c, &layout, None, Some(seen.id)))?;
    let board = LeaseBoard::assess(rows, session.thresholds())?;
    let Some(evidence) = board.leases.into_iter().next() else {
        return Ok(Plan::refused(action, gone(session, seen).await?));
    };
    let checked = check(session, seen, &evidence, force);
    let forced = checked == Ok(true);
    let names = session.names();
    let verdict = checked.map(|forced| changes(&evidence, forced, &names));
    Ok(Plan {
        action: action.clone(),
        tenant_id: Some(evidence.lease.tenant_id.clone()),
        knowledge_space_id: Some(evidence.lease.knowledge_space_id),
        now: None,
        meanwhile: None,
        evidence: evidence.lines(&names),
        forced,
        applied_before: None,
        verdict,
    })
}

pub(super) async fn apply(
    session: &Session,
    action: &Action,
    removal: &LeaseRemoval,
    reason: &str,
    backend: &BackendSlot,
) -> Result<Outcome, ActionError> {
    let mut tx = WriteTx::begin(session.topology().primary(), backend).await?;
    let seen = (removal.seen(), removal.forced());
    let decided = decide_and_write(session, action, seen, reason, &mut tx).await;
    finish(tx, decided).await
}

async fn decide_and_write(
    session: &Session,
    action: &Action,
    (seen, force): (&LeaseIdentity, bool),
    reason: &str,
    tx: &mut WriteTx,
) -> Result<Decided, ActionError> {
    // Deleted first — the row lock comes with it — and decided on the row as it was: anything
    // refused below rolls the deletion back.
    let locked = tx.take_lease(seen.id).await?;
    // After the row lock, so a first attempt still committing is waited for, not overtaken.
    if let Some(audit_id) = tx.audit_of_action(action.action_id()).await? {
        return Ok(Decided::RollBack(Outcome::AlreadyApplied { audit_id }));
    }
    let Some(locked) = locked else {
        let replacement = tx
            .lease_of_space(&seen.tenant_id, seen.knowledge_space_id)
            .await?;
        let names = session.names();
        return Ok(Decided::RollBack(Outcome::Refused(Refusal::LeaseGone {
            lease: names.shown(&seen.id),
            replaced_by: replacement.map(|l| (names.shown(&l.id), l.acquired_at)),
        })));
    };
    let current = MutationLease::from(locked.row.clone());
    let now = tx.now().await?;
    let evidence = LeaseEvidence::new(current.clone(), None, now, session.thresholds());
    // Exactly the lease seen (id, tenant, space, acquisition), and the orphan evidence.
    let forced = match check(session, seen, &evidence, force) {
        Ok(forced) => forced,
        Err(refusal) => return Ok(Decided::RollBack(Outcome::Refused(refusal))),
    };
    let outcome = if forced {
        AuditOutcome::AppliedForced
    } else {
        AuditOutcome::Applied
    };
    let record = tx
        .insert_audit(&audit_record(
            session,
            action,
            (&current.tenant_id, current.knowledge_space_id),
            reason,
            (&locked.json, None),
            outcome,
        ))
        .await?;
    Ok(Decided::Commit(Outcome::Applied(Applied {
        audit_id: record.id,
        chain_head: record,
        tenant_id: current.tenant_id.clone(),
        knowledge_space_id: current.knowledge_space_id,
        changes: changes(&evidence, forced, &session.names()),
        before: locked.json,
        after: None,
        meanwhile: None,
    })))
}
