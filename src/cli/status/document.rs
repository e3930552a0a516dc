//! `status --json`: the document (`bootstrap-console.status/v2`, fields only ever added under
//! that name) is the `Json*` structs below, written by serde as the rows arrive.
//!
//! The head (schema, clock, target, scope, standby, summary) is pretty-printed; `spaces` holds
//! one space per line, so 100,000 spaces stay a file one can `grep`. Rows are read page by
//! page while a writer thread serializes the document around them: memory stays one page
//! whatever the fleet. A read that fails midway leaves the document unterminated — invalid
//! JSON, never a shorter list that parses as if it were complete.

use std::cell::RefCell;
use std::io::Write;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde::ser::{Error as _, SerializeSeq, Serializer};
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::cli::json;
use crate::domain::board::{BoardRow, Summary};
use crate::domain::model::{Checkpoint, RunState};
use crate::domain::report::Report;
use crate::domain::signals::{Attention, Group};
use crate::store::replica::Replication;

/// The document's schema: fields are only ever added under this name. v2: attention in groups
/// (`needs_operator`, `watch`, `progressing`, `done`), the classes `reclaiming` and `writing`
/// split off `lease-expired` and `blocked`.
const SCHEMA: &str = "bootstrap-console.status/v2";

#[derive(Serialize)]
struct JsonDocument {
    schema: &'static str,
    database_time: DateTime<Utc>,
    target: String,
    tenant_scope: Option<String>,
    standby: Option<JsonStandby>,
    summary: JsonSummary,
    spaces: Streamed,
    unreadable_rows: Vec<String>,
}

#[derive(Serialize)]
struct JsonSummary {
    spaces: u32,
    readable: u32,
    readable_share: f64,
    /// Spaces in each group, by its key.
    by_group: std::collections::BTreeMap<&'static str, u32>,
    by_attention: std::collections::BTreeMap<&'static str, u32>,
    matrix: std::collections::BTreeMap<&'static str, std::collections::BTreeMap<&'static str, u32>>,
    documents_remaining: i64,
    spaces_uncaptured: u32,
}

#[derive(Serialize)]
struct JsonSpace<'a> {
    bootstrap_id: uuid::Uuid,
    tenant_id: &'a str,
    knowledge_space_id: uuid::Uuid,
    checkpoint: &'static str,
    run_state: &'static str,
    attention: &'static str,
    /// The attention class's group (`needs_operator`, `watch`, `progressing`, `done`).
    group: &'static str,
    total_documents: i32,
    completed_documents: i32,
    row_version: i32,
    worker_id: Option<&'a str>,
    lease_expires_in_seconds: Option<i64>,
    heartbeat_age_seconds: Option<i64>,
    idle_seconds: i64,
    last_error_code: Option<&'a str>,
    last_error_message: Option<&'a str>,
    updated_at: DateTime<Utc>,
    mutation_lease: Option<JsonLease<'a>>,
    signals: JsonSignals,
}

/// Where the report was read when that was a standby (`--read-url`), and how old its data was.
#[derive(Serialize)]
struct JsonStandby {
    /// The standby read.
    target: String,
    in_sync: bool,
    /// False when no primary was named (a standby given as the only database): the lag and
    /// the instant the data is as of are then unknown (`null`).
    lag_measured: bool,
    lag_seconds: Option<f64>,
    wal_bytes_behind: Option<u64>,
    data_as_of: Option<DateTime<Utc>>,
}

#[derive(Serialize)]
struct JsonLease<'a> {
    id: uuid::Uuid,
    operation: &'a str,
    acquired_at: DateTime<Utc>,
    age_seconds: i64,
    orphan_suspect: bool,
}

#[derive(Serialize)]
struct JsonSignals {
    readable: bool,
    failed: bool,
    blocked_by_lease: bool,
    lease_expired: bool,
    heartbeat_late: bool,
    stuck: bool,
}

/// What the reading side hands the writer thread.
#[derive(Debug)]
enum Feed {
    /// The next page of spaces, each already one line of JSON.
    Page(Vec<Box<RawValue>>),
    /// Every row was read: close the document.
    End,
}

/// The `spaces` array, pulled page by page from the reading side as serde writes it.
struct Streamed(RefCell<mpsc::Receiver<Feed>>);

impl Serialize for Streamed {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut feed = self.0.borrow_mut();
        let mut spaces = serializer.serialize_seq(None)?;
        loop {
            match feed.blocking_recv() {
                Some(Feed::Page(page)) => {
                    for space in &page {
                        spaces.serialize_element(space)?;
                    }
                }
                Some(Feed::End) => return spaces.end(),
                None => return Err(S::Error::custom("the rows stopped before their end")),
            }
        }
    }
}

/// The document being written: pages go to a writer thread, which owns standard output until
/// [`JsonOutput::end`].
pub(super) struct JsonOutput {
    feed: mpsc::Sender<Feed>,
    writer: tokio::task::JoinHandle<()>,
}

impl JsonOutput {
    /// Starts the document: everything but the spaces is known before the first row.
    pub(super) fn begin(
        report: &Report,
        target: String,
        scope: Option<&str>,
        replication: Option<(&Replication, String)>,
    ) -> Self {
        let standby = replication.map(|(r, target)| JsonStandby {
            target,
            in_sync: r.caught_up(),
            lag_measured: r.measured,
            lag_seconds: r
                .delay()
                .filter(|_| r.measured)
                .map(|d| d.num_milliseconds() as f64 / 1000.0),
            wal_bytes_behind: r.bytes_behind(),
            data_as_of: r.as_of().filter(|_| r.measured),
        });
        // One page ahead at most: a slow reader of the output holds the reading back.
        let (feed, pages) = mpsc::channel(1);
        let document = JsonDocument {
            schema: SCHEMA,
            database_time: report.db_now,
            target,
            tenant_scope: scope.map(str::to_string),
            standby,
            summary: json_summary(&report.summary),
            spaces: Streamed(RefCell::new(pages)),
            unreadable_rows: report.unreadable.iter().map(|p| p.to_string()).collect(),
        };
        let writer = tokio::task::spawn_blocking(move || {
            let mut out = std::io::BufWriter::new(crate::cli::Stdout);
            // An unfinished document is left unfinished: its error is the reading side's.
            if json::write_pretty(&mut out, &document).is_ok() {
                let _ = out.write_all(b"\n");
            }
            let _ = out.flush();
        });
        Self { feed, writer }
    }

    /// Hands one page of spaces to the writer.
    pub(super) async fn page(&self, rows: &[BoardRow], now: DateTime<Utc>) {
        let page = rows.iter().map(|row| json::line(&json_space(row, now)));
        let _ = self.feed.send(Feed::Page(page.collect())).await;
    }

    /// Closes the document and waits until it is written.
    pub(super) async fn end(self) {
        let _ = self.feed.send(Feed::End).await;
        let _ = self.writer.await;
    }
}

fn json_summary(s: &Summary) -> JsonSummary {
    let matrix = Checkpoint::ALL
        .iter()
        .map(|c| {
            let states = RunState::ALL
                .iter()
                .map(|r| (r.as_str(), s.in_state(*c, *r)))
                .collect();
            (c.as_str(), states)
        })
        .collect();
    JsonSummary {
        spaces: s.spaces,
        readable: s.readable,
        readable_share: s.readable_share(),
        by_group: Group::ALL
            .iter()
            .map(|g| (g.key(), s.in_group(*g)))
            .collect(),
        by_attention: Attention::ALL
            .iter()
            .map(|a| (a.label(), s.count(*a)))
            .collect(),
        matrix,
        documents_remaining: s.documents_remaining,
        spaces_uncaptured: s.spaces_uncaptured,
    }
}

fn json_space(row: &BoardRow, now: DateTime<Utc>) -> JsonSpace<'_> {
    let s = &row.signals;
    JsonSpace {
        bootstrap_id: row.id,
        tenant_id: &row.tenant,
        knowledge_space_id: row.space,
        checkpoint: row.checkpoint.as_str(),
        run_state: row.run_state.as_str(),
        attention: s.attention.label(),
        group: s.attention.group().key(),
        total_documents: row.total,
        completed_documents: row.completed,
        row_version: row.row_version,
        worker_id: row.worker.as_ref().map(|w| &*w.worker_id),
        lease_expires_in_seconds: row.lease_remaining(now).map(|d| d.num_seconds()),
        heartbeat_age_seconds: row.heartbeat_age(now).map(|d| d.num_seconds()),
        idle_seconds: row.idle_for(now).num_seconds(),
        last_error_code: row.error_code.as_deref(),
        last_error_message: row.error_message.as_deref(),
        updated_at: row.updated_at,
        mutation_lease: row.lease.as_ref().map(|l| JsonLease {
            id: l.id,
            operation: &l.operation,
            acquired_at: l.acquired_at,
            age_seconds: row.lease_age(now).map_or(0, |d| d.num_seconds()),
            orphan_suspect: s.lease_orphan_suspect,
        }),
        signals: JsonSignals {
            readable: s.readable,
            failed: s.failed,
            blocked_by_lease: s.blocked_by_lease,
            lease_expired: s.lease_expired,
            heartbeat_late: s.heartbeat_late,
            stuck: s.stuck,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(feeds: Vec<Feed>) -> Result<String, serde_json::Error> {
        let (feed, pages) = mpsc::channel(feeds.len().max(1));
        for page in feeds {
            feed.try_send(page).expect("room for every page");
        }
        drop(feed);
        serde_json::to_string(&Streamed(RefCell::new(pages)))
    }

    #[test]
    fn spaces_are_written_page_by_page_and_closed_at_the_end() {
        let one = || json::line(&serde_json::json!({"n": 1}));
        let written = streamed(vec![
            Feed::Page(vec![one(), one()]),
            Feed::Page(vec![one()]),
            Feed::End,
        ]);
        assert_eq!(written.expect("complete"), r#"[{"n":1},{"n":1},{"n":1}]"#);
    }

    #[test]
    fn rows_that_stop_before_their_end_leave_the_document_unfinished() {
        let one = json::line(&serde_json::json!({"n": 1}));
        let written = streamed(vec![Feed::Page(vec![one])]);
        assert!(
            written.is_err(),
            "a shorter list must not parse as complete"
        );
    }
}
