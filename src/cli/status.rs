//! `status`: the board for a script, a ticket or a runbook — a table that fits 80 columns, or
//! JSON with a documented, stable schema. The exit code says whether anything needs an operator.
//!
//! At 100,000 spaces it stays light: the summary is one aggregate statement, rows come in
//! keyset pages (see [`crate::domain::report`]) and are written as they arrive.
//!
//! The JSON (`bootstrap-console.status/v2`, fields only ever added under that name) is the
//! `Json*` structs of [`document`]. `target` is the server actions would go to (of several hosts, the
//! primary in use). `standby` is null unless a standby was read; then it says whether it is in
//! sync, whether its lag was measured (not when no primary was named: ages are then judged by
//! the standby's own clock), the lag in seconds and WAL bytes, and the instant the data is as
//! of, which is also `database_time`. `spaces` is in attention order and honours the filters;
//! `summary` covers the whole scope; both are judged at `database_time`. Text is what the
//! database holds with control characters and bidirectional overrides escaped (`\u001b`,
//! `\u202e`), so the JSON is safe to print.

use std::collections::VecDeque;
use std::process::ExitCode;

use chrono::{DateTime, Utc};

use super::Failure;
use super::args::StatusArgs;
use crate::columns::{Column, Cut, Priority};
use crate::domain::board::{BoardRow, Summary};
use crate::domain::ids::IdNames;
use crate::domain::model::{Checkpoint, RunState};
use crate::domain::report::{self, Report, Rows};
mod document;

use document::JsonOutput;

use crate::domain::session::{Session, SessionOptions};
use crate::domain::text;
use crate::topology::OpenError;

pub(super) async fn status(args: &StatusArgs) -> Result<ExitCode, Failure> {
    let thresholds = args
        .filter
        .thresholds
        .thresholds()
        .map_err(Failure::Usage)?;
    let session = open_to_read(
        &args.connect,
        &args.read,
        args.filter.tenant.clone(),
        thresholds,
    )
    .await?;
    let result = report_on(&session, args).await;
    session.close().await;
    result
}

/// A read-only session for a report: the primary, and the standby `read` names if any — a
/// standby that does not answer is said, and the primary read instead, as the live console
/// does.
pub(super) async fn open_to_read(
    connect: &super::args::ConnectArgs,
    read: &super::args::ReadArgs,
    tenant: Option<String>,
    thresholds: crate::domain::signals::Thresholds,
) -> Result<Session, Failure> {
    let target = connect.target()?;
    let read = read.target()?;
    let mut session = super::open_session(
        &target,
        SessionOptions {
            tenant,
            read_only: true,
            thresholds,
            primary: None,
        },
    )
    .await?;
    if let Some(read) = read {
        match session.add_reader(&read).await {
            Ok(()) => {
                if let Some(warning) = session.topology().reader_warning() {
                    super::say(&format!("bootstrap-console: {warning}"));
                }
            }
            Err(OpenError::Connect(e)) if e.is_unreachable() => {
                super::say(&format!(
                    "bootstrap-console: {e}; reading the primary instead"
                ));
            }
            Err(e) => {
                session.close().await;
                return Err(e.into());
            }
        }
    }
    Ok(session)
}

async fn report_on(session: &Session, args: &StatusArgs) -> Result<ExitCode, Failure> {
    super::scope::require_known_tenant(session).await?;
    if let Some(until) = args.gate.until {
        return super::gate::wait(session, until, &args.gate).await;
    }
    let thresholds = *session.thresholds();
    // One instant for everything; the first page is read while the summary is computed.
    let (now, replication) = session.reads().clock().await?;
    let mut pages = Rows::new(session, now, &args.filter.report_filter(), &thresholds).prefetch();
    // The first pages (a table's ids are named from them) are read while the summary is made.
    let first_pages = async {
        let mut first = VecDeque::new();
        if !args.json {
            while first.len() < 2
                && let Some(page) = pages.next().await
            {
                first.push_back(page?);
            }
        }
        Ok::<_, crate::store::StoreError>(first)
    };
    // The table's ids are told apart among every id in scope, read at the same time.
    let names = async {
        if args.json {
            Ok(None)
        } else {
            session.reads().names().await.map(Some)
        }
    };
    let (report, first, names) = tokio::join!(
        report::summarize_at(session, &thresholds, now),
        first_pages,
        names
    );
    let (report, mut first, names) = (report?, first?, names?);
    let out = match names {
        // Ids are shown in the form that tells them from every other in scope — the same on
        // every page, since the form comes from the ids alone.
        Some(names) => Output::Table(TableOutput::begin(args.wide, names)),
        None => Output::Json(JsonOutput::begin(
            &report,
            // The host in use, when several were listed; the standby read is named below.
            session.topology().primary().host().to_string(),
            session.tenant_scope(),
            replication
                .as_ref()
                .map(|r| (r, session.topology().reads().host().to_string())),
        )),
    };
    let mut shown = 0usize;
    let mut attention = !report.unreadable.is_empty();
    // Pages arrive one ahead of the writing: nothing stays open on the server while a slow
    // reader drains the output.
    loop {
        let page = match first.pop_front() {
            Some(page) => page,
            None => match pages.next().await {
                Some(page) => page?,
                None => break,
            },
        };
        attention |= page.iter().any(|r| r.signals.attention.needs_operator());
        shown += page.len();
        out.page(&page, report.db_now).await;
    }
    match out {
        Output::Table(_) => {
            super::emit(&table_end(&report, shown));
            if let Some(replication) = replication {
                super::emit(&format!("{}\n", replication_line(&replication)));
            }
        }
        Output::Json(json) => json.end().await,
    }
    Ok(if attention {
        ExitCode::from(super::exit::NEEDS_ATTENTION)
    } else {
        ExitCode::SUCCESS
    })
}

enum Output {
    Table(TableOutput),
    Json(JsonOutput),
}

impl Output {
    async fn page(&self, rows: &[BoardRow], now: DateTime<Utc>) {
        match self {
            Self::Table(table) => {
                let mut text = String::new();
                for row in rows {
                    table.row(&mut text, row, now);
                }
                // Tables follow the terminal's character set.
                super::emit(&text);
            }
            Self::Json(json) => json.page(rows, now).await,
        }
    }
}

struct TableOutput {
    wide: bool,
    names: std::sync::Arc<IdNames>,
    /// The narrow table's column widths (see [`narrow_columns`]), within 80 columns together.
    narrow: Vec<u16>,
    columns: [Column; 7],
}

/// The narrow table's columns, laid out by [`crate::columns`] like the console's board: whole
/// error codes up to 24 characters within 80 columns (checkpoints as the board's pipeline).
fn narrow_columns(ids: usize) -> [Column; 7] {
    [
        Column::new("FLAG", Priority::Flag, 7, 7),
        Column::new("TENANT", Priority::Tenant, 6, 16).cut(Cut::Middle),
        crate::columns::id_column("SPACE", ids),
        Column::new("CKPT", Priority::Flag, 5, 5),
        Column::new("STATE", Priority::Flag, 9, 9),
        Column::new("     DOCS", Priority::Flag, 9, 9),
        // As the board's last column at 80: the blocking lease of a blocked space, else the
        // error code, else the worker or how long a stuck job has been idle.
        Column::new("WORKER/LEASE/ERROR", Priority::Code, 24, 64),
    ]
}

impl TableOutput {
    fn begin(wide: bool, names: std::sync::Arc<IdNames>) -> Self {
        // Rows come page by page after the header: the widths are laid out for the widest
        // values a column may hold (the ids in scope are known).
        let columns = narrow_columns(names.widest());
        let space = u16::try_from(names.widest()).unwrap_or(u16::MAX);
        // Error codes are given 24 (whole up to that, cut with a mark past it).
        let widest = [7, 16, space, 5, 9, 9, 24];
        let narrow = crate::columns::widths(&columns, &widest, 80, 1);
        let header = if wide {
            format!(
                "{:<14} {:<24} {:<36} {:<17} {:<9} {:>11} {:<16} {:<22} {:<24} {}\n",
                "FLAG",
                "TENANT",
                "SPACE",
                "CHECKPOINT",
                "STATE",
                "DOCS",
                "WORKER",
                "LEASE",
                "ERROR",
                "MESSAGE"
            )
        } else {
            let titles: Vec<&str> = columns.iter().map(|c| c.title).collect();
            format!(
                "{}\n",
                crate::columns::text_line(&columns, &narrow, &titles)
            )
        };
        super::emit(&header);
        Self {
            wide,
            names,
            narrow,
            columns,
        }
    }

    fn row(&self, out: &mut String, row: &BoardRow, now: DateTime<Utc>) {
        let s = &row.signals;
        let docs = format!("{}/{}", row.completed, row.total);
        let error = row
            .error_code
            .as_deref()
            .map(|e| text::clean(e, 64))
            .unwrap_or_default();
        if self.wide {
            let worker = row.worker.as_ref().map_or(String::new(), |w| {
                let left = row.lease_remaining(now).unwrap_or_default().num_seconds();
                format!("{} {left}s", text::clean(&w.worker_id, 10))
            });
            let lease = row.lease.as_ref().map_or(String::new(), |l| {
                let age = row.lease_age(now).unwrap_or_default().num_minutes();
                let suspect = if s.lease_orphan_suspect {
                    " orphan?"
                } else {
                    ""
                };
                format!("{} {age}m{suspect}", self.names.short(&l.id))
            });
            let message = row
                .error_message
                .as_deref()
                .map(|m| text::clean(m, 80))
                .unwrap_or_default();
            // Text from the database is fitted by display width, so columns stay aligned
            // whatever characters a tenant or worker id holds.
            out.push_str(&format!(
                "{:<14} {} {:<36} {:<17} {:<9} {:>11} {} {:<22} {} {}\n",
                s.attention.label(),
                text::fit(&row.tenant, 24),
                row.space,
                row.checkpoint,
                row.run_state,
                docs,
                text::fit(&worker, 16),
                lease,
                text::fit(&error, 24),
                message
            ));
        } else {
            // Nothing frozen yet reads as the board writes it.
            let docs = if row.has_documents() {
                format!("{docs:>9}")
            } else {
                format!("{:>9}", "-")
            };
            let holder = crate::tui::view::format::holder(row, now).map(|(text, _)| text);
            let last = crate::tui::view::format::narrow_last(
                row,
                holder,
                (!error.is_empty()).then(|| error.clone()),
            )
            .unwrap_or_default();
            // The pipeline the board draws: done, current, still to come.
            let checkpoint =
                crate::tui::view::format::pipeline(row.checkpoint, super::ascii_output());
            let values = [
                crate::tui::view::format::flag(s.attention),
                &row.tenant,
                &self.names.short(&row.space),
                &checkpoint,
                row.run_state.as_str(),
                &docs,
                &last,
            ];
            out.push_str(&crate::columns::text_line(
                &self.columns,
                &self.narrow,
                &values,
            ));
            out.push('\n');
        }
    }
}

/// How old the data read from a standby is.
fn replication_line(r: &crate::store::replica::Replication) -> String {
    if !r.measured {
        return "read from a standby; its lag is not measured (no primary was named)".into();
    }
    if r.caught_up() {
        return "read from a standby in sync with the primary".into();
    }
    let (Some(as_of), Some(delay)) = (r.as_of(), r.delay()) else {
        return "read from a standby that cannot tell how old its data is (no commit replayed \
                since it started)"
            .into();
    };
    let as_of = as_of.format("%H:%M:%S UTC");
    match r.bytes_behind() {
        Some(bytes) => format!(
            "read from a standby {} behind ({bytes} bytes of WAL to replay): ages are as of \
             {as_of}",
            crate::domain::duration::human(delay)
        ),
        None => format!(
            "read from a standby whose lag is unknown (the primary does not answer): ages are \
             as of its last replayed commit, {as_of}"
        ),
    }
}

fn table_end(report: &Report, shown: usize) -> String {
    let mut out = String::from("\n");
    let total = report.summary.spaces as usize;
    out.push_str(&summary_lines(&report.summary, shown, total));
    for problem in &report.unreadable {
        out.push_str(&format!(
            "unreadable: {}\n",
            text::clean(&problem.to_string(), 200)
        ));
    }
    out
}

fn summary_lines(s: &Summary, shown: usize, total: usize) -> String {
    let mut out = format!(
        "{shown} of {total} spaces shown; readable {}/{} ({:.0}%)\n",
        s.readable,
        s.spaces,
        s.readable_share() * 100.0,
    );
    for line in crate::domain::board::attention_lines(&s.by_attention) {
        out.push_str(&line);
        out.push('\n');
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
