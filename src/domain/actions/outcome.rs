//! What planning and applying an action report, and the one sentence per result that the TUI
//! and the command line both print.

use std::fmt;

use uuid::Uuid;

use super::ActionError;
use super::action::{Action, SeenBootstrap};
use crate::domain::ids::IdNames;
use crate::domain::refusal::Refusal;

/// One line of what an action will change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub what: String,
    pub from: String,
    pub to: String,
}

impl Change {
    pub(super) fn new(what: &str, from: impl fmt::Display, to: impl fmt::Display) -> Self {
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
    /// The bootstrap as it is now (retry and cancel): a changed decision is re-made from it.
    pub now: Option<SeenBootstrap>,
    /// What moved since the operator looked, when something did.
    pub meanwhile: Option<String>,
    /// What the decision rests on, shown before the changes (a lease's age against the
    /// orphan threshold, its operation, the space it blocks).
    pub evidence: Vec<String>,
    /// It applies only because it is forced (a lease that is not an orphan suspect): the
    /// confirmation is the stronger one.
    pub forced: bool,
    /// This request was applied before (audit record id): applying it again writes nothing.
    pub applied_before: Option<i64>,
    pub verdict: Result<Vec<Change>, Refusal>,
}

impl Plan {
    /// A plan that knows nothing of the job beyond its verdict.
    fn bare(action: &Action, verdict: Result<Vec<Change>, Refusal>) -> Self {
        Self {
            action: action.clone(),
            tenant_id: None,
            knowledge_space_id: None,
            now: None,
            meanwhile: None,
            evidence: Vec::new(),
            forced: false,
            applied_before: None,
            verdict,
        }
    }

    pub(super) fn refused(action: &Action, refusal: Refusal) -> Self {
        Self::bare(action, Err(refusal))
    }

    /// A plan for a request applied before: nothing to change, nothing to decide.
    pub(super) fn applied_before(action: &Action, audit_id: i64) -> Self {
        Self {
            applied_before: Some(audit_id),
            ..Self::bare(action, Ok(Vec::new()))
        }
    }

    /// Whether the job moved on since the operator looked in a way that changes the decision.
    pub fn decision_changed(&self) -> bool {
        self.verdict
            .as_ref()
            .is_err_and(|refusal| refusal.decision_changed())
    }

    /// The same request, resting from now on on the state this plan read on the primary (when
    /// what the operator looked at was a standby's copy, older by the lag), and the plan
    /// without what "moved" only because of that lag.
    pub(crate) fn rebased(&mut self) -> Action {
        if let (Some(now), false) = (&self.now, self.decision_changed()) {
            self.meanwhile = None;
            self.action = self.action.reseen(now.clone());
        }
        self.action.clone()
    }

    /// The same request, decided on what is there now (when the decision changed).
    pub fn replanned_action(&self) -> Action {
        match (&self.now, self.decision_changed()) {
            (Some(now), true) => self.action.reseen(now.clone()),
            _ => self.action.clone(),
        }
    }
}

/// The result of [`super::apply`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Applied(Applied),
    /// This request id was applied before (the request was re-driven): nothing more written.
    AlreadyApplied {
        audit_id: i64,
    },
    Refused(Refusal),
    /// No answer came (`why`); the lookup by request id found this. `backend` is the
    /// attempt's transaction, when it got that far: what a later lookup must see end.
    Interrupted {
        why: String,
        found: Lookup,
        backend: Option<crate::store::write::Backend>,
    },
}

/// An applied action: the row before and after, and the audit record written with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub audit_id: i64,
    /// The audit chain's head with this action's record: logged, so that records removed
    /// from the chain's end can be told later (`audit verify --expect-head`).
    pub(crate) chain_head: crate::domain::audit_chain::ChainHead,
    pub(crate) tenant_id: String,
    pub(crate) knowledge_space_id: Uuid,
    pub before: serde_json::Value,
    /// `None` for a deleted lease.
    pub after: Option<serde_json::Value>,
    pub(crate) changes: Vec<Change>,
    /// What moved since the operator looked, when something did.
    pub meanwhile: Option<String>,
}

/// What became of one action, for counting and exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Applied,
    Refused,
    /// The database failed the statement: certainly not applied.
    Failed,
    /// Nobody can tell yet; the request id will.
    Unknown,
}

/// The sentence for one action's result, and what it amounts to — the same words on the TUI's
/// result list and on the command line.
pub fn sentence(
    action: &Action,
    result: &Result<Outcome, ActionError>,
    names: &IdNames,
) -> (Verdict, String) {
    let target = action.target(names);
    let verb = action.kind().verb();
    let request = action.request();
    match result {
        Ok(Outcome::Applied(applied)) => {
            // The head's first 16 digits (64 bits) are enough for `audit verify
            // --expect-head`, and short enough to copy from a result list.
            let mut line = format!(
                "{target}: {verb} applied (audit record {}) · chain head {}",
                applied.audit_id,
                &applied.chain_head.hex()[..crate::domain::audit_chain::HEAD_PREFIX]
            );
            if let Some(meanwhile) = &applied.meanwhile {
                line.push_str(&format!("; {meanwhile}"));
            }
            (Verdict::Applied, line)
        }
        Ok(Outcome::AlreadyApplied { audit_id }) => (
            Verdict::Applied,
            format!("{target}: {verb} already applied (audit record {audit_id})"),
        ),
        Ok(Outcome::Refused(refusal)) => {
            (Verdict::Refused, format!("{target}: refused — {refusal}"))
        }
        Ok(Outcome::Interrupted { why, found, .. }) => match found {
            Lookup::Applied { audit_id } => (
                Verdict::Applied,
                format!(
                    "{target}: {verb} applied (audit record {audit_id}) — {why}, so it was \
                     looked up by its request id"
                ),
            ),
            // Not a refusal by the rules: the database did not answer in time.
            Lookup::NotApplied => (
                Verdict::Failed,
                format!(
                    "{target}: not applied — {why}; the audit log has no record of request {request}"
                ),
            ),
            Lookup::StillOpen { backend_pid } => (
                Verdict::Unknown,
                format!(
                    "{target}: outcome unknown — {why}; backend pid {backend_pid} still open \
                     (request {request})"
                ),
            ),
            Lookup::RowLocked => (
                Verdict::Unknown,
                format!(
                    "{target}: outcome unknown — {why}; this attempt wrote nothing, but another \
                     transaction holds the row (an earlier run of request {request}?)"
                ),
            ),
            Lookup::Unreachable => (
                Verdict::Unknown,
                format!("{target}: outcome unknown — {why} (request {request})"),
            ),
        },
        Err(e) => (Verdict::Failed, format!("{target}: failed — {e}")),
    }
}

/// What the lookup by request id found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Applied {
        audit_id: i64,
    },
    NotApplied,
    /// The request's own transaction still holds on (a stalled server) although it was asked
    /// to end: no answer yet. Looking again later (the CLI's `--request-id`) tells.
    StillOpen {
        backend_pid: i32,
    },
    /// Another transaction holds the row (an earlier run of the same request, stalled, or a
    /// long write by someone else): no answer yet.
    RowLocked,
    /// The lookup itself could not reach the database: no answer yet.
    Unreachable,
}
