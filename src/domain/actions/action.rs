//! What an operator asks for: an [`Action`] of one [`Kind`] on one subject, carrying what the
//! operator saw when they decided and a request id that makes applying it idempotent.
//!
//! A request id is a UUIDv7 made by the console (printed as `request <uuid>` by the CLI, shown
//! in the TUI's dialog); each action of the request carries its own id, a UUIDv5 of the
//! request id, the action and its subject. The audit record stores both: `request_id` (a bulk
//! request's records share it; search the log by what was printed) and `action_id` (unique),
//! so an action applies at most once. `--request-id` re-drives an earlier run: what it applied
//! is answered "already applied (audit record N)", a removed lease included, and the rest is
//! applied once; the same id given to another command or subject never reads as applied.

use std::fmt;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::board::BoardRow;
use crate::domain::ids::IdNames;
use crate::domain::model::{Bootstrap, Checkpoint, LeaseIdentity, RunState};

/// The three operator actions (domain contract §3, see [`crate::domain`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Retry,
    Cancel,
    RemoveLease,
}

impl Kind {
    /// What this action calls to write (the grant it needs follows).
    pub(crate) fn writes(self) -> crate::store::capabilities::Writes {
        use crate::store::capabilities::Writes;
        match self {
            Self::Retry => Writes::RETRY,
            Self::Cancel => Writes::CANCEL,
            Self::RemoveLease => Writes::REMOVE_LEASE,
        }
    }

    /// As written in the audit table (its CHECK constraint lists these).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Retry => "retry",
            Self::Cancel => "cancel",
            Self::RemoveLease => "remove_mutation_lease",
        }
    }

    /// As said to the operator: "retry", "cancel", "remove lease".
    pub(crate) fn verb(self) -> &'static str {
        match self {
            Self::Retry => "retry",
            Self::Cancel => "cancel",
            Self::RemoveLease => "remove lease",
        }
    }
}

/// The actions whose subject is a bootstrap: what `r` and `c`, `retry` and `cancel` ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BootstrapKind {
    Retry,
    Cancel,
}

impl BootstrapKind {
    pub fn kind(self) -> Kind {
        match self {
            Self::Retry => Kind::Retry,
            Self::Cancel => Kind::Cancel,
        }
    }

    pub(crate) fn verb(self) -> &'static str {
        self.kind().verb()
    }

    /// This kind's action on the bootstrap as seen, as part of `request`.
    pub(crate) fn action(self, seen: SeenBootstrap, request: RequestId) -> Action {
        match self {
            Self::Retry => Action::retry(seen, request),
            Self::Cancel => Action::cancel(seen, request),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.verb())
    }
}

/// What the operator saw of a bootstrap when they decided: the fields a decision rests on and
/// the progress that "meanwhile" sentences compare against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenBootstrap {
    pub id: Uuid,
    pub space: Uuid,
    pub run_state: RunState,
    pub checkpoint: Checkpoint,
    pub completed_documents: i32,
    pub total_documents: i32,
    /// Which failed or canceled episode (retry rests on it being the same one).
    pub completed_at: Option<DateTime<Utc>>,
    pub row_version: i32,
}

impl From<&Bootstrap> for SeenBootstrap {
    fn from(b: &Bootstrap) -> Self {
        Self {
            id: b.id,
            space: b.knowledge_space_id,
            run_state: b.run_state,
            checkpoint: b.checkpoint,
            completed_documents: b.completed_documents,
            total_documents: b.total_documents,
            completed_at: b.completed_at,
            row_version: b.row_version,
        }
    }
}

impl From<&BoardRow> for SeenBootstrap {
    fn from(r: &BoardRow) -> Self {
        Self {
            id: r.id,
            space: r.space,
            run_state: r.run_state,
            checkpoint: r.checkpoint,
            completed_documents: r.completed,
            total_documents: r.total,
            completed_at: r.completed_at,
            row_version: r.row_version,
        }
    }
}

/// One operator request on one subject: an action on a bootstrap, or the removal of a
/// lease. Each subject has its own type, so an action that cannot happen (a lease removal on a
/// bootstrap, a retry of a lease) cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Bootstrap(BootstrapAction),
    Lease(LeaseRemoval),
}

/// Retry or cancel of one bootstrap, as the operator saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapAction {
    kind: BootstrapKind,
    seen: SeenBootstrap,
    /// The operator's request, as printed; several actions of a bulk request share it.
    request: RequestId,
    /// This action's own id, derived from the request: unique in the audit log.
    action_id: Uuid,
    exact_row_version: Option<i32>,
}

/// Removal of exactly the lease the operator saw; `force` overrides the orphan evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRemoval {
    seen: LeaseIdentity,
    force: bool,
    request: RequestId,
    action_id: Uuid,
}

impl BootstrapAction {
    pub fn kind(&self) -> BootstrapKind {
        self.kind
    }

    /// The bootstrap as the operator saw it when deciding.
    pub fn seen(&self) -> &SeenBootstrap {
        &self.seen
    }

    /// The exact row version a script demands (`--row-version`), if any.
    pub(crate) fn exact_row_version(&self) -> Option<i32> {
        self.exact_row_version
    }
}

impl LeaseRemoval {
    /// The lease as the operator saw it.
    pub fn seen(&self) -> &LeaseIdentity {
        &self.seen
    }

    /// Whether the orphan evidence is overridden.
    pub fn forced(&self) -> bool {
        self.force
    }
}

/// The id of one operator request: new for every request, or given again to re-drive one.
/// Each subject of a request gets an id of its own derived from it, so a bulk request applied
/// twice still applies each space once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestId {
    id: Uuid,
    /// Made by this process, so no other attempt of it can exist anywhere: an answer about
    /// it needs no row lock (a re-driven request's earlier run may still hold the row).
    fresh: bool,
}

impl RequestId {
    pub fn new() -> Self {
        Self {
            id: Uuid::now_v7(),
            fresh: true,
        }
    }

    /// A request given again (`--request-id`): an earlier run of it may still be committing.
    pub fn from_uuid(id: Uuid) -> Self {
        Self { id, fresh: false }
    }

    pub fn uuid(self) -> Uuid {
        self.id
    }

    pub(crate) fn is_fresh(self) -> bool {
        self.fresh
    }

    /// The action id this request's action of `kind` on `subject` carries: a UUIDv5 of the three, so
    /// a request id given again to another command or subject can never match what it did.
    pub fn for_subject(self, kind: Kind, subject: Uuid) -> Uuid {
        let mut name = kind.name().as_bytes().to_vec();
        name.extend_from_slice(subject.as_bytes());
        Uuid::new_v5(&self.id, &name)
    }
}

impl Default for RequestId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.id.fmt(f)
    }
}

impl Action {
    /// Retry the job as seen, as part of `request`.
    pub fn retry(seen: SeenBootstrap, request: RequestId) -> Self {
        Self::on_bootstrap(BootstrapKind::Retry, seen, request)
    }

    /// Cancel the job as seen, as part of `request`.
    pub fn cancel(seen: SeenBootstrap, request: RequestId) -> Self {
        Self::on_bootstrap(BootstrapKind::Cancel, seen, request)
    }

    fn on_bootstrap(kind: BootstrapKind, seen: SeenBootstrap, request: RequestId) -> Self {
        Self::Bootstrap(BootstrapAction {
            kind,
            request,
            action_id: request.for_subject(kind.kind(), seen.id),
            seen,
            exact_row_version: None,
        })
    }

    /// Remove exactly the lease seen, as part of `request`.
    pub fn remove_lease(seen: LeaseIdentity, force: bool, request: RequestId) -> Self {
        Self::Lease(LeaseRemoval {
            request,
            action_id: request.for_subject(Kind::RemoveLease, seen.id),
            seen,
            force,
        })
    }

    /// Also demand this exact row version (scripts' `--row-version`): any write to the row
    /// since then refuses the action, progress included. A lease has no row version.
    pub fn with_exact_row_version(mut self, row_version: i32) -> Self {
        if let Self::Bootstrap(action) = &mut self {
            action.exact_row_version = Some(row_version);
        }
        self
    }

    /// The same request, decided again on what is there now (the operator confirmed the new
    /// plan). Keeps the request id: the request was not applied.
    pub(crate) fn reseen(&self, now: SeenBootstrap) -> Self {
        let mut again = self.clone();
        if let Self::Bootstrap(action) = &mut again {
            action.seen = now;
            action.exact_row_version = None;
        }
        again
    }

    pub fn kind(&self) -> Kind {
        match self {
            Self::Bootstrap(action) => action.kind.kind(),
            Self::Lease(_) => Kind::RemoveLease,
        }
    }

    /// The request this action belongs to: what the operator sees, and re-drives.
    pub fn request(&self) -> RequestId {
        match self {
            Self::Bootstrap(action) => action.request,
            Self::Lease(removal) => removal.request,
        }
    }

    /// This action's own id, as the audit log stores it (unique).
    pub fn action_id(&self) -> Uuid {
        match self {
            Self::Bootstrap(action) => action.action_id,
            Self::Lease(removal) => removal.action_id,
        }
    }

    /// The bootstrap seen, for retry and cancel.
    pub fn seen_bootstrap(&self) -> Option<&SeenBootstrap> {
        match self {
            Self::Bootstrap(action) => Some(&action.seen),
            Self::Lease(_) => None,
        }
    }

    /// Whether this is a lease removal that overrides the orphan evidence.
    pub fn is_forced(&self) -> bool {
        matches!(self, Self::Lease(removal) if removal.force)
    }

    /// The id a command names the subject by: the bootstrap's, or the lease's.
    pub(crate) fn subject_id(&self) -> Uuid {
        match self {
            Self::Bootstrap(action) => action.seen.id,
            Self::Lease(removal) => removal.seen.id,
        }
    }

    /// The ids a sentence about this action prints: the subject's and its space's.
    pub(crate) fn shown_ids(&self) -> [Uuid; 2] {
        match self {
            Self::Bootstrap(action) => [action.seen.id, action.seen.space],
            Self::Lease(removal) => [removal.seen.id, removal.seen.knowledge_space_id],
        }
    }

    /// How the operator names the subject: "space 0190a1b2" or "lease 7c41d0e9", each id in
    /// the form that tells it from the others in scope.
    pub(crate) fn target(&self, names: &IdNames) -> String {
        match self {
            Self::Bootstrap(action) => format!("space {}", names.short(&action.seen.space)),
            Self::Lease(removal) => format!("lease {}", names.short(&removal.seen.id)),
        }
    }
}
