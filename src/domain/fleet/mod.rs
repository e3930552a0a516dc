//! The fleet: the console's resident model of the ledger, kept current by changes rather than
//! rebuilt per poll.
//!
//! [`Fleet::apply`] takes what a poll found ([`Changes`]: changed rows, deleted ids, the
//! leases) and re-judges only the rows it touches. [`Fleet::advance`] moves the clock: rows
//! whose signals change with time (a lease runs out, a job goes quiet) wait in a queue keyed by
//! the instant of their next change, and only the rows that are due are judged again. The
//! summary, the tenants' tallies and the board's order are adjusted row by row, so no step
//! walks all rows (except a change of sort key or filter, and a first load).
//!
//! [`Fleet::snapshot`] publishes the state as immutable values that share their rows with the
//! model: cheap to hand to the UI after every poll.

mod names;
mod order;
mod parse;
mod tenants;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

pub(crate) use names::Names;
pub(crate) use parse::board_row;
pub use tenants::TenantRow;

use self::order::Order;
use self::tenants::Tenants;
use super::board::{BoardQuery, BoardRow, BoardView, Name, Summary};
use super::ids::IdNames;
use super::model::{MutationLease, RowError, RunState};
use super::progress::Series;
use super::signals::{self, Thresholds};
use crate::store::sync::Changes;

/// The model's state as the UI sees it after a poll.
#[derive(Debug, Clone)]
pub struct FleetSnapshot {
    /// The instant (database clock) every row's signals were judged at.
    pub db_now: DateTime<Utc>,
    pub summary: Summary,
    /// The rows the board's query shows, in its order.
    pub board: BoardView,
    /// Every row in scope by bootstrap id.
    pub rows: imbl::HashMap<Uuid, Arc<BoardRow>>,
    pub tenants: Arc<Vec<TenantRow>>,
    /// Rows that could not be read, shown rather than hidden.
    pub problems: Arc<Vec<RowError>>,
    /// How the ids in scope are shown.
    pub names: Arc<IdNames>,
}

impl FleetSnapshot {
    pub fn row(&self, id: &Uuid) -> Option<&Arc<BoardRow>> {
        self.rows.get(id)
    }

    /// Spaces in scope.
    pub(crate) fn total(&self) -> usize {
        self.rows.len()
    }
}

/// The resident model.
#[derive(Debug)]
pub struct Fleet {
    thresholds: Thresholds,
    names: Names,
    rows: imbl::HashMap<Uuid, Arc<BoardRow>>,
    /// (tenant, space) → bootstrap id, to find the row a lease belongs to.
    by_space: HashMap<(Name, Uuid), Uuid>,
    leases: HashMap<(Name, Uuid), Arc<MutationLease>>,
    /// Rows whose signals change at a known instant, by that instant.
    due: BTreeSet<(DateTime<Utc>, Uuid)>,
    due_of: HashMap<Uuid, DateTime<Utc>>,
    /// Progress history of running jobs.
    history: HashMap<Uuid, Series>,
    rollout: Series,
    completed_total: i64,
    summary: Summary,
    tenants: Tenants,
    problems: BTreeMap<Uuid, RowError>,
    problems_shown: Arc<Vec<RowError>>,
    problems_changed: bool,
    /// How the bootstraps' and their spaces' ids are shown: rebuilt when a row comes or goes.
    row_names: Arc<IdNames>,
    /// `row_names` with the leases' ids: rebuilt when either changes.
    names_shown: Arc<IdNames>,
    /// A row came or went since `row_names` was built.
    rows_changed: bool,
    /// A lease came or went since `names_shown` was built.
    leases_changed: bool,
    order: Order,
    /// A first load is under way: rows are ordered once at its end, not one by one.
    loading: bool,
    now: Option<DateTime<Utc>>,
}

impl Fleet {
    pub fn new(thresholds: Thresholds) -> Self {
        Self {
            thresholds,
            names: Names::default(),
            rows: imbl::HashMap::new(),
            by_space: HashMap::new(),
            leases: HashMap::new(),
            due: BTreeSet::new(),
            due_of: HashMap::new(),
            history: HashMap::new(),
            rollout: Series::default(),
            completed_total: 0,
            summary: Summary::default(),
            tenants: Tenants::default(),
            problems: BTreeMap::new(),
            problems_shown: Arc::new(Vec::new()),
            problems_changed: false,
            row_names: Arc::default(),
            names_shown: Arc::default(),
            rows_changed: false,
            leases_changed: false,
            order: Order::default(),
            loading: false,
            now: None,
        }
    }

    /// The instant the model was last judged at; `None` before the first poll.
    pub fn now(&self) -> Option<DateTime<Utc>> {
        self.now
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn row(&self, id: &Uuid) -> Option<&Arc<BoardRow>> {
        self.rows.get(id)
    }

    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    pub fn query(&self) -> &BoardQuery {
        self.order.query()
    }

    /// Applies one poll's changes and judges the model at its clock. Returns how many rows
    /// were added, replaced or removed.
    pub fn apply(&mut self, changes: Changes) -> usize {
        let watched = !changes.reset && self.now.is_some();
        if changes.reset {
            self.clear();
            self.loading = true;
        }
        // Between polls the clock is estimated (see `advance`) and may run a hair ahead of the
        // next poll's: the model's clock never goes back, or rows judged early would disagree
        // with the rows judged now.
        let now = self
            .now
            .map_or(changes.db_now, |before| before.max(changes.db_now));
        self.now = Some(now);
        let mut touched = 0;

        let stale_spaces = self.take_leases(changes.reset, changes.leases, changes.leases_gone);
        for id in &changes.deletes {
            touched += usize::from(self.remove(id));
            self.forget_problem(id);
        }
        let mut rebuilt = HashSet::with_capacity(changes.upserts.len());
        for record in changes.upserts {
            let id = record.id;
            match parse::board_row(record, &mut self.names) {
                Ok(row) => {
                    self.forget_problem(&id);
                    self.put(row, now, watched);
                    rebuilt.insert(id);
                }
                Err(problem) => {
                    self.remove(&id);
                    self.problems.insert(id, problem);
                    self.problems_changed = true;
                }
            }
            touched += 1;
        }
        for space in stale_spaces {
            let Some(id) = self.by_space.get(&space).copied() else {
                continue;
            };
            if !rebuilt.contains(&id)
                && let Some(row) = self.rows.get(&id)
            {
                let row = BoardRow::clone(row);
                self.put(row, now, watched);
                touched += 1;
            }
        }
        if std::mem::take(&mut self.loading) {
            self.order.rebuild(self.rows.values());
        }
        if std::mem::take(&mut self.problems_changed) {
            self.problems_shown = Arc::new(self.problems.values().cloned().collect());
        }
        self.advance(now);
        self.rollout
            .observe(now, self.completed_total, self.thresholds.rate_window);
        self.summary.set_rate(self.rollout.rate_per_minute());
        touched
    }

    /// Moves the model's clock to `now` and judges again the rows whose signals change by
    /// then. Returns how many rows changed class or flags.
    pub fn advance(&mut self, now: DateTime<Utc>) -> usize {
        if self.now.is_some_and(|before| now > before) {
            self.now = Some(now);
        }
        let mut changed = 0;
        while let Some(&(at, id)) = self.due.first() {
            if at > now {
                break;
            }
            self.due.pop_first();
            self.due_of.remove(&id);
            let Some(old) = self.rows.get(&id).cloned() else {
                continue;
            };
            let signals = signals::assess(&old.facts(), now, &self.thresholds);
            if signals == old.signals {
                self.schedule(&old, now);
                continue;
            }
            let mut row = BoardRow::clone(&old);
            row.signals = signals;
            self.replace(&old, Arc::new(row), now);
            changed += 1;
        }
        changed
    }

    /// Orders and filters the board as `query` says.
    pub fn set_query(&mut self, query: BoardQuery) {
        self.order.set_query(query, self.rows.values());
    }

    /// The state to publish.
    pub fn snapshot(&mut self) -> Option<FleetSnapshot> {
        if std::mem::take(&mut self.rows_changed) {
            let ids = self.rows.values().flat_map(|row| [row.id, row.space]);
            self.row_names = Arc::new(IdNames::new(ids));
            self.leases_changed = true;
        }
        if std::mem::take(&mut self.leases_changed) {
            let ids = self
                .leases
                .values()
                .flat_map(|lease| [lease.id, lease.knowledge_space_id]);
            self.names_shown = Arc::new(self.row_names.with(ids));
        }
        Some(FleetSnapshot {
            db_now: self.now?,
            summary: self.summary.clone(),
            board: self.order.view(),
            rows: self.rows.clone(),
            tenants: self.tenants.rows(),
            problems: self.problems_shown.clone(),
            names: self.names_shown.clone(),
        })
    }

    fn clear(&mut self) {
        let query = self.order.query().clone();
        *self = Self {
            names: std::mem::take(&mut self.names),
            ..Self::new(self.thresholds)
        };
        self.order = Order::new(query);
    }

    /// Takes a poll's leases: on a first load all of them, else those read again and those
    /// gone; returns the spaces whose lease changed.
    fn take_leases(
        &mut self,
        whole: bool,
        rows: Vec<crate::store::rows::LeaseRow>,
        gone: Vec<crate::store::rows::LeaseRow>,
    ) -> Vec<(Name, Uuid)> {
        let mut changed: Vec<(Name, Uuid)> = Vec::new();
        // A first load comes after `clear`: nothing to drop then; a later whole set (none is
        // sent today) would replace what is held.
        if whole && !self.leases.is_empty() {
            changed.extend(self.leases.keys().cloned());
            self.leases_changed = true;
            self.leases.clear();
        }
        for row in gone {
            let key = (self.names.get(&row.tenant_id), row.knowledge_space_id);
            // Only the lease that went: another may hold the space already.
            if self.leases.get(&key).is_some_and(|l| l.id == row.id) {
                self.leases.remove(&key);
                self.leases_changed = true;
                changed.push(key);
            }
        }
        for row in rows {
            let key = (self.names.get(&row.tenant_id), row.knowledge_space_id);
            let lease = MutationLease::from(row);
            match self.leases.get(&key) {
                Some(old) if **old == lease => {}
                old => {
                    if old.is_none_or(|old| old.id != lease.id) {
                        self.leases_changed = true;
                    }
                    self.leases.insert(key.clone(), Arc::new(lease));
                    changed.push(key);
                }
            }
        }
        changed
    }

    /// Adds or replaces a row built from fresh columns, with its space's lease, its progress
    /// history and its signals at `now`.
    fn put(&mut self, mut row: BoardRow, now: DateTime<Utc>, watched: bool) {
        row.lease = self.leases.get(&(row.tenant.clone(), row.space)).cloned();
        let old = self.rows.get(&row.id).cloned();
        row.progress_anchor = if row.run_state == RunState::Running {
            let series = self.history.entry(row.id).or_default();
            series.observe(now, i64::from(row.completed), self.thresholds.rate_window);
            series.first()
        } else {
            self.history.remove(&row.id);
            None
        };
        row.state_changed_at = match &old {
            Some(old) if (old.run_state, old.checkpoint) != (row.run_state, row.checkpoint) => {
                watched.then_some(now)
            }
            Some(old) => old.state_changed_at,
            None => None,
        };
        row.signals = signals::assess(&row.facts(), now, &self.thresholds);
        let row = Arc::new(row);
        match old {
            Some(old) => self.replace(&old, row, now),
            None => self.place(row, now),
        }
    }

    fn forget_problem(&mut self, id: &Uuid) {
        if self.problems.remove(id).is_some() {
            self.problems_changed = true;
        }
    }

    fn remove(&mut self, id: &Uuid) -> bool {
        let Some(old) = self.rows.get(id).cloned() else {
            return false;
        };
        self.unplace(&old);
        self.rows.remove(id);
        self.rows_changed = true;
        self.history.remove(id);
        true
    }

    fn replace(&mut self, old: &Arc<BoardRow>, new: Arc<BoardRow>, now: DateTime<Utc>) {
        self.unplace(old);
        self.place(new, now);
    }

    /// Counts a row in everywhere: the map, the order, the summary, the tallies, the queue.
    fn place(&mut self, row: Arc<BoardRow>, now: DateTime<Utc>) {
        self.summary.count_row(&row, true);
        self.tenants.count_row(&row, true, &self.thresholds);
        if !self.loading {
            self.order.insert(&row);
        }
        self.completed_total += i64::from(row.completed);
        self.by_space
            .insert((row.tenant.clone(), row.space), row.id);
        self.schedule(&row, now);
        self.rows_changed |= self.rows.insert(row.id, row).is_none();
    }

    /// Counts a row out of everything but the map.
    fn unplace(&mut self, row: &Arc<BoardRow>) {
        self.summary.count_row(row, false);
        self.tenants.count_row(row, false, &self.thresholds);
        self.order.remove(row);
        self.completed_total -= i64::from(row.completed);
        let key = (row.tenant.clone(), row.space);
        if self.by_space.get(&key) == Some(&row.id) {
            self.by_space.remove(&key);
        }
        if let Some(at) = self.due_of.remove(&row.id) {
            self.due.remove(&(at, row.id));
        }
    }

    /// Queues the row for the next instant its signals change, if there is one.
    fn schedule(&mut self, row: &BoardRow, now: DateTime<Utc>) {
        if let Some(at) = self.due_of.remove(&row.id) {
            self.due.remove(&(at, row.id));
        }
        if let Some(at) = signals::next_change(&row.facts(), now, &self.thresholds) {
            self.due.insert((at, row.id));
            self.due_of.insert(row.id, at);
        }
    }
}
