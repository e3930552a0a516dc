//! `check`: the ledger's invariants over the scope, as a table or JSON; exit 1 when anything
//! was found. A progress bar on a terminal while the item checks go through the batches.

use std::io::IsTerminal;
use std::process::ExitCode;

use serde::Serialize;

use super::args::CheckArgs;
use super::{Failure, exit, outln};
use crate::domain::health::{self, LedgerCheck};
use crate::domain::signals::Thresholds;
use crate::domain::text;

pub(crate) const SCHEMA: &str = "bootstrap-console.check/v1";

pub(super) async fn check(args: &CheckArgs) -> Result<ExitCode, Failure> {
    let session = super::status::open_to_read(
        &args.connect,
        &args.read,
        args.tenant.clone(),
        Thresholds::default(),
    )
    .await?;
    let result = run(&session, args).await;
    session.close().await;
    result
}

async fn run(
    session: &crate::domain::session::Session,
    args: &CheckArgs,
) -> Result<ExitCode, Failure> {
    super::scope::require_known_tenant(session).await?;
    let started = std::time::Instant::now();
    let bar = std::io::stderr().is_terminal();
    let found = health::check(session, args.batch, |done, total| {
        if bar {
            progress(done, total);
        }
    })
    .await;
    if bar {
        super::say("");
    }
    let found = found?;
    if args.json {
        json(&found, session);
    } else {
        table(&found, started.elapsed());
    }
    Ok(ExitCode::from(if found.findings.is_empty() {
        exit::DONE
    } else {
        exit::NEEDS_ATTENTION
    }))
}

/// `checking items [########------------] 45000/100000 spaces`, redrawn in place on stderr.
fn progress(done: i64, total: i64) {
    const WIDTH: i64 = 20;
    let filled = if total == 0 {
        WIDTH
    } else {
        (done * WIDTH / total).min(WIDTH)
    };
    super::say_in_place(&format!(
        "checking items [{}{}] {done}/{total} spaces",
        "#".repeat(filled as usize),
        "-".repeat((WIDTH - filled) as usize)
    ));
}

/// One block per finding: what, where, the evidence, what would help.
fn table(found: &LedgerCheck, took: std::time::Duration) {
    for finding in &found.findings {
        let space = finding
            .knowledge_space_id
            .map_or(String::new(), |s| format!(" space {s}"));
        outln!(
            "{:<21} {}{space} (bootstrap {})",
            finding.check.name().to_uppercase(),
            text::clean(&finding.tenant_id, 40),
            finding.bootstrap_id
        );
        outln!("  {}", finding.problem);
        outln!("  evidence: {}", finding.evidence);
        outln!("  action: {}", finding.action);
    }
    for skipped in &found.skipped {
        outln!("skipped: {skipped}");
    }
    outln!(
        "{} finding(s) in {} bootstraps checked ({:.1}s)",
        found.findings.len(),
        found.bootstraps_checked,
        took.as_secs_f64()
    );
}

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    database_time: Option<chrono::DateTime<chrono::Utc>>,
    target: String,
    tenant_scope: Option<&'a str>,
    bootstraps_checked: i64,
    skipped: &'a [String],
    findings: &'a [health::Finding],
}

fn json(found: &LedgerCheck, session: &crate::domain::session::Session) {
    let document = Document {
        schema: SCHEMA,
        database_time: found.database_time,
        target: session.topology().primary().host().to_string(),
        tenant_scope: session.tenant_scope(),
        bootstraps_checked: found.bootstraps_checked,
        skipped: &found.skipped,
        findings: &found.findings,
    };
    super::emit_raw(&super::json::pretty(&document));
}
