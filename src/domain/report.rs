//! The rollout for scripts (`status`, and actions that select spaces by filter): the summary
//! from one aggregate statement, then the rows in attention order, a page at a time.
//!
//! Rows are judged by the same rules as the board ([`signals::assess`], with the space's
//! lease) against one database-clock instant read at the start, so a canceled space blocked by
//! a lease is listed as blocked, and the listing agrees with the summary printed with it.
//! Between pages nothing is held open on the server; a row that changes class while the report
//! runs is listed at most once.
//!
//! Pages hold 10,000 rows (20,000 for the classes the database must sort) and are read on two
//! connections at most a few pages ahead of the output, so a slow reader (`status | less`)
//! holds nothing open on the server while it drains what was written. The table names its ids
//! among the whole scope, not a page of it, with one more statement.
//!
//! Measured (`cargo bench --bench fleet -- --quick`, 100,000 spaces, workers writing):
//! `status --json` took 385 ms and 55 MB, against 359 ms and 117 MB for `psql` printing the
//! same rows; `status --attention failed` (5,080 rows) 115 ms and 24 MB, against 61 ms and
//! 13 MB for `psql … WHERE run_state = 'failed'` (the price of naming ids among the scope).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::board::{BoardRow, Summary};
use super::fleet::{Names, board_row};
use super::model::{Checkpoint, MutationLease, RowError, RunState};
use super::session::Session;
use super::signals::{self, Attention, Group, Thresholds};
use crate::store::StoreError;
use crate::store::db::read_retried;
use crate::store::report::{self, Clock, Keyset, Narrowing, SummaryGroup};

/// Rows per page: large enough to be cheap per row, small enough to stream.
const PAGE: i64 = 10_000;
/// Classes the database must sort (they span running rows, whose index order is another)
/// are read in larger pages, so they are sorted fewer times.
const SORTED_PAGE: i64 = 20_000;

/// Which attention classes a report lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttentionFilter {
    /// Every class that needs an operator.
    Any,
    /// Every class that is watched.
    Watch,
    Class(Attention),
}

/// What a report lists, besides the session's tenant scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportFilter {
    pub states: Vec<RunState>,
    pub checkpoints: Vec<Checkpoint>,
    pub attention: Option<AttentionFilter>,
}

impl ReportFilter {
    /// The classes to list, in attention order.
    fn classes(&self) -> Vec<Attention> {
        Attention::ALL
            .into_iter()
            .filter(|a| match self.attention {
                None => true,
                Some(AttentionFilter::Any) => a.needs_operator(),
                Some(AttentionFilter::Watch) => a.group() == Group::Watch,
                Some(AttentionFilter::Class(class)) => *a == class,
            })
            .collect()
    }

    fn narrowing(&self, tenant: Option<&str>) -> Narrowing {
        let names = |values: Vec<&'static str>| (!values.is_empty()).then_some(values);
        Narrowing {
            tenant: tenant.map(str::to_string),
            run_states: names(self.states.iter().map(|s| s.as_str()).collect())
                .map(|v| v.into_iter().map(str::to_string).collect()),
            checkpoints: names(self.checkpoints.iter().map(|c| c.as_str()).collect())
                .map(|v| v.into_iter().map(str::to_string).collect()),
        }
    }
}

/// The rollout at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub db_now: DateTime<Utc>,
    /// The whole scope (filters narrow only the rows listed).
    pub summary: Summary,
    pub unreadable: Vec<RowError>,
}

fn clock(now: DateTime<Utc>, thresholds: &Thresholds) -> Clock {
    Clock {
        now,
        stuck_after_us: thresholds
            .stuck_after
            .num_microseconds()
            .unwrap_or(i64::MAX),
        heartbeat_late_fraction: thresholds.heartbeat_late_fraction,
        orphan_after_us: thresholds
            .orphan_after
            .num_microseconds()
            .unwrap_or(i64::MAX),
        reclaim_grace_us: thresholds
            .reclaim_grace
            .num_microseconds()
            .unwrap_or(i64::MAX),
    }
}

/// The summary of the session's scope, judged at the database's clock now.
pub async fn summarize(session: &Session, thresholds: &Thresholds) -> Result<Report, StoreError> {
    let now = session.reads().database_now().await?;
    summarize_at(session, thresholds, now).await
}

/// The summary judged at `now` (tests compare it with the board's at the same instant).
pub async fn summarize_at(
    session: &Session,
    thresholds: &Thresholds,
    now: DateTime<Utc>,
) -> Result<Report, StoreError> {
    let topology = session.topology();
    let tenant = session.tenant_scope();
    let clock = clock(now, thresholds);
    let groups = read_retried!(topology.reads(), "the summary", |c| report::summary(
        c, tenant, &clock
    ))?;
    let (summary, unreadable_count) = summary_of(&groups);
    let unreadable = if unreadable_count > 0 {
        read_retried!(topology.reads(), "the unreadable rows", |c| {
            report::unreadable(c, tenant)
        })?
        .into_iter()
        .map(|row| RowError {
            table: "bootstrap",
            id: row.id.to_string(),
            problem: format!(
                "run_state {:?} at checkpoint {:?} with counts or lease columns the \
                     constraints forbid",
                super::text::clip(&row.run_state, 40),
                super::text::clip(&row.checkpoint, 40)
            ),
        })
        .collect()
    } else {
        Vec::new()
    };
    Ok(Report {
        db_now: now,
        summary,
        unreadable,
    })
}

/// The summary the groups add up to, and how many rows could not be read.
fn summary_of(groups: &[SummaryGroup]) -> (Summary, i64) {
    let mut summary = Summary::default();
    let mut unreadable = 0;
    for group in groups {
        let parsed = (
            group
                .class
                .and_then(|c| Attention::ALL.get(c as usize).copied()),
            Checkpoint::parse(&group.checkpoint),
            RunState::parse(&group.run_state),
        );
        let (Some(class), Some(checkpoint), Some(run_state)) = parsed else {
            unreadable += group.spaces;
            continue;
        };
        let n = u32::try_from(group.spaces).unwrap_or(u32::MAX);
        summary.matrix[checkpoint.index()][run_state.index()] += n;
        summary.spaces += n;
        summary.by_attention[class.index()] += n;
        summary.documents_completed += group.completed;
        if run_state == RunState::Succeeded {
            summary.readable += n;
        } else if checkpoint == Checkpoint::PendingSnapshot {
            summary.spaces_uncaptured += n;
        } else {
            summary.documents_remaining += group.remaining;
            if run_state == RunState::Running {
                summary.documents_running += group.remaining;
            }
        }
    }
    (summary, unreadable)
}

/// Pages the second lane of [`Rows::prefetch`] may read ahead.
const LANE_DEPTH: usize = 4;

/// Pages read in the background (see [`Rows::prefetch`]), in attention order.
pub struct Pages {
    lanes: VecDeque<tokio::sync::mpsc::Receiver<Result<Vec<BoardRow>, StoreError>>>,
    /// A row that changed class between two lanes' statements is listed once.
    listed: HashSet<Uuid>,
}

impl Pages {
    /// The next page; `None` when the listing is complete.
    pub async fn next(&mut self) -> Option<Result<Vec<BoardRow>, StoreError>> {
        loop {
            let lane = self.lanes.front_mut()?;
            match lane.recv().await {
                Some(Ok(mut page)) => {
                    page.retain(|row| self.listed.insert(row.id));
                    return Some(Ok(page));
                }
                Some(Err(error)) => return Some(Err(error)),
                None => {
                    self.lanes.pop_front();
                }
            }
        }
    }
}

/// The mutation leases of a report, by space id (a space id is unique within its tenant; the
/// tenant is checked on lookup).
type Leases = HashMap<Uuid, Vec<Arc<MutationLease>>>;

/// The rows a report lists, page by page, in attention order.
pub struct Rows {
    session: Session,
    /// Every lease in scope, by space, read once (with the first page, or before the lanes).
    leases: Option<Arc<Leases>>,
    /// `None`: the default for each class.
    page: Option<i64>,
    thresholds: Thresholds,
    clock: Clock,
    narrowing: Narrowing,
    classes: VecDeque<Attention>,
    after: Keyset,
    listed: HashSet<Uuid>,
    names: Names,
}

impl Rows {
    /// The rows of `filter` in the session's scope, judged at `now` (a report's instant).
    pub fn new(
        session: &Session,
        now: DateTime<Utc>,
        filter: &ReportFilter,
        thresholds: &Thresholds,
    ) -> Self {
        Self {
            session: session.clone(),
            leases: None,
            page: None,
            thresholds: *thresholds,
            clock: clock(now, thresholds),
            narrowing: filter.narrowing(session.tenant_scope()),
            classes: filter.classes().into(),
            after: None,
            listed: HashSet::new(),
            names: Names::default(),
        }
    }

    /// Reads `rows` rows per statement instead of the defaults.
    pub fn page_size(mut self, rows: i64) -> Self {
        self.page = Some(rows.max(1));
        self
    }

    /// Reads the pages in the background, on two connections at once: the classes that need
    /// attention (and running) in one lane, one page ahead of the writer; queued, canceled and
    /// succeeded — most of a rollout — in another, up to [`LANE_DEPTH`] pages ahead, so the
    /// bulk is being read while the first lane is written. Nothing is held open on the server
    /// while the reader waits.
    pub fn prefetch(self) -> Pages {
        let (first, second): (Vec<Attention>, Vec<Attention>) =
            self.classes.iter().partition(|class| {
                matches!(class.group(), Group::NeedsOperator | Group::Watch)
                    || **class == Attention::Running
            });
        let (first_pages, first_lane) = tokio::sync::mpsc::channel(1);
        let (second_pages, second_lane) = tokio::sync::mpsc::channel(LANE_DEPTH);
        tokio::spawn(async move {
            // Both lanes judge with the same leases.
            let leases = match self.load_leases().await {
                Ok(leases) => leases,
                Err(error) => {
                    let _ = first_pages.send(Err(error)).await;
                    return;
                }
            };
            for (classes, pages) in [(first, first_pages), (second, second_pages)] {
                let mut lane = Rows {
                    session: self.session.clone(),
                    leases: Some(leases.clone()),
                    page: self.page,
                    thresholds: self.thresholds,
                    clock: self.clock,
                    narrowing: self.narrowing.clone(),
                    classes: classes.into(),
                    after: None,
                    listed: HashSet::new(),
                    names: Names::default(),
                };
                tokio::spawn(async move {
                    while let Some(page) = lane.next_page().await.transpose() {
                        let failed = page.is_err();
                        if pages.send(page).await.is_err() || failed {
                            return;
                        }
                    }
                });
            }
        });
        Pages {
            lanes: vec![first_lane, second_lane].into(),
            listed: HashSet::new(),
        }
    }

    async fn load_leases(&self) -> Result<Arc<Leases>, StoreError> {
        let topology = self.session.topology();
        let layout = *topology.reads().layout();
        let tenant = self.narrowing.tenant.as_deref();
        let rows = read_retried!(topology.reads(), "the leases", |c| {
            crate::store::fleet::leases(c, &layout, tenant)
        })?;
        let mut leases = Leases::new();
        for row in rows {
            leases
                .entry(row.knowledge_space_id)
                .or_default()
                .push(Arc::new(MutationLease::from(row)));
        }
        Ok(Arc::new(leases))
    }

    /// The next rows, in order; `None` when the listing is complete. A page may be empty
    /// while later pages are not (its rows all belonged to other classes).
    pub async fn next_page(&mut self) -> Result<Option<Vec<BoardRow>>, StoreError> {
        let Some(&class) = self.classes.front() else {
            return Ok(None);
        };
        let page = self.page.unwrap_or(match class {
            Attention::Failed | Attention::Queued | Attention::Canceled | Attention::Succeeded => {
                PAGE
            }
            _ => SORTED_PAGE,
        });
        if self.leases.is_none() {
            self.leases = Some(self.load_leases().await?);
        }
        let (narrowing, clock, after) = (&self.narrowing, &self.clock, self.after);
        let records = read_retried!(self.session.topology().reads(), "a page", |c| report::page(
            c,
            narrowing,
            clock,
            class.index(),
            after,
            page
        ))?;
        match records.last() {
            Some(last) if records.len() as i64 == page => {
                self.after = Some((last.updated_at, last.id));
            }
            _ => {
                self.classes.pop_front();
                self.after = None;
            }
        }
        let mut rows = Vec::with_capacity(records.len());
        for record in records {
            let lease = self
                .leases
                .as_ref()
                .and_then(|leases| leases.get(&record.knowledge_space_id))
                .and_then(|on_space| on_space.iter().find(|l| l.tenant_id == record.tenant_id))
                .cloned();
            let Ok(mut row) = board_row(record, &mut self.names) else {
                // Unreadable rows are reported with the summary.
                continue;
            };
            row.lease = lease;
            row.signals = signals::assess(&row.facts(), self.clock.now, &self.thresholds);
            if row.signals.attention == class && self.listed.insert(row.id) {
                rows.push(row);
            }
        }
        Ok(Some(rows))
    }
}
