//! Cancel (domain contract §3, see [`crate::domain`]): a queued or running job becomes
//! `canceled`. Clearing the lease columns fences a live worker out — its next fenced write
//! fails. Items are untouched, and the space stays unreadable until retried.

use super::outcome::Change;
use crate::domain::model::{Bootstrap, RunState};
use crate::domain::text;

/// What a canceled job records as its error code.
pub const CANCELED_ERROR_CODE: &str = "operator_canceled";

/// What cancel changes on `bootstrap` (`reason` once known).
pub(super) fn changes(bootstrap: &Bootstrap, reason: Option<&str>) -> Vec<Change> {
    let mut changes = vec![Change::new(
        "run_state",
        bootstrap.run_state,
        RunState::Canceled,
    )];
    if let Some(worker) = &bootstrap.worker {
        changes.push(Change::new(
            "worker lease (its next write will fail)",
            text::clean(&worker.worker_id, 40),
            "released",
        ));
    }
    changes.push(Change::new(
        "last_error_code",
        bootstrap.last_error_code.as_deref().unwrap_or("NULL"),
        CANCELED_ERROR_CODE,
    ));
    changes.push(Change::new(
        "last_error_message",
        "…",
        reason.map_or("your reason".to_string(), |r| text::clean(r, 60)),
    ));
    changes.push(Change::new("readable", "no", "no (until retried)"));
    changes.push(Change::new(
        "row_version",
        bootstrap.row_version,
        bootstrap.row_version + 1,
    ));
    changes
}
