//! Why an action was not applied, as the sentence the operator reads. Shared by the session
//! (scope, access) and the actions (the rules), so neither depends on the other for it.

use std::fmt;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::ids::ShownId;
use super::model::RunState;
use super::text;

/// Reasons longer than this are refused: an audit trail is for sentences, not documents.
pub const MAX_REASON_CHARS: usize = 500;

/// Why an action was not applied. Its `Display` is the sentence the operator reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    ReadOnly {
        reason: String,
    },
    /// The role lacks grants this action needs (other actions may be allowed).
    NotGranted {
        role: String,
        missing: Vec<String>,
    },
    NoAuditTable,
    /// The split-brain guard (see `topology::lineage`): writing to the host in use could
    /// split the database's history. The sentence names each primary.
    PrimaryInDoubt {
        said: String,
    },
    /// The console's schema predates something the actions need (`migrate` adds it).
    AuditOutdated {
        missing: &'static str,
    },
    MissingReason,
    ReasonTooLong {
        chars: usize,
    },
    /// A control, bidirectional or invisible character (as the console shows it).
    ReasonHasHidden {
        shown: String,
    },
    UnknownBootstrap {
        id: Uuid,
    },
    OutsideScope {
        space: ShownId,
        tenant: String,
        scope: String,
    },
    /// The action never applied to the state the operator saw.
    WrongState {
        space: ShownId,
        state: RunState,
        action: &'static str,
        needs: &'static str,
    },
    /// A script demanded an exact row version (`--row-version`) and the row moved.
    Stale {
        space: ShownId,
        seen: i32,
        now: i32,
        state: RunState,
    },
    /// A cancel whose job finished (or was canceled) since the operator looked.
    Finished {
        space: ShownId,
        was: RunState,
        now: RunState,
    },
    /// A retry whose job was retried since the operator looked and has not failed again.
    RetriedMeanwhile {
        space: ShownId,
        was: RunState,
        now: RunState,
        /// Who did, from the audit log: "by this console (audit record 2)" or "by ops on
        /// host-a (audit record 2)"; `None` when the log cannot tell.
        by: Option<String>,
    },
    /// A retry whose job was retried and ended again: a new episode the operator has not seen.
    NewEpisode {
        space: ShownId,
        now: RunState,
        ended_at: Option<DateTime<Utc>>,
    },
    LeaseGone {
        lease: ShownId,
        replaced_by: Option<(ShownId, DateTime<Utc>)>,
    },
    LeaseChanged {
        lease: ShownId,
    },
    /// The lease's writer may still be working: removal needs force.
    LeaseNotOrphan {
        lease: ShownId,
        evidence: String,
    },
}

impl Refusal {
    /// Whether the refusal says the job moved on since the operator looked, so that a new
    /// decision on what is there now may be made (the dialog offers to plan from it).
    pub(crate) fn decision_changed(&self) -> bool {
        matches!(
            self,
            Self::Stale { .. }
                | Self::Finished { .. }
                | Self::RetriedMeanwhile { .. }
                | Self::NewEpisode { .. }
        )
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReadOnly { reason } => write!(f, "the console is read-only: {reason}"),
            Self::NotGranted { role, missing } => {
                write!(f, "role {role} lacks {}", missing.join(", "))
            }
            Self::PrimaryInDoubt { said } => write!(f, "{said}"),
            // What to do first: at 80 columns the end of the sentence is cut.
            Self::NoAuditTable => write!(
                f,
                "actions need `bootstrap-console migrate` first: this database lacks the \
                 console's audit table"
            ),
            Self::AuditOutdated { missing } => write!(
                f,
                "actions need `bootstrap-console migrate` first: the console's schema lacks \
                 {missing}"
            ),
            Self::MissingReason => write!(f, "a reason is required"),
            Self::ReasonHasHidden { shown } => write!(
                f,
                "the reason contains {shown}, a character that does not show as itself: write \
                 it in plain text"
            ),
            Self::ReasonTooLong { chars } => write!(
                f,
                "the reason is {chars} characters long; keep it to {MAX_REASON_CHARS}"
            ),
            Self::UnknownBootstrap { id } => write!(f, "no bootstrap {id} exists"),
            Self::OutsideScope {
                space,
                tenant,
                scope,
            } => write!(
                f,
                "space {} belongs to tenant {}, outside this console's scope (tenant {})",
                space,
                text::clean(tenant, 64),
                text::clean(scope, 64)
            ),
            Self::WrongState {
                space,
                state,
                action,
                needs,
            } => write!(f, "space {} is {state}, {action} needs {needs}", space),
            Self::Stale {
                space,
                seen,
                now,
                state,
            } => write!(
                f,
                "bootstrap of space {} changed since you looked (row_version {seen} → {now}, \
                 now {state})",
                space
            ),
            Self::Finished { space, was, now } => write!(
                f,
                "space {} is {now} now (it was {was} when you looked): nothing to cancel",
                space
            ),
            Self::RetriedMeanwhile {
                space,
                was,
                now,
                by,
            } => {
                // Who first: at 80 columns the end of the line is cut.
                let by = by.as_ref().map_or(String::new(), |by| format!(" {by}"));
                write!(
                    f,
                    "space {space} was retried{by} since you looked ({was} → {now})"
                )
            }
            Self::NewEpisode {
                space,
                now,
                ended_at,
            } => {
                write!(
                    f,
                    "space {} was retried since you looked and is {now} again",
                    space
                )?;
                if let Some(at) = ended_at {
                    write!(f, " (since {})", at.format("%H:%M:%S UTC"))?;
                }
                let what = if *now == RunState::Canceled {
                    "why it was canceled"
                } else {
                    "the new failure"
                };
                write!(f, ": look at {what} before retrying it")
            }
            Self::LeaseGone {
                lease,
                replaced_by: None,
            } => {
                write!(f, "lease {} already gone", lease)
            }
            Self::LeaseGone {
                lease,
                replaced_by: Some((new, acquired)),
            } => write!(
                f,
                "lease {} already gone; the space now has a new lease {} acquired {}",
                lease,
                new,
                acquired.format("%Y-%m-%d %H:%M:%S UTC")
            ),
            Self::LeaseChanged { lease } => write!(
                f,
                "lease {} is not the lease you saw (its space or acquisition time differs)",
                lease
            ),
            Self::LeaseNotOrphan { lease, evidence } => write!(
                f,
                "lease {} is not an orphan suspect ({evidence}): its writer may still be \
                 working; remove it only with force, if you know the writer is gone",
                lease
            ),
        }
    }
}
