//! What an operator must type to confirm a plan, scaled to its blast radius. One rule for the
//! TUI's dialog and the CLI's prompt, decided from the plans that would apply:
//!
//! | the plans that would apply       | the TUI's dialog       | the CLI, on a terminal          |
//! |----------------------------------|------------------------|---------------------------------|
//! | one space (retry or cancel)      | `y`                    | `yes` (or `y`), or `--yes`      |
//! | several spaces (any tenants)     | the count              | the count, or `--yes`           |
//! | one lease, an orphan suspect     | the lease id as shown  | the lease id as shown, or `--yes` |
//! | one lease, forced (not an orphan)| the whole lease id     | the whole lease id, or `--yes`  |
//!
//! The CLI without a terminal and without `--yes` refuses with a sentence and writes nothing.
//! Ids are compared as an operator types them: case, hyphens and the suffix mark aside.

use uuid::Uuid;

use super::{Action, Plan};
use crate::domain::ids::{IdNames, same_id_form};

/// What confirms a set of plans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// One space: a plain yes.
    One,
    /// Several spaces: their number.
    Count(usize),
    /// One lease removal: the lease id in the form shown (unique in scope).
    LeaseCode(String),
    /// A forced lease removal (not an orphan suspect): the whole lease id.
    WholeLeaseId(Uuid),
}

impl Confirmation {
    /// The confirmation `plans` (those that would apply) need.
    pub(crate) fn for_plans(plans: &[&Plan], names: &IdNames) -> Self {
        match plans {
            [plan] => match &plan.action {
                Action::Lease(removal) if plan.forced => Self::WholeLeaseId(removal.seen().id),
                Action::Lease(removal) => Self::LeaseCode(names.short(&removal.seen().id)),
                Action::Bootstrap(_) => Self::One,
            },
            _ => Self::Count(plans.len()),
        }
    }

    /// The confirmation `actions` need before anything is planned: as [`Self::for_plans`],
    /// a forced removal being asked for with the action itself.
    pub(crate) fn for_actions(actions: &[Action], names: &IdNames) -> Self {
        match actions {
            [Action::Lease(removal)] if removal.forced() => Self::WholeLeaseId(removal.seen().id),
            [Action::Lease(removal)] => Self::LeaseCode(names.short(&removal.seen().id)),
            [Action::Bootstrap(_)] => Self::One,
            actions => Self::Count(actions.len()),
        }
    }

    /// What is typed, as the TUI's dialog names it: "y", "the count (3)", …
    pub(crate) fn what_to_type(&self) -> String {
        match self {
            Self::One => "y".into(),
            Self::Count(n) => format!("the count ({n})"),
            Self::LeaseCode(code) => format!("the lease id as shown ({code})"),
            Self::WholeLeaseId(id) => format!("the whole lease id ({id})"),
        }
    }

    /// The CLI's question on a terminal.
    pub(crate) fn prompt(&self, verb: &str) -> String {
        match self {
            Self::One => format!("type yes to {verb}: "),
            Self::Count(n) => format!("type the number of spaces ({n}) to {verb} them: "),
            Self::LeaseCode(code) => format!("type the lease id as shown ({code}) to confirm: "),
            Self::WholeLeaseId(id) => format!(
                "this lease is NOT an orphan suspect; type its whole id ({id}) to remove it \
                 anyway: "
            ),
        }
    }

    /// Whether `typed` confirms.
    pub(crate) fn accepts(&self, typed: &str) -> bool {
        let typed = typed.trim();
        match self {
            Self::One => typed.eq_ignore_ascii_case("y") || typed.eq_ignore_ascii_case("yes"),
            Self::Count(n) => typed == n.to_string(),
            Self::LeaseCode(code) => same_id_form(typed, code),
            Self::WholeLeaseId(id) => same_id_form(typed, &id.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::actions::{RequestId, SeenBootstrap};
    use crate::domain::model::{Checkpoint, LeaseIdentity, RunState};

    fn seen(n: u128) -> SeenBootstrap {
        SeenBootstrap {
            id: Uuid::from_u128(n),
            space: Uuid::from_u128(n + 100),
            run_state: RunState::Failed,
            checkpoint: Checkpoint::Rebuilding,
            completed_documents: 1,
            total_documents: 2,
            completed_at: None,
            row_version: 3,
        }
    }

    fn lease() -> LeaseIdentity {
        LeaseIdentity {
            id: Uuid::from_u128(0x7c41_d0e9 << 96),
            tenant_id: "acme".into(),
            knowledge_space_id: Uuid::from_u128(9),
            acquired_at: chrono::DateTime::UNIX_EPOCH,
        }
    }

    fn plan(action: Action, forced: bool) -> Plan {
        let mut plan = Plan::refused(&action, super::super::Refusal::MissingReason);
        plan.verdict = Ok(Vec::new());
        plan.forced = forced;
        plan
    }

    #[test]
    fn the_confirmation_grows_with_the_blast_radius() {
        let names = IdNames::default();
        let one = plan(Action::retry(seen(1), RequestId::new()), false);
        let two = plan(Action::retry(seen(2), RequestId::new()), false);
        assert_eq!(Confirmation::for_plans(&[&one], &names), Confirmation::One);
        assert_eq!(
            Confirmation::for_plans(&[&one, &two], &names),
            Confirmation::Count(2)
        );
        let removal = plan(
            Action::remove_lease(lease(), false, RequestId::new()),
            false,
        );
        assert!(matches!(
            Confirmation::for_plans(&[&removal], &names),
            Confirmation::LeaseCode(_)
        ));
        let forced = plan(Action::remove_lease(lease(), true, RequestId::new()), true);
        assert_eq!(
            Confirmation::for_plans(&[&forced], &names),
            Confirmation::WholeLeaseId(lease().id)
        );
    }

    #[test]
    fn each_confirmation_takes_only_what_it_asks_for() {
        assert!(Confirmation::One.accepts(" y "));
        assert!(Confirmation::One.accepts("YES"));
        assert!(!Confirmation::One.accepts("1"));
        assert!(!Confirmation::One.accepts(""));
        assert!(Confirmation::Count(12).accepts("12"));
        assert!(!Confirmation::Count(12).accepts("yes"));
        let code = Confirmation::LeaseCode("7c41d0e9".into());
        assert!(code.accepts("7C41-D0E9"));
        assert!(!code.accepts("7c41d0e"));
        let whole = Confirmation::WholeLeaseId(lease().id);
        assert!(whole.accepts(&lease().id.simple().to_string()));
        assert!(!whole.accepts("7c41d0e9"));
    }
}
