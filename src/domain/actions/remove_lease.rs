//! Remove an orphan mutation lease (domain contract §3, see [`crate::domain`]): delete exactly
//! the lease the operator saw — same id, tenant, space and acquisition time. The plan shows the
//! evidence: the lease's age against the orphan threshold, its heartbeat where the table has
//! one, its operation and the space it blocks. A lease that is not an orphan suspect is
//! refused unless forced, and a forced removal is audited as forced. The rule is the
//! database's (`bootstrap_console.lease_removal_refusal`, console schema unit 0005), evaluated
//! over the lease the plan reads and the lease the removal deletes; this module says its
//! verdict.

use super::action::{Action, LeaseRemoval};
use super::outcome::{Applied, Change, Outcome, Plan};
use super::{ActionError, stamp};
use crate::domain::ids::IdNames;
use crate::domain::leases::{LeaseBoard, LeaseEvidence};
use crate::domain::model::{LeaseIdentity, MutationLease};
use crate::domain::refusal::Refusal;
use crate::domain::session::Session;
use crate::domain::text;
use crate::store::db::read_tx;
use crate::store::read;
use crate::store::rows::LeaseRow;
use crate::store::rules::LeaseSeen;
use crate::store::write::{BackendSlot, Written, remove_lease};

/// Scope, then the database's verdict over the lease now (`refusal`: identity, then the
/// orphan evidence unless forced). `Ok` says whether force was needed.
fn check(
    session: &Session,
    seen: &LeaseIdentity,
    evidence: &LeaseEvidence,
    refusal: Option<&str>,
) -> Result<bool, Refusal> {
    let current = &evidence.lease;
    session.check_scope(&current.tenant_id, current.knowledge_space_id)?;
    let lease = session.names().shown(&seen.id);
    match refusal {
        None => Ok(false),
        Some("forced") => Ok(true),
        Some("not_orphan") => Err(Refusal::LeaseNotOrphan {
            lease,
            evidence: evidence.summary(),
        }),
        // `changed`, and any verdict a newer schema may give that this console does not know.
        Some(_) => Err(Refusal::LeaseChanged { lease }),
    }
}

/// What the removal rests on, as the database's rule takes it.
fn rests_on<'a>(session: &Session, seen: &'a LeaseIdentity, force: bool) -> LeaseSeen<'a> {
    LeaseSeen {
        tenant_id: &seen.tenant_id,
        knowledge_space_id: seen.knowledge_space_id,
        acquired_at: seen.acquired_at,
        force,
        orphan_after: session.thresholds().orphan_after,
    }
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
    let rests_on = rests_on(session, seen, force);
    let (rows, refusal) = read::lease_judged(primary, seen.id, &rests_on).await?;
    let board = LeaseBoard::assess(rows, session.thresholds())?;
    let (Some(evidence), Some(refusal)) = (board.leases.into_iter().next(), refusal) else {
        return Ok(Plan::refused(action, gone(session, seen).await?));
    };
    let checked = check(session, seen, &evidence, refusal.as_deref());
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
    let (seen, force) = (removal.seen(), removal.forced());
    let topology = session.topology();
    let stamp = stamp(session, action, reason);
    // Exactly the lease seen (id, tenant, space, acquisition), and the orphan evidence.
    let decide = |row: &LeaseRow, now, refusal: Option<&str>| -> Result<_, Refusal> {
        let current = MutationLease::from(row.clone());
        let evidence = LeaseEvidence::new(current, None, now, session.thresholds());
        let forced = check(session, seen, &evidence, refusal)?;
        Ok((evidence, forced))
    };
    let rests_on = rests_on(session, seen, force);
    let written = remove_lease(
        topology.primary(),
        backend,
        (seen.id, &rests_on),
        &stamp,
        decide,
    );
    let written = written.await?;
    let names = session.names();
    Ok(match written {
        Written::AppliedBefore(audit_id) => Outcome::AlreadyApplied { audit_id },
        Written::Gone(replacement) => Outcome::Refused(Refusal::LeaseGone {
            lease: names.shown(&seen.id),
            replaced_by: replacement.map(|l| (names.shown(&l.id), l.acquired_at)),
        }),
        Written::Declined(refusal) => Outcome::Refused(refusal),
        Written::Applied(removed) => {
            let (evidence, forced) = removed.decided;
            let lease = &evidence.lease;
            Outcome::Applied(Applied {
                audit_id: removed.head.id,
                chain_head: removed.head,
                tenant_id: lease.tenant_id.clone(),
                knowledge_space_id: lease.knowledge_space_id,
                changes: changes(&evidence, forced, &names),
                before: removed.before.json,
                after: None,
                meanwhile: None,
            })
        }
    })
}
