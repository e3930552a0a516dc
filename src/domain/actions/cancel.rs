//! Cancel (domain contract §3, see [`crate::domain`]): a queued or running job becomes
//! `canceled`. Clearing the lease columns fences a live worker out — its next fenced write
//! fails. Items are untouched, and the space stays unreadable until retried.

use super::outcome::Change;
use crate::domain::model::{Bootstrap, RunState};
use crate::domain::text;

/// What a canceled job records as its error code: written by the database's cancel function
/// (console schema unit 0006), shown here in the plan; a test holds the two to one.
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

#[cfg(test)]
mod tests {
    use super::CANCELED_ERROR_CODE;

    #[test]
    fn the_error_code_shown_is_the_one_the_databases_cancel_writes() {
        let unit = crate::store::schema::CONSOLE_UNITS
            .iter()
            .find(|u| u.name == "0006_action_functions")
            .expect("the action functions' unit");
        assert!(
            unit.sql
                .contains(&format!("last_error_code = '{CANCELED_ERROR_CODE}'")),
            "cancel writes another code than the plan shows"
        );
        // The limits the console says are the ones the database's functions keep.
        let reason = crate::domain::refusal::MAX_REASON_CHARS;
        assert!(unit.sql.contains(&format!("keep it to {reason}'")));
        assert!(unit.sql.contains(&format!("length(p_reason) > {reason}")));
    }
}
