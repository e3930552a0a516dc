//! Operator actions (domain contract §3, see [`crate::domain`]): retry, cancel, remove an
//! orphan mutation lease.
//!
//! An [`Action`] is data: its [`Kind`], what the operator saw of its subject when deciding,
//! and a request id. [`plan`] says what it would change, what moved since the operator looked,
//! or why it is refused, without writing. [`apply`] runs it as one store call, one transaction:
//! lock the row, look the request id up (a request applied before is not applied again),
//! decide again from the locked row with the same rules, write, append one audit record,
//! commit. A decision that
//! no longer holds is a [`Refusal`] — a plain sentence — and nothing is written; a worker's
//! progress alone never refuses one (see [`precondition`]).

mod action;
mod bootstrap_action;
mod bounded;
mod cancel;
mod confirmation;
mod outcome;
mod pipeline;
mod precondition;
mod remove_lease;
mod retry;
pub(crate) mod settle;

pub use action::{
    Action, BootstrapAction, BootstrapKind, Kind, LeaseRemoval, RequestId, SeenBootstrap,
};
pub use bounded::{apply_bounded, resolve};
pub use cancel::CANCELED_ERROR_CODE;
pub use confirmation::Confirmation;
pub use outcome::{Applied, Change, Lookup, Outcome, Plan, Verdict, sentence};
pub use pipeline::{Planned, Tally, apply_each, plan_all};
pub(crate) use pipeline::{confirmation_of, plan_each, to_apply};
pub use settle::settle_command;

pub use super::refusal::{MAX_REASON_CHARS, Refusal};
use super::session::Session;
use crate::store::db::read_tx;
/// How the audit log records an applied action (the views name forced ones).
pub use crate::store::write::outcome_is_forced;
use crate::store::write::{AuditSubject, BackendSlot, Stamp};
use crate::store::{StoreError, read};
use crate::topology::Report;

/// Why an action could not be planned or applied at all (the database, not the rules).
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Row(#[from] super::model::RowError),
    #[error(transparent)]
    Connect(#[from] crate::store::connect::ConnectError),
    /// The split-brain guard refused the primary in use (see `topology::lineage`).
    #[error(transparent)]
    PrimaryInDoubt(#[from] crate::topology::Doubt),
}

impl ActionError {
    /// Whether the database answered, so the transaction certainly did not commit; otherwise
    /// (a lost connection, say) it may have, and only a lookup can tell.
    /// A connection the pooler lost under the transaction (`08…`, PgBouncer's "server conn
    /// crashed?"), or a backend ended by an administrator or a shutdown (`57P0…`), may have
    /// been in the middle of COMMIT: not definite either.
    pub(crate) fn is_definite(&self) -> bool {
        match self {
            Self::Store(StoreError::Database(sqlx::Error::Database(db))) => {
                let code = db.code().unwrap_or_default();
                !(code.starts_with("08")
                    || code.starts_with("57P0")
                    || crate::store::connect::pooler_said(db.as_ref()).is_some())
            }
            Self::Store(StoreError::Database(_)) | Self::Connect(_) => false,
            Self::Store(_) | Self::Row(_) | Self::PrimaryInDoubt(_) => true,
        }
    }
}

/// A reason the audit table accepts: not blank, at most [`MAX_REASON_CHARS`] characters
/// (trimmed). Checked before anything is planned, by every caller.
pub(crate) fn check_reason(reason: &str) -> Result<std::borrow::Cow<'_, str>, Refusal> {
    let reason = reason.trim();
    let chars = reason.chars().count();
    if chars == 0 {
        return Err(Refusal::MissingReason);
    }
    if chars > MAX_REASON_CHARS {
        return Err(Refusal::ReasonTooLong { chars });
    }
    // The reason goes to the audit log and, on cancel, to the platform's error message, read
    // by tools that do not defuse what a terminal would act on.
    // Line breaks and tabs are text; a CR only as part of a CRLF line end.
    let mut chars = reason.chars().peekable();
    let mut hidden = None;
    while let Some(c) = chars.next() {
        let text = c == '\n' || c == '\t' || (c == '\r' && chars.peek() == Some(&'\n'));
        if crate::domain::text::is_hidden(c) && !text {
            hidden = Some(c);
            break;
        }
    }
    if let Some(hidden) = hidden {
        // Escaped as Rust writes it (`\r`, `\u{9b}`): shown as itself it would not show.
        return Err(Refusal::ReasonHasHidden {
            shown: hidden.escape_unicode().to_string(),
        });
    }
    // A CRLF line end is stored as the line break it is: the audit log never holds a CR,
    // which `--reason` refuses on its own.
    Ok(if reason.contains('\r') {
        std::borrow::Cow::Owned(reason.replace("\r\n", "\n"))
    } else {
        std::borrow::Cow::Borrowed(reason)
    })
}

/// The session-level gates every action passes first, then the grants this kind needs.
fn gate(session: &Session, kind: Kind) -> Result<(), Refusal> {
    // A doubt of the split-brain guard is its own to refuse: asked afresh for each request.
    let access = session.topology().access().clone();
    if let (true, Some(reason)) = (access.refuses_actions(), access.read_only_reason()) {
        return Err(Refusal::ReadOnly {
            reason: reason.to_string(),
        });
    }
    audit_ready(session.topology().capabilities())?;
    let missing = session
        .topology()
        .capabilities()
        .missing_grants_for(kind.writes());
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Refusal::NotGranted {
            role: crate::domain::text::clean(&session.topology().capabilities().current_user, 64),
            missing,
        })
    }
}

/// Whether the console's audit log can take actions' records: it exists, with request ids.
pub(crate) fn audit_ready(capabilities: &crate::store::Capabilities) -> Result<(), Refusal> {
    if !capabilities.has_audit_table {
        return Err(Refusal::NoAuditTable);
    }
    if !capabilities.audit_request_ids {
        return Err(Refusal::AuditOutdated {
            missing: "request ids",
        });
    }
    if !capabilities.audit_chain {
        return Err(Refusal::AuditOutdated {
            missing: "its hash chain",
        });
    }
    if !capabilities.action_rules {
        return Err(Refusal::AuditOutdated {
            missing: "the actions' rules",
        });
    }
    if !capabilities.action_functions {
        return Err(Refusal::AuditOutdated {
            missing: "the action functions",
        });
    }
    Ok(())
}

/// What `action` would change now, or why it would be refused. Writes nothing.
pub async fn plan(session: &Session, action: &Action) -> Result<Plan, ActionError> {
    if let Err(refusal) = gate(session, action.kind()) {
        return Ok(Plan::refused(action, refusal));
    }
    let topology = session.topology();
    let id = (
        action.action_id(),
        action.kind().name(),
        action.subject_id(),
    );
    let applied = read_tx!(topology.primary(), |c| read::audit_of_action(&mut *c, id))?;
    if let Some(audit_id) = applied {
        return Ok(Plan::applied_before(action, audit_id));
    }
    match action {
        Action::Bootstrap(bootstrap) => bootstrap_action::plan(session, action, bootstrap).await,
        Action::Lease(removal) => remove_lease::plan(session, action, removal).await,
    }
}

/// The audit record of what `request` did of `kind` to the subject `subject_id`, if it was
/// applied: a re-driven request whose subject is gone (a removed lease) still gets its answer.
pub(crate) async fn applied_before(
    session: &Session,
    kind: Kind,
    request: RequestId,
    subject_id: uuid::Uuid,
) -> Result<Option<i64>, ActionError> {
    let id = (
        request.for_subject(kind, subject_id),
        kind.name(),
        subject_id,
    );
    let topology = session.topology();
    Ok(read_tx!(topology.primary(), |c| read::audit_of_action(
        &mut *c, id
    ))?)
}

/// Applies `action` in one transaction with an audit record, or refuses and writes nothing.
/// Waits as long as the database takes; [`apply_bounded`] is the operator's version.
pub async fn apply(
    session: &Session,
    action: &Action,
    reason: &str,
) -> Result<Outcome, ActionError> {
    apply_recording(session, action, reason, &BackendSlot::default()).await
}

/// [`apply`], writing the server process of its transaction to `backend` as soon as known.
async fn apply_recording(
    session: &Session,
    action: &Action,
    reason: &str,
    backend: &BackendSlot,
) -> Result<Outcome, ActionError> {
    let reason = match gate(session, action.kind())
        .and_then(|()| still_checked_primary(session))
        .and_then(|()| check_reason(reason))
    {
        Ok(reason) => reason,
        Err(refusal) => return Ok(Outcome::Refused(refusal)),
    };
    let applied = match action {
        Action::Bootstrap(bootstrap) => {
            bootstrap_action::apply(session, action, bootstrap, &reason, backend).await
        }
        Action::Lease(removal) => {
            remove_lease::apply(session, action, removal, &reason, backend).await
        }
    };
    match applied {
        // The server behind the primary's address changed since the guard asked.
        Err(ActionError::Store(crate::store::StoreError::LineageChanged(said))) => {
            Ok(Outcome::Refused(Refusal::PrimaryInDoubt { said }))
        }
        // The primary became a standby since the session opened: said as the refusal it is.
        Err(ActionError::Store(e)) if e.sqlstate().as_deref() == Some("25006") => {
            session.topology_handle().report(Report::InRecovery);
            Ok(Outcome::Refused(Refusal::ReadOnly {
                reason: crate::store::capabilities::STANDBY.into(),
            }))
        }
        applied => applied,
    }
}

/// A request approved by the split-brain guard is written only where it was checked: once the
/// primary moves to another host mid-request (a failover, a standby found in recovery),
/// nothing more is sent.
fn still_checked_primary(session: &Session) -> Result<(), Refusal> {
    let Some(approval) = session.approval() else {
        return Ok(());
    };
    let now = session.topology().primary().host().address();
    if approval.host == now {
        return Ok(());
    }
    Err(Refusal::PrimaryInDoubt {
        said: format!(
            "the primary moved from {} to {} during this request: nothing more was sent — run \
             the request again",
            crate::domain::text::clean(&approval.host, 100),
            crate::domain::text::clean(&now, 100)
        ),
    })
}

/// Why the decision on a locked row declined to write: a refusal, or a row that could not be
/// read as the domain's type.
#[derive(Debug)]
enum Declined {
    Refused(Refusal),
    Row(super::model::RowError),
}

impl From<Refusal> for Declined {
    fn from(refusal: Refusal) -> Self {
        Self::Refused(refusal)
    }
}

impl From<super::model::RowError> for Declined {
    fn from(error: super::model::RowError) -> Self {
        Self::Row(error)
    }
}

impl Declined {
    fn outcome(self) -> Result<Outcome, ActionError> {
        match self {
            Self::Refused(refusal) => Ok(Outcome::Refused(refusal)),
            Self::Row(error) => Err(error.into()),
        }
    }
}

/// The row an action's audit record is about (and whose lock a lookup takes).
fn audit_subject(action: &Action) -> AuditSubject {
    match action {
        Action::Bootstrap(bootstrap) => AuditSubject::Bootstrap(bootstrap.seen().id),
        Action::Lease(removal) => AuditSubject::Lease(removal.seen().id),
    }
}

/// What the audit record of `action` says about who asked, and why — and the cluster and
/// timeline its transaction must land on, when the split-brain guard approved one.
fn stamp<'a>(session: &'a Session, action: &'a Action, reason: &'a str) -> Stamp<'a> {
    let actor = session.actor();
    let approval = session.approval();
    Stamp {
        lineage: approval.and_then(|a| a.lineage),
        primary_forced: approval.is_some_and(|a| a.forced),
        actor: &actor.user,
        host: &actor.host,
        ssh_client: actor.ssh_client.as_deref(),
        request_id: action.request().uuid(),
        action_id: action.action_id(),
        reason,
    }
}
