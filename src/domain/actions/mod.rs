//! Operator actions (SPEC §3): retry, cancel, remove an orphan mutation lease.
//!
//! An action is data ([`Action`]) carrying what the operator saw (a row version, a lease
//! identity). [`plan`] says what it would change, or why it is refused, without writing.
//! [`apply`] runs it in one transaction: lock the row, decide again from the locked row with
//! the same rules, write, append one audit record, commit. Anything that differs from what the
//! operator saw is a [`Refusal`] — a plain sentence — and nothing is written.

mod bootstrap_action;
mod cancel;
mod remove_lease;
mod retry;

pub use bootstrap_action::Kind;

use std::fmt;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::model::{Bootstrap, LeaseIdentity, RunState, short_id};
use super::session::Session;
use super::text;
use crate::store::StoreError;

/// Reasons longer than this are refused: an audit trail is for sentences, not documents.
pub const MAX_REASON_CHARS: usize = 500;

/// What the operator asked for, with what they saw when they asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Retry {
        bootstrap_id: Uuid,
        seen_row_version: i32,
    },
    Cancel {
        bootstrap_id: Uuid,
        seen_row_version: i32,
    },
    RemoveLease {
        seen: LeaseIdentity,
        force: bool,
    },
}

impl Action {
    /// The name used in the audit table and in messages.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Retry { .. } => "retry",
            Self::Cancel { .. } => "cancel",
            Self::RemoveLease { .. } => "remove_mutation_lease",
        }
    }
}

/// Why an action was not applied. Its `Display` is the sentence the operator reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    ReadOnly {
        reason: String,
    },
    NoAuditTable,
    MissingReason,
    ReasonTooLong {
        chars: usize,
    },
    UnknownBootstrap {
        id: Uuid,
    },
    OutsideScope {
        space: Uuid,
        tenant: String,
        scope: String,
    },
    WrongState {
        space: Uuid,
        state: RunState,
        action: &'static str,
        needs: &'static str,
    },
    Stale {
        space: Uuid,
        seen: i32,
        now: i32,
        state: RunState,
    },
    LeaseGone {
        lease: Uuid,
        replaced_by: Option<(Uuid, DateTime<Utc>)>,
    },
    LeaseChanged {
        lease: Uuid,
    },
    LeaseLive {
        lease: Uuid,
        expires_at: DateTime<Utc>,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReadOnly { reason } => write!(f, "the console is read-only: {reason}"),
            Self::NoAuditTable => write!(
                f,
                "actions need the console's audit table, which this database lacks: \
                 run `bootstrap-console migrate` first"
            ),
            Self::MissingReason => write!(f, "a reason is required"),
            Self::ReasonTooLong { chars } => write!(
                f,
                "the reason is {chars} characters long; keep it under {MAX_REASON_CHARS}"
            ),
            Self::UnknownBootstrap { id } => write!(f, "no bootstrap {id} exists"),
            Self::OutsideScope {
                space,
                tenant,
                scope,
            } => write!(
                f,
                "space {} belongs to tenant {}, outside this console's scope (tenant {})",
                short_id(space),
                text::clean(tenant, 64),
                text::clean(scope, 64)
            ),
            Self::WrongState {
                space,
                state,
                action,
                needs,
            } => write!(
                f,
                "space {} is {state}, {action} needs {needs}",
                short_id(space)
            ),
            Self::Stale {
                space,
                seen,
                now,
                state,
            } => write!(
                f,
                "bootstrap of space {} changed since you looked (row_version {seen} → {now}, now {state})",
                short_id(space)
            ),
            Self::LeaseGone {
                lease,
                replaced_by: None,
            } => {
                write!(f, "lease {} already gone", short_id(lease))
            }
            Self::LeaseGone {
                lease,
                replaced_by: Some((new, acquired)),
            } => write!(
                f,
                "lease {} already gone; the space now has a new lease {} acquired {}",
                short_id(lease),
                short_id(new),
                acquired.format("%Y-%m-%d %H:%M:%S UTC")
            ),
            Self::LeaseChanged { lease } => write!(
                f,
                "lease {} is not the lease you saw (its space or acquisition time differs)",
                short_id(lease)
            ),
            Self::LeaseLive { lease, expires_at } => write!(
                f,
                "lease {} is still live (heartbeat valid until {}); remove it only if you are \
                 sure its writer stopped, with force",
                short_id(lease),
                expires_at.format("%H:%M:%S UTC")
            ),
        }
    }
}

/// One line of what an action will change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub what: String,
    pub from: String,
    pub to: String,
}

impl Change {
    fn new(what: &str, from: impl fmt::Display, to: impl fmt::Display) -> Self {
        Self {
            what: what.to_string(),
            from: from.to_string(),
            to: to.to_string(),
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} → {}", self.what, self.from, self.to)
    }
}

/// What an action would do right now, or why it would be refused.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub action: Action,
    /// The tenant and space concerned, when known.
    pub tenant_id: Option<String>,
    pub knowledge_space_id: Option<Uuid>,
    pub verdict: Result<Vec<Change>, Refusal>,
}

/// The result of [`apply`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Applied(Applied),
    Refused(Refusal),
}

/// An applied action: the row before and after, and the audit record written with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub audit_id: i64,
    pub tenant_id: String,
    pub knowledge_space_id: Uuid,
    pub before: serde_json::Value,
    /// `None` for a deleted lease.
    pub after: Option<serde_json::Value>,
    pub changes: Vec<Change>,
}

/// The session-level gates every action passes first.
fn gate(session: &Session, reason: Option<&str>) -> Result<(), Refusal> {
    if let Some(reason) = session.access().read_only_reason() {
        return Err(Refusal::ReadOnly {
            reason: reason.to_string(),
        });
    }
    if !session.capabilities().has_audit_table {
        return Err(Refusal::NoAuditTable);
    }
    if let Some(reason) = reason {
        let chars = reason.trim().chars().count();
        if chars == 0 {
            return Err(Refusal::MissingReason);
        }
        if chars > MAX_REASON_CHARS {
            return Err(Refusal::ReasonTooLong { chars });
        }
    }
    Ok(())
}

/// Scope, row version and run state of a bootstrap action, in that order.
fn check_bootstrap(
    session: &Session,
    bootstrap: &Bootstrap,
    seen_row_version: i32,
    action: &'static str,
    allowed: &[RunState],
    needs: &'static str,
) -> Result<(), Refusal> {
    session.check_scope(&bootstrap.tenant_id, bootstrap.knowledge_space_id)?;
    if bootstrap.row_version != seen_row_version {
        return Err(Refusal::Stale {
            space: bootstrap.knowledge_space_id,
            seen: seen_row_version,
            now: bootstrap.row_version,
            state: bootstrap.run_state,
        });
    }
    if !allowed.contains(&bootstrap.run_state) {
        return Err(Refusal::WrongState {
            space: bootstrap.knowledge_space_id,
            state: bootstrap.run_state,
            action,
            needs,
        });
    }
    Ok(())
}

/// Why an action could not be planned or applied at all (the database, not the rules).
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Row(#[from] super::model::RowError),
}

/// What `action` would change now, or why it would be refused. Writes nothing.
pub async fn plan(session: &Session, action: &Action) -> Result<Plan, ActionError> {
    match action {
        Action::Retry {
            bootstrap_id,
            seen_row_version,
        } => bootstrap_action::plan(session, Kind::Retry, *bootstrap_id, *seen_row_version).await,
        Action::Cancel {
            bootstrap_id,
            seen_row_version,
        } => bootstrap_action::plan(session, Kind::Cancel, *bootstrap_id, *seen_row_version).await,
        Action::RemoveLease { seen, force } => remove_lease::plan(session, seen, *force).await,
    }
}

/// Applies `action` in one transaction with an audit record, or refuses and writes nothing.
pub async fn apply(
    session: &Session,
    action: &Action,
    reason: &str,
) -> Result<Outcome, ActionError> {
    if let Err(refusal) = gate(session, Some(reason)) {
        return Ok(Outcome::Refused(refusal));
    }
    let reason = reason.trim();
    match action {
        Action::Retry {
            bootstrap_id,
            seen_row_version,
        } => {
            let (id, seen) = (*bootstrap_id, *seen_row_version);
            bootstrap_action::apply(session, Kind::Retry, id, seen, reason).await
        }
        Action::Cancel {
            bootstrap_id,
            seen_row_version,
        } => {
            let (id, seen) = (*bootstrap_id, *seen_row_version);
            bootstrap_action::apply(session, Kind::Cancel, id, seen, reason).await
        }
        Action::RemoveLease { seen, force } => {
            remove_lease::apply(session, seen, *force, reason).await
        }
    }
}

/// Shared by retry and cancel: a refused plan for a bootstrap.
fn refused_plan(action: &Action, bootstrap: Option<&Bootstrap>, refusal: Refusal) -> Plan {
    Plan {
        action: action.clone(),
        tenant_id: bootstrap.map(|b| b.tenant_id.clone()),
        knowledge_space_id: bootstrap.map(|b| b.knowledge_space_id),
        verdict: Err(refusal),
    }
}
