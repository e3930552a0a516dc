//! Retry (domain contract §3, see [`crate::domain`]): a failed or canceled job goes back to
//! `queued` in place. The checkpoint and the frozen item set are kept — never a second
//! snapshot; failed and running items return to pending.

use uuid::Uuid;

use super::ActionError;
use super::outcome::Change;
use crate::domain::model::{Bootstrap, ItemStatus, RunState};
use crate::store::db::read_tx;
use crate::store::{Db, read};

/// What retry changes on `bootstrap`, resetting `items_reset` items.
pub(super) fn changes(bootstrap: &Bootstrap, items_reset: i64) -> Vec<Change> {
    let mut changes = vec![Change::new(
        "run_state",
        bootstrap.run_state,
        RunState::Queued,
    )];
    if let Some(code) = &bootstrap.last_error_code {
        changes.push(Change::new("last_error_code", code, "NULL"));
    }
    if bootstrap.completed_at.is_some() {
        changes.push(Change::new("completed_at", "set", "NULL"));
    }
    if items_reset > 0 {
        changes.push(Change::new(
            &format!("{items_reset} failed or running item(s)"),
            "failed or running",
            "pending",
        ));
    }
    changes.push(Change::new(
        "checkpoint (kept, no new snapshot)",
        bootstrap.checkpoint,
        bootstrap.checkpoint,
    ));
    changes.push(Change::new(
        "row_version",
        bootstrap.row_version,
        bootstrap.row_version + 1,
    ));
    changes
}

/// How many items a retry would send back to pending.
pub(super) async fn items_to_reset(primary: &Db, bootstrap_id: Uuid) -> Result<i64, ActionError> {
    let counts = read_tx!(primary, |c| read::item_counts(c, bootstrap_id))?;
    Ok(counts
        .iter()
        .filter(|(status, _)| {
            matches!(
                ItemStatus::parse(status),
                Some(ItemStatus::Failed | ItemStatus::Running)
            )
        })
        .map(|(_, n)| n)
        .sum())
}
