//! A board row from its database columns, or the reason it cannot be one. The same rules as
//! [`crate::domain::model::Bootstrap`]: an unknown state or a combination the constraints
//! should have made impossible names the row instead of being guessed at.

use chrono::{DateTime, Utc};

use super::names::Names;
use crate::domain::board::{BoardRow, WorkerClock};
use crate::domain::model::{Checkpoint, RowError, RunState};
use crate::domain::signals::Signals;
use crate::domain::text;
use crate::store::rows::BoardRecord;

const TABLE: &str = "bootstrap";

fn problem(record: &BoardRecord, text: impl Into<String>) -> RowError {
    RowError {
        table: TABLE,
        id: record.id.to_string(),
        problem: text.into(),
    }
}

fn unknown(record: &BoardRecord, column: &str, value: &str) -> RowError {
    problem(
        record,
        format!("unknown {column} {:?}", text::clip(value, 40)),
    )
}

/// The row's columns, interned; lease, progress and signals are the model's to fill in.
pub(crate) fn board_row(record: BoardRecord, names: &mut Names) -> Result<BoardRow, RowError> {
    let checkpoint = Checkpoint::parse(&record.checkpoint)
        .ok_or_else(|| unknown(&record, "checkpoint", &record.checkpoint))?;
    let run_state = RunState::parse(&record.run_state)
        .ok_or_else(|| unknown(&record, "run_state", &record.run_state))?;
    if record.total_documents < 0
        || record.completed_documents < 0
        || record.completed_documents > record.total_documents
    {
        return Err(problem(
            &record,
            format!(
                "impossible counts {}/{}",
                record.completed_documents, record.total_documents
            ),
        ));
    }
    let worker = worker(&record, names)?;
    if worker.is_some() != (run_state == RunState::Running) {
        return Err(problem(
            &record,
            format!("run_state {run_state} with a worker lease that does not match it"),
        ));
    }
    Ok(BoardRow {
        id: record.id,
        tenant: names.get(&record.tenant_id),
        space: record.knowledge_space_id,
        checkpoint,
        run_state,
        total: record.total_documents,
        completed: record.completed_documents,
        worker,
        error_code: record
            .last_error_code
            .as_deref()
            .map(|code| names.get(code)),
        has_message: record.last_error_message.is_some(),
        // The sync reads only whether there is one (an empty text, see `board_columns`).
        error_message: record
            .last_error_message
            .filter(|m| !m.is_empty())
            .map(String::into_boxed_str),
        row_version: record.row_version,
        updated_at: record.updated_at,
        completed_at: record.completed_at,
        lease: None,
        signals: Signals::UNJUDGED,
        progress_anchor: None,
        state_changed_at: None,
    })
}

fn worker(record: &BoardRecord, names: &mut Names) -> Result<Option<WorkerClock>, RowError> {
    let clock: (Option<DateTime<Utc>>, Option<DateTime<Utc>>) =
        (record.lease_expires_at, record.heartbeat_at);
    match (&record.worker_id, record.has_lease_token, clock) {
        (Some(worker_id), true, (Some(expires_at), Some(heartbeat_at))) => Ok(Some(WorkerClock {
            worker_id: names.get(worker_id),
            expires_at,
            heartbeat_at,
        })),
        (None, false, (None, None)) => Ok(None),
        _ => Err(problem(record, "partially set worker lease")),
    }
}
