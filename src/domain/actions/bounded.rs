//! Applying with a bounded wait (domain contract §3, see [`crate::domain`]). An operator must
//! never sit at "applying…" forever, nor be left guessing: when the deadline passes, the
//! operator stops waiting, or the connection is lost, the request is looked up by its id —
//! once its own transaction is over (or, if it never got one, under the row lock it would
//! have taken), so the lookup cannot overtake a transaction still committing — and the answer
//! is applied, not applied, or unknown while a transaction holds on.

use std::future::Future;
use std::time::Duration;

use super::action::Action;
use super::outcome::{Lookup, Outcome};
use super::{ActionError, apply_recording};
use crate::domain::session::Session;
use crate::store::StoreError;
use crate::store::lookup::LookupTx;
use crate::store::write::{Backend, BackendSlot};

/// How long the lookup waits for the row lock, and for an abandoned transaction to end.
const LOOKUP_WAIT: Duration = Duration::from_secs(3);

/// The whole lookup's bound, connecting included: a server that stops answering mid-lookup
/// must not keep the operator waiting either.
const LOOKUP_BOUND: Duration = Duration::from_secs(20);

/// [`super::apply`] for an operator: waits at most `deadline`, or until `give_up` completes
/// (Esc in the console), and resolves an unanswered or interrupted request by its id.
pub async fn apply_bounded(
    session: &Session,
    action: &Action,
    reason: &str,
    deadline: Duration,
    give_up: impl Future<Output = ()>,
) -> Result<Outcome, ActionError> {
    let result = apply_or_look_up(session, action, reason, deadline, give_up).await;
    // Every action in the log, with its request and its subject's whole id (a shown form
    // means nothing once the ids around it changed): an incident can be told again from it.
    let (verdict, line) = super::sentence(action, &result, &session.names());
    tracing::info!(
        "action {} on {} of request {} by {}: {verdict:?}: {}",
        action.kind().name(),
        action.subject_id(),
        action.request(),
        crate::domain::text::clean(&session.actor().user, 64),
        crate::domain::text::clean(&line, 1000),
    );
    // A chain cannot show records removed from its end; heads kept in the log can.
    if let Ok(Outcome::Applied(applied)) = &result {
        tracing::info!("audit chain head: {}", applied.chain_head);
    }
    result
}

async fn apply_or_look_up(
    session: &Session,
    action: &Action,
    reason: &str,
    deadline: Duration,
    give_up: impl Future<Output = ()>,
) -> Result<Outcome, ActionError> {
    let backend = BackendSlot::default();
    let why = tokio::select! {
        result = apply_recording(session, action, reason, &backend) => match result {
            // Its own lock wait ran out: another transaction holds the row, maybe an earlier
            // run of this very request.
            Err(ActionError::Store(locked @ StoreError::RowLocked { .. })) => {
                // Its own transaction wrote nothing. A fresh request has no other attempt;
                // a re-driven one's earlier run may be what holds the row.
                let found = if action.request().is_fresh() {
                    Lookup::NotApplied
                } else {
                    Lookup::RowLocked
                };
                return Ok(Outcome::Interrupted {
                    why: locked.to_string(),
                    found,
                    backend: None,
                });
            }
            Err(e) if !e.is_definite() => format!("the connection failed ({e})"),
            answered => return answered,
        },
        () = tokio::time::sleep(deadline) => {
            format!("no answer within the deadline of {}s", deadline.as_secs_f64())
        }
        () = give_up => "you stopped waiting".to_string(),
    };
    tracing::warn!(
        "{} ({}): {why}; looking request {} up",
        action.target(&session.names()),
        action.subject_id(),
        action.request()
    );
    // A lookup that cannot be made leaves the outcome unknown, never "failed".
    let found = match tokio::time::timeout(LOOKUP_BOUND, resolve(session, action, backend.get()))
        .await
        .unwrap_or_else(|_| Ok(Lookup::Unreachable))
    {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!("looking request {} up failed: {e}", action.request());
            return Ok(Outcome::Interrupted {
                why: format!("{why}; looking it up failed too ({e})"),
                found: Lookup::Unreachable,
                backend: backend.get(),
            });
        }
    };
    Ok(Outcome::Interrupted {
        why,
        found,
        backend: backend.get(),
    })
}

/// Looks `action`'s request up: ends its abandoned transaction (`backend`, when it got that
/// far) and waits for it to be over — or, without one, waits for the row lock and searches
/// under it — then searches the audit table for the action's id.
pub async fn resolve(
    session: &Session,
    action: &Action,
    backend: Option<Backend>,
) -> Result<Lookup, ActionError> {
    let mut lookup = LookupTx::open(session.topology().primary().host()).await?;
    let found = look(&mut lookup, action, backend).await;
    lookup.close().await;
    found
}

async fn look(
    lookup: &mut LookupTx,
    action: &Action,
    backend: Option<Backend>,
) -> Result<Lookup, ActionError> {
    if let Some(backend) = backend {
        lookup.end_transaction(backend).await?;
        // A frozen server cannot even end it: the row lock would only time out behind it.
        if lookup.still_open(backend, LOOKUP_WAIT).await? {
            return Ok(Lookup::StillOpen {
                backend_pid: backend.pid,
            });
        }
    }
    // This attempt's transaction is over (or never began). A fresh request had no other
    // attempt: the audit log says what became of it, whoever holds the row now.
    if action.request().is_fresh() {
        return found(lookup, action).await;
    }
    // A re-driven request's earlier run may still hold the row and commit: wait for the row
    // lock it took and look it up under that lock, so the answer cannot overtake it.
    if !lookup
        .lock(
            super::audit_subject(action),
            action.action_id(),
            LOOKUP_WAIT,
        )
        .await?
    {
        return Ok(Lookup::RowLocked);
    }
    found(lookup, action).await
}

async fn found(lookup: &mut LookupTx, action: &Action) -> Result<Lookup, ActionError> {
    let id = (
        action.action_id(),
        action.kind().name(),
        action.subject_id(),
    );
    Ok(match lookup.audit_of_action(id).await? {
        Some(audit_id) => Lookup::Applied { audit_id },
        None => Lookup::NotApplied,
    })
}
