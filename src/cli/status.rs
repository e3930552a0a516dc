//! `status`: the board for a script, a ticket or a runbook — a table that fits 80 columns, or
//! JSON with a documented, stable schema. The exit code says whether anything needs attention.

use super::outln;
use std::process::ExitCode;

use serde::Serialize;

use super::Failure;
use super::args::{FilterArgs, StatusArgs};
use crate::domain::board::{Board, BoardRow, Summary};
use crate::domain::model::{Checkpoint, RunState, short_id};
use crate::domain::progress::ProgressTracker;
use crate::domain::session::{Session, SessionOptions};
use crate::domain::signals::Attention;
use crate::domain::text;

pub const SCHEMA: &str = "bootstrap-console.status/v1";

/// Exit code when something needs attention.
const NEEDS_ATTENTION: u8 = 1;

pub(super) async fn status(args: &StatusArgs) -> Result<ExitCode, Failure> {
    let target = args.connect.target()?;
    let session = Session::open(
        &target,
        SessionOptions {
            tenant: args.filter.tenant.clone(),
            read_only: true,
        },
    )
    .await?;
    let board = board_of(&session, &args.filter).await?;
    let rows = select(&board, &args.filter);
    let attention =
        rows.iter().any(|r| r.signals.attention.needs_attention()) || !board.problems.is_empty();
    if args.json {
        let report = json_report(&board, &rows, &target.to_string(), session.tenant_scope());
        outln!("{report}");
    } else {
        super::emit(&table(&board, &rows, args.wide));
    }
    Ok(if attention {
        ExitCode::from(NEEDS_ATTENTION)
    } else {
        ExitCode::SUCCESS
    })
}

/// One snapshot, assessed with the filter's thresholds (a single snapshot has no rates).
pub(super) async fn board_of(session: &Session, filter: &FilterArgs) -> Result<Board, Failure> {
    let thresholds = filter.thresholds.thresholds().map_err(Failure::Usage)?;
    let mut tracker = ProgressTracker::new(thresholds.rate_window);
    Ok(Board::assess(
        session.board_rows().await?,
        &mut tracker,
        &thresholds,
    ))
}

/// The rows the filters select, in attention order.
pub(super) fn select<'a>(board: &'a Board, filter: &FilterArgs) -> Vec<&'a BoardRow> {
    board
        .rows
        .iter()
        .filter(|r| {
            filter.state.is_empty()
                || filter
                    .state
                    .iter()
                    .any(|s| s == r.bootstrap.run_state.as_str())
        })
        .filter(|r| {
            filter.checkpoint.is_empty()
                || filter
                    .checkpoint
                    .iter()
                    .any(|c| c == r.bootstrap.checkpoint.as_str())
        })
        .filter(|r| match filter.attention.as_deref() {
            None => true,
            Some("any") => r.signals.attention.needs_attention(),
            Some(class) => r.signals.attention.label() == class,
        })
        .collect()
}

fn table(board: &Board, rows: &[&BoardRow], wide: bool) -> String {
    let mut out = String::new();
    if wide {
        out.push_str(&format!(
            "{:<14} {:<24} {:<36} {:<17} {:<9} {:>11} {:<16} {:<22} {}\n",
            "FLAG", "TENANT", "SPACE", "CHECKPOINT", "STATE", "DOCS", "WORKER", "LEASE", "ERROR"
        ));
    } else {
        out.push_str(&format!(
            "{:<7} {:<10} {:<8} {:<17} {:<9} {:>9} {}\n",
            "FLAG", "TENANT", "SPACE", "CHECKPOINT", "STATE", "DOCS", "ERROR"
        ));
    }
    for row in rows {
        let b = &row.bootstrap;
        let s = &row.signals;
        let docs = format!("{}/{}", b.completed_documents, b.total_documents);
        let error = b
            .last_error_code
            .as_deref()
            .map(|e| text::clean(e, 64))
            .unwrap_or_default();
        if wide {
            let worker = b.worker.as_ref().map_or(String::new(), |w| {
                let left = s.lease_remaining.unwrap_or_default().num_seconds();
                format!("{} {left}s", text::clean(&w.worker_id, 10))
            });
            let lease = row.lease.as_ref().map_or(String::new(), |l| {
                let age = s.mutation_lease_age.unwrap_or_default().num_minutes();
                let suspect = if s.lease_orphan_suspect {
                    " orphan?"
                } else {
                    ""
                };
                format!("{} {age}m{suspect}", short_id(&l.id))
            });
            let message = b
                .last_error_message
                .as_deref()
                .map(|m| text::clean(m, 80))
                .unwrap_or_default();
            out.push_str(&format!(
                "{:<14} {:<24} {:<36} {:<17} {:<9} {:>11} {:<16} {:<22} {} {}\n",
                s.attention.label(),
                text::clean(&b.tenant_id, 24),
                b.knowledge_space_id,
                b.checkpoint,
                b.run_state,
                docs,
                worker,
                lease,
                error,
                message
            ));
        } else {
            out.push_str(&format!(
                "{:<7} {:<10} {:<8} {:<17} {:<9} {:>9} {}\n",
                crate::tui::view::format::flag(s.attention),
                text::clean(&b.tenant_id, 10),
                short_id(&b.knowledge_space_id),
                b.checkpoint,
                b.run_state,
                text::clean(&docs, 9),
                text::clean(&error, 14)
            ));
        }
    }
    out.push('\n');
    out.push_str(&summary_lines(&board.summary, rows.len(), board.rows.len()));
    for problem in &board.problems {
        out.push_str(&format!(
            "unreadable: {}\n",
            text::clean(&problem.to_string(), 200)
        ));
    }
    out
}

fn summary_lines(s: &Summary, shown: usize, total: usize) -> String {
    let attention: Vec<String> = Attention::ALL
        .iter()
        .filter(|a| a.needs_attention() && s.count(**a) > 0)
        .map(|a| format!("{} {}", a.label(), s.count(*a)))
        .collect();
    let mut out = format!(
        "{shown} of {total} spaces shown; readable {}/{} ({:.0}%); needs attention {}\n",
        s.readable,
        s.spaces,
        s.readable_share() * 100.0,
        s.needing_attention(),
    );
    if !attention.is_empty() {
        out.push_str(&format!("  {}\n", attention.join(", ")));
    }
    out.push_str(&format!("{:<18}", "checkpoint"));
    for state in RunState::ALL {
        out.push_str(&format!("{:>10}", state.as_str()));
    }
    out.push('\n');
    for checkpoint in Checkpoint::ALL {
        out.push_str(&format!("{:<18}", checkpoint.as_str()));
        for state in RunState::ALL {
            out.push_str(&format!("{:>10}", s.in_state(*checkpoint, *state)));
        }
        out.push('\n');
    }
    out
}

#[derive(Serialize)]
struct JsonReport<'a> {
    schema: &'static str,
    database_time: chrono::DateTime<chrono::Utc>,
    target: &'a str,
    tenant_scope: Option<&'a str>,
    summary: JsonSummary,
    spaces: Vec<JsonSpace<'a>>,
    unreadable_rows: Vec<String>,
}

#[derive(Serialize)]
struct JsonSummary {
    spaces: u32,
    readable: u32,
    readable_share: f64,
    needs_attention: u32,
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
    needs_attention: bool,
    total_documents: i32,
    completed_documents: i32,
    row_version: i32,
    worker_id: Option<&'a str>,
    lease_expires_in_seconds: Option<i64>,
    heartbeat_age_seconds: Option<i64>,
    idle_seconds: i64,
    last_error_code: Option<&'a str>,
    last_error_message: Option<&'a str>,
    updated_at: chrono::DateTime<chrono::Utc>,
    mutation_lease: Option<JsonLease<'a>>,
    signals: JsonSignals,
}

#[derive(Serialize)]
struct JsonLease<'a> {
    id: uuid::Uuid,
    operation: &'a str,
    acquired_at: chrono::DateTime<chrono::Utc>,
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

fn json_report(board: &Board, rows: &[&BoardRow], target: &str, scope: Option<&str>) -> String {
    let s = &board.summary;
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
    let report = JsonReport {
        schema: SCHEMA,
        database_time: board.db_now,
        target,
        tenant_scope: scope,
        summary: JsonSummary {
            spaces: s.spaces,
            readable: s.readable,
            readable_share: s.readable_share(),
            needs_attention: s.needing_attention(),
            by_attention: Attention::ALL
                .iter()
                .map(|a| (a.label(), s.count(*a)))
                .collect(),
            matrix,
            documents_remaining: s.documents_remaining,
            spaces_uncaptured: s.spaces_uncaptured,
        },
        spaces: rows.iter().map(|r| json_space(r)).collect(),
        unreadable_rows: board.problems.iter().map(|p| p.to_string()).collect(),
    };
    let json =
        serde_json::to_string_pretty(&report).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    terminal_safe_json(&json)
}

fn json_space<'a>(row: &'a BoardRow) -> JsonSpace<'a> {
    let b = &row.bootstrap;
    let s = &row.signals;
    JsonSpace {
        bootstrap_id: b.id,
        tenant_id: &b.tenant_id,
        knowledge_space_id: b.knowledge_space_id,
        checkpoint: b.checkpoint.as_str(),
        run_state: b.run_state.as_str(),
        attention: s.attention.label(),
        needs_attention: s.attention.needs_attention(),
        total_documents: b.total_documents,
        completed_documents: b.completed_documents,
        row_version: b.row_version,
        worker_id: b.worker.as_ref().map(|w| w.worker_id.as_str()),
        lease_expires_in_seconds: s.lease_remaining.map(|d| d.num_seconds()),
        heartbeat_age_seconds: s.heartbeat_age.map(|d| d.num_seconds()),
        idle_seconds: s.idle_for.num_seconds(),
        last_error_code: b.last_error_code.as_deref(),
        last_error_message: b.last_error_message.as_deref(),
        updated_at: b.updated_at,
        mutation_lease: row.lease.as_ref().map(|l| JsonLease {
            id: l.id,
            operation: &l.operation,
            acquired_at: l.acquired_at,
            age_seconds: s.mutation_lease_age.map_or(0, |d| d.num_seconds()),
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

/// JSON keeps database text exactly, but a terminal showing it must not obey it: serde already
/// escapes C0 controls; this also escapes C1 controls and bidi overrides (valid JSON either way).
pub(super) fn terminal_safe_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        let risky = ('\u{80}'..='\u{9f}').contains(&c)
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}');
        if risky {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risky_characters_are_escaped_and_the_json_still_parses() {
        let json = serde_json::to_string(&serde_json::json!({"m": "a\u{9b}31mb\u{202e}c\u{1b}"}))
            .expect("json");
        let safe = terminal_safe_json(&json);
        assert!(!safe.contains('\u{9b}') && !safe.contains('\u{202e}') && !safe.contains('\u{1b}'));
        let back: serde_json::Value = serde_json::from_str(&safe).expect("valid json");
        assert_eq!(back["m"], "a\u{9b}31mb\u{202e}c\u{1b}");
    }
}
