//! Ledger health: the situations where the ledger itself is inconsistent — where "retry" is
//! the wrong answer — found by checking the bootstrap protocol's invariants (domain contract §1,
//! see [`crate::domain`]).
//!
//! Run on demand (`check`, the LedgerCheck view), never on every poll: the checks that read items
//! go through the bootstraps in batches (see [`crate::store::health`]).
//!
//! Each finding names its [`Check`], the tenant, space and bootstrap, what is wrong, the
//! evidence (the values read) and what would help. Some rules are deliberately narrow:
//! `head-behind` flags only a head older than `published_head_revision` (a newer head is
//! normal: heads move on with later writes); `parallel-items` ignores canceled jobs, which keep
//! their items as they were; `abandoned` means a worker lease expired more than
//! [`ABANDONED_WINDOWS`] lease windows ago (each counted as at least a minute) that no worker
//! reclaimed — the worker fleet may be down — and is judged as of the data, so a lagging
//! standby does not make it up; `unreadable` lists at most 1,000 rows and counts them all.
//! What the head table offers is read when the check starts: without a readable
//! `projection_set_publication_heads` both head checks are skipped, without its `revision`
//! column only `head-behind` is, and the result says which (`skipped`). JSON output has the
//! schema `bootstrap-console.check/v1`.
//!
//! In the live console the LedgerCheck view runs the same checks in the background, with a gauge,
//! the first time it opens and again on Ctrl-R; it also lists the stall outliers of
//! [`super::outliers`], which need a live console's progress history, so `check` cannot.

use serde::Serialize;
use uuid::Uuid;

use super::session::Session;
use super::text;
use crate::store::StoreError;
use crate::store::db::read_retried;
use crate::store::health::{self as sql, Abandoned, HeadMismatch, ItemCounts};

/// Bootstraps per batch of the item checks: a statement reads their items only.
pub(crate) const BATCH: i64 = 1000;
/// How many lease windows past its expiry a running job counts as abandoned.
pub(crate) const ABANDONED_WINDOWS: i32 = 3;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// Succeeded with documents, but the space has no publication head.
    HeadMissing,
    /// Succeeded, but the space's head is older than the revision the job published.
    HeadBehind,
    /// Snapshot captured, but the number of items is not `total_documents`.
    ItemCount,
    /// `completed_documents` is not the number of succeeded items.
    CompletedCount,
    /// Succeeded, with items that did not succeed.
    SucceededUnfinished,
    /// More than one item running in one job.
    ParallelItems,
    /// Running, with a worker lease expired long ago that no worker reclaimed.
    Abandoned,
    /// A row the console cannot read (a state or combination the protocol forbids).
    Unreadable,
}

impl Check {
    pub const ALL: [Check; 8] = [
        Self::HeadMissing,
        Self::HeadBehind,
        Self::ItemCount,
        Self::CompletedCount,
        Self::SucceededUnfinished,
        Self::ParallelItems,
        Self::Abandoned,
        Self::Unreadable,
    ];

    /// The name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::HeadMissing => "head-missing",
            Self::HeadBehind => "head-behind",
            Self::ItemCount => "item-count",
            Self::CompletedCount => "completed-count",
            Self::SucceededUnfinished => "succeeded-unfinished",
            Self::ParallelItems => "parallel-items",
            Self::Abandoned => "abandoned",
            Self::Unreadable => "unreadable",
        }
    }

    /// What would help, if anything the console offers does.
    pub fn action(self) -> &'static str {
        match self {
            Self::HeadMissing | Self::HeadBehind => {
                "not a retry: the space is open to readers without the publication it was \
                 rebuilt into; the platform team must re-publish its head"
            }
            Self::ItemCount => {
                "not a retry (it keeps the frozen snapshot): the snapshot does not match its \
                 count; the platform team must repair or recapture it"
            }
            Self::CompletedCount => {
                "not a retry (it keeps the count): a progress write was lost or doubled; the \
                 platform team must correct completed_documents"
            }
            Self::SucceededUnfinished => {
                "do not retry (the space would close again): it was published without every \
                 document rebuilt; report it to the platform team"
            }
            Self::ParallelItems => {
                "two workers rebuilt at once (fencing failed): cancel the job, then retry it"
            }
            Self::Abandoned => {
                "the worker fleet may be down: check the workers; any live worker reclaims \
                 the job by itself"
            }
            Self::Unreadable => {
                "the console cannot act on it: a platform bug wrote it; repair the row"
            }
        }
    }
}

/// One thing wrong with one space.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub check: Check,
    pub tenant_id: String,
    pub knowledge_space_id: Option<Uuid>,
    pub bootstrap_id: Uuid,
    /// What is wrong, in a sentence.
    pub problem: String,
    /// The values read, `name=value` apart by spaces.
    pub evidence: String,
    pub action: &'static str,
}

/// What a run of the checks found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LedgerCheck {
    pub findings: Vec<Finding>,
    /// Bootstraps the item and head checks went through.
    pub bootstraps_checked: i64,
    /// Checks the database could not run, and why (no head table, say).
    pub skipped: Vec<String>,
    /// The instant the checks judged ages at (`None` before a check).
    pub database_time: Option<chrono::DateTime<chrono::Utc>>,
}

/// Runs every check over the session's scope, reading where polls read. `progress` hears
/// (bootstraps checked, bootstraps in scope) after each batch.
pub(crate) async fn check(
    session: &Session,
    batch: i64,
    mut progress: impl FnMut(i64, i64),
) -> Result<LedgerCheck, StoreError> {
    let topology = session.topology();
    let tenant = session.tenant_scope();
    let mut health = LedgerCheck::default();
    // What the database has, found when the check starts (a check is its own session's
    // work): only what is missing is skipped.
    let heads = read_retried!(topology.reads(), "the head table", |c| sql::head_table(c))?;
    if !heads.readable {
        health.skipped.push(
            "head-missing, head-behind: no readable projection_set_publication_heads table".into(),
        );
    } else if !heads.revision {
        health
            .skipped
            .push("head-behind: projection_set_publication_heads has no revision column".into());
    }
    // Judged as of the data (on a lagging standby, not its clock).
    let now = session.reads().database_now().await?;
    health.database_time = Some(now);
    let total = read_retried!(topology.reads(), "the scope", |c| sql::bootstraps_in_scope(
        c, tenant
    ))?;
    let mut after = None;
    loop {
        let until = read_retried!(topology.reads(), "the next batch", |c| sql::batch_end(
            c,
            tenant,
            after,
            batch.max(1)
        ))?;
        let counts = read_retried!(topology.reads(), "the item check", |c| {
            sql::item_disagreements(c, tenant, after, until)
        })?;
        health
            .findings
            .extend(counts.iter().flat_map(item_findings));
        if heads.readable {
            let mismatches =
                read_retried!(
                    topology.reads(),
                    "the head check",
                    |c| sql::head_mismatches(c, heads, tenant, after, until)
                )?;
            health.findings.extend(mismatches.iter().map(head_finding));
        }
        health.bootstraps_checked = match until {
            Some(_) => (health.bootstraps_checked + batch).min(total),
            None => total,
        };
        progress(health.bootstraps_checked, total);
        match until {
            Some(id) => after = Some(id),
            None => break,
        }
    }
    let abandoned = read_retried!(topology.reads(), "the abandoned check", |c| sql::abandoned(
        c,
        tenant,
        ABANDONED_WINDOWS,
        now
    ))?;
    health
        .findings
        .extend(abandoned.iter().map(abandoned_finding));
    let unreadable = read_retried!(topology.reads(), "the unreadable rows", |c| {
        crate::store::report::unreadable(c, tenant)
    })?;
    if unreadable.len() >= crate::store::report::UNREADABLE_LISTED {
        health.skipped.push(format!(
            "unreadable: only the first {} such rows are listed",
            crate::store::report::UNREADABLE_LISTED
        ));
    }
    health
        .findings
        .extend(unreadable.into_iter().map(|row| Finding {
            check: Check::Unreadable,
            tenant_id: text::clean(&row.tenant_id, 255),
            knowledge_space_id: Some(row.knowledge_space_id),
            bootstrap_id: row.id,
            problem: "a row the protocol forbids: the console cannot judge or act on it".into(),
            evidence: format!(
                "run_state={} checkpoint={} total_documents={} completed_documents={}",
                text::clean(&row.run_state, 40),
                text::clean(&row.checkpoint, 40),
                row.total_documents,
                row.completed_documents
            ),
            action: Check::Unreadable.action(),
        }));
    health.findings.sort_by_key(|f| {
        (
            Check::ALL.iter().position(|c| *c == f.check),
            f.bootstrap_id,
        )
    });
    Ok(health)
}

/// The counts a bootstrap's items contradict, one finding each.
fn item_findings(row: &ItemCounts) -> Vec<Finding> {
    let evidence = format!(
        "checkpoint={} run_state={} total_documents={} completed_documents={} items={} \
         succeeded={} running={}",
        text::clean(&row.checkpoint, 40),
        text::clean(&row.run_state, 40),
        row.total_documents,
        row.completed_documents,
        row.items,
        row.succeeded,
        row.running
    );
    let mut problems = Vec::new();
    if row.checkpoint != "pending_snapshot" && row.items != i64::from(row.total_documents) {
        problems.push((
            Check::ItemCount,
            format!(
                "snapshot captured with {} documents, but {} items frozen",
                row.total_documents, row.items
            ),
        ));
    }
    let unfinished = row.run_state == "succeeded" && row.succeeded != row.items;
    // A success must count every document (a constraint says so): a count off there is the
    // unfinished items, said once below.
    if i64::from(row.completed_documents) != row.succeeded && !unfinished {
        problems.push((
            Check::CompletedCount,
            format!(
                "{} documents counted completed, but {} items succeeded",
                row.completed_documents, row.succeeded
            ),
        ));
    }
    if unfinished {
        problems.push((
            Check::SucceededUnfinished,
            format!(
                "succeeded with {} of {} items not succeeded",
                row.items - row.succeeded,
                row.items
            ),
        ));
    }
    // A canceled job keeps its items as they were: a retry sets them pending again.
    if row.running > 1 && row.run_state != "canceled" {
        problems.push((
            Check::ParallelItems,
            format!("{} items running at once in one job", row.running),
        ));
    }
    problems
        .into_iter()
        .map(|(check, problem)| Finding {
            check,
            tenant_id: text::clean(&row.tenant_id, 255),
            knowledge_space_id: Some(row.knowledge_space_id),
            bootstrap_id: row.id,
            problem,
            evidence: evidence.clone(),
            action: check.action(),
        })
        .collect()
}

fn head_finding(row: &HeadMismatch) -> Finding {
    let published = row
        .published_head_revision
        .map_or("none".to_string(), |r| r.to_string());
    let (check, problem) = match row.head_revision.filter(|_| row.has_head) {
        None if !row.has_head => (
            Check::HeadMissing,
            format!(
                "succeeded with {} documents, but the space has no publication head",
                row.total_documents
            ),
        ),
        // A head without a readable revision is only ever asked about when missing.
        None => (
            Check::HeadMissing,
            "the space's publication head cannot be compared".to_string(),
        ),
        Some(head) => (
            Check::HeadBehind,
            format!("the space's head is at revision {head}, older than the published {published}"),
        ),
    };
    Finding {
        check,
        tenant_id: text::clean(&row.tenant_id, 255),
        knowledge_space_id: Some(row.knowledge_space_id),
        bootstrap_id: row.id,
        problem,
        evidence: format!(
            "run_state=succeeded total_documents={} published_head_revision={published} \
             head_revision={}",
            row.total_documents,
            row.head_revision
                .map_or("none".to_string(), |r| r.to_string())
        ),
        action: check.action(),
    }
}

fn abandoned_finding(row: &Abandoned) -> Finding {
    let expired = row.lease_expires_at.map_or("?".to_string(), |at| {
        crate::domain::duration::human(row.db_now - at)
    });
    Finding {
        check: Check::Abandoned,
        tenant_id: text::clean(&row.tenant_id, 255),
        knowledge_space_id: Some(row.knowledge_space_id),
        bootstrap_id: row.id,
        problem: format!(
            "running, but its worker lease expired {expired} ago and no worker reclaimed it"
        ),
        evidence: format!(
            "worker_id={} heartbeat_at={} lease_expires_at={} now={}",
            row.worker_id
                .as_deref()
                .map_or("none".to_string(), |w| text::clean(w, 64)),
            row.heartbeat_at
                .map_or("none".to_string(), |t| t.to_rfc3339()),
            row.lease_expires_at
                .map_or("none".to_string(), |t| t.to_rfc3339()),
            row.db_now.to_rfc3339()
        ),
        action: Check::Abandoned.action(),
    }
}
