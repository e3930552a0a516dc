//! Applying with a bounded wait (SPEC §3). An operator must never sit at "applying…" forever,
//! nor be left guessing: when the deadline passes, the operator stops waiting, or the
//! connection is lost, the request is looked up by its id — after taking the row lock it took,
//! so the lookup cannot overtake a transaction still committing — and the answer is applied,
//! not applied, or "unknown: backend pid N still open" while that transaction holds on.

use std::future::Future;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use super::action::{Action, Subject};
use super::outcome::Outcome;
use super::{ActionError, apply_recording};
use crate::domain::session::Session;
use crate::store::lookup::LookupTx;
use crate::store::write::AuditSubject;

/// How long the lookup waits for the row lock, and for an abandoned backend to end.
const LOOKUP_WAIT: Duration = Duration::from_secs(3);

/// What the lookup by request id found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Applied {
        audit_id: i64,
    },
    NotApplied,
    /// The request's transaction still holds on (a stalled server): no answer yet. Looking
    /// again later (the CLI's `--request-id`) tells.
    StillOpen {
        backend_pid: Option<i32>,
    },
}

/// [`super::apply`] for an operator: waits at most `deadline`, or until `give_up` completes
/// (Esc in the console), and resolves an unanswered or interrupted request by its id.
pub async fn apply_bounded(
    session: &Session,
    action: &Action,
    reason: &str,
    deadline: Duration,
    give_up: impl Future<Output = ()>,
) -> Result<Outcome, ActionError> {
    let backend = AtomicI32::new(0);
    let why = tokio::select! {
        result = apply_recording(session, action, reason, &backend) => match result {
            Err(e) if !e.is_definite() => format!("the connection failed ({e})"),
            answered => return answered,
        },
        () = tokio::time::sleep(deadline) => {
            format!("no answer within the deadline of {}s", deadline.as_secs_f64())
        }
        () = give_up => "you stopped waiting".to_string(),
    };
    let pid = Some(backend.load(Ordering::Relaxed)).filter(|pid| *pid != 0);
    tracing::warn!(
        "{}: {why}; looking request {} up",
        action.target(),
        action.request_id()
    );
    let found = resolve(session, action, pid).await?;
    Ok(Outcome::Interrupted { why, found })
}

/// Looks `action`'s request up: ends its abandoned transaction (`backend_pid`, when known),
/// takes the row lock, then searches the audit table for the request id.
pub async fn resolve(
    session: &Session,
    action: &Action,
    backend_pid: Option<i32>,
) -> Result<Lookup, ActionError> {
    let mut lookup = LookupTx::open(session.store().target()).await?;
    let found = look(&mut lookup, action, backend_pid).await;
    lookup.close().await;
    found
}

async fn look(
    lookup: &mut LookupTx,
    action: &Action,
    backend_pid: Option<i32>,
) -> Result<Lookup, ActionError> {
    if let Some(pid) = backend_pid {
        lookup.end_backend(pid).await?;
    }
    let subject = match action.subject() {
        Subject::Bootstrap(seen) => AuditSubject::Bootstrap(seen.id),
        Subject::Lease { seen, .. } => AuditSubject::Lease(seen.id),
    };
    if !lookup.lock(subject, LOOKUP_WAIT).await? {
        return Ok(Lookup::StillOpen { backend_pid });
    }
    if let Some(audit_id) = lookup.audit_of_request(action.request_id()).await? {
        return Ok(Lookup::Applied { audit_id });
    }
    // Not there yet: it never will be once its transaction is over.
    if let Some(pid) = backend_pid
        && lookup.backend_still_open(pid, LOOKUP_WAIT).await?
    {
        return Ok(Lookup::StillOpen {
            backend_pid: Some(pid),
        });
    }
    Ok(Lookup::NotApplied)
}
