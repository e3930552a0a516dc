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
//! Rows are kept as compact records in a [`Table`] (see [`table`]), and [`Fleet::snapshot`]
//! publishes the state as immutable values that share the table with the model: cheap to hand
//! to the UI after every poll.

mod filter;
mod index;
mod names;
mod order;
mod parse;
mod table;
mod tenants;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

pub(crate) use names::Names;
pub use order::BoardView;
pub(crate) use parse::board_row;
pub use table::Table;
pub use tenants::TenantRow;

use self::index::Index;
use self::order::Order;
use self::table::{Clock, Compact, Dict, Slot};
use self::tenants::Tenants;
use super::board::{BoardQuery, BoardRow, Summary};
use super::ids::IdNames;
use super::model::{MutationLease, RowError, RunState};
use super::progress::Series;
use super::signals::{self, Thresholds};
use crate::store::sync::Changes;

/// Records of a poll taken between two returns of the emptied part of their list.
const RELEASE_RECORDS_EVERY: usize = 65_536;

/// The model's state as the UI sees it after a poll.
#[derive(Debug, Clone)]
pub struct FleetSnapshot {
    /// The instant (database clock) every row's signals were judged at.
    pub db_now: DateTime<Utc>,
    pub summary: Summary,
    /// The rows the board's query shows, in its order.
    pub board: BoardView,
    /// Every row in scope.
    pub rows: Table,
    pub tenants: Arc<Vec<TenantRow>>,
    /// Rows that could not be read, shown rather than hidden.
    pub problems: Arc<Vec<RowError>>,
    /// How the ids in scope are shown.
    pub names: Arc<IdNames>,
}

impl FleetSnapshot {
    pub fn row(&self, id: &Uuid) -> Option<BoardRow> {
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
    dict: Dict,
    table: Table,
    /// Slots emptied by rows that went, for the next rows that come.
    free: Vec<Slot>,
    /// (tenant, space) → slot, to find the row a lease belongs to.
    by_space: Index<(u32, Uuid)>,
    /// Rows counted out before their space's lease changed (they were counted in with the
    /// old one), to be counted in again with the new one.
    detached: HashSet<Slot>,
    /// Rows whose signals change at a known instant, by that instant.
    due: BTreeSet<(DateTime<Utc>, Slot)>,
    due_of: HashMap<Slot, DateTime<Utc>>,
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
            dict: Dict::default(),
            table: Table::default(),
            free: Vec::new(),
            by_space: Index::default(),
            detached: HashSet::new(),
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
            order: Order::new(BoardQuery::default()),
            loading: false,
            now: None,
        }
    }

    /// The instant the model was last judged at; `None` before the first poll.
    pub fn now(&self) -> Option<DateTime<Utc>> {
        self.now
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub fn row(&self, id: &Uuid) -> Option<BoardRow> {
        self.table.get(id)
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
        // The ids this poll's columns rebuilt: rows whose lease changed are put again below
        // only if they are not among them.
        let mut rebuilt = HashSet::new();
        // Records are taken from the back of a reversed list, which is given back to the
        // allocator as it empties: a first load of a million records (about 290 MB) then
        // shrinks while the table it fills grows, rather than the two adding up.
        let mut upserts = changes.upserts;
        upserts.reverse();
        let mut taken = 0usize;
        while let Some(record) = upserts.pop() {
            taken += 1;
            if taken.is_multiple_of(RELEASE_RECORDS_EVERY) {
                upserts.shrink_to_fit();
            }
            let id = record.id;
            match parse::board_row(record, &mut self.names) {
                Ok(row) => {
                    self.forget_problem(&id);
                    self.put(row, now, watched);
                    if !stale_spaces.is_empty() {
                        rebuilt.insert(id);
                    }
                }
                Err(problem) => {
                    self.remove(&id);
                    self.problems.insert(id, problem);
                    self.problems_changed = true;
                }
            }
            touched += 1;
        }
        for slot in stale_spaces {
            if let Some(row) = self.table.at(slot)
                && !rebuilt.contains(&row.id)
            {
                self.put(row, now, watched);
                touched += 1;
            }
        }
        debug_assert!(
            self.detached.is_empty(),
            "every detached row is counted in again"
        );
        if std::mem::take(&mut self.loading) {
            self.order.rebuild(&self.table);
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
        while let Some(&(at, slot)) = self.due.first() {
            if at > now {
                break;
            }
            self.due.pop_first();
            self.due_of.remove(&slot);
            let Some(old) = self.table.at(slot) else {
                continue;
            };
            let signals = signals::assess(&old.facts(), now, &self.thresholds);
            if signals == old.signals {
                self.schedule(slot, &old, now);
                continue;
            }
            let mut row = old.clone();
            row.signals = signals;
            self.unplace(slot, &old);
            self.store(&row, Some(slot));
            self.place(slot, &row, now);
            changed += 1;
        }
        changed
    }

    /// Orders and filters the board as `query` says.
    pub fn set_query(&mut self, query: BoardQuery) {
        self.order.set_query(query, &self.table);
    }

    /// The state to publish.
    pub fn snapshot(&mut self) -> Option<FleetSnapshot> {
        if std::mem::take(&mut self.rows_changed) {
            let ids = self
                .table
                .records()
                .flat_map(|(_, record)| [record.id, record.space]);
            self.row_names = Arc::new(IdNames::new(ids));
            self.leases_changed = true;
        }
        if std::mem::take(&mut self.leases_changed) {
            let ids = self
                .table
                .leases()
                .flat_map(|lease| [lease.id, lease.knowledge_space_id]);
            self.names_shown = Arc::new(self.row_names.with(ids));
        }
        Some(FleetSnapshot {
            db_now: self.now?,
            summary: self.summary.clone(),
            board: self.order.view(&self.table),
            rows: self.table.clone(),
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
    /// gone; returns the slots of the rows whose space's lease changed, counted out (see
    /// [`Self::detach`]) until they are put again.
    fn take_leases(
        &mut self,
        whole: bool,
        rows: Vec<crate::store::rows::LeaseRow>,
        gone: Vec<crate::store::rows::LeaseRow>,
    ) -> Vec<Slot> {
        let mut changed: Vec<Slot> = Vec::new();
        // A first load comes after `clear`: nothing to drop then; a later whole set (none is
        // sent today) would replace what is held.
        if whole && self.table.leases().next().is_some() {
            let held: Vec<(u32, Uuid)> = self.table.lease_keys().collect();
            for key in held {
                changed.extend(self.detach(key));
            }
            self.table.clear_leases();
            self.leases_changed = true;
        }
        for row in gone {
            let key = (
                self.dict.number(&self.names.get(&row.tenant_id)),
                row.knowledge_space_id,
            );
            // Only the lease that went: another may hold the space already.
            if self
                .table
                .lease(key.0, &key.1)
                .is_some_and(|l| l.id == row.id)
            {
                changed.extend(self.detach(key));
                self.table.set_lease(key, None);
                self.leases_changed = true;
            }
        }
        for row in rows {
            let key = (
                self.dict.number(&self.names.get(&row.tenant_id)),
                row.knowledge_space_id,
            );
            let lease = MutationLease::from(row);
            match self.table.lease(key.0, &key.1) {
                Some(old) if **old == lease => {}
                old => {
                    if old.is_none_or(|old| old.id != lease.id) {
                        self.leases_changed = true;
                    }
                    changed.extend(self.detach(key));
                    self.table.set_lease(key, Some(Arc::new(lease)));
                }
            }
        }
        self.table.set_names(&self.dict);
        changed
    }

    /// Counts out the row of the space `key`, if any, while it still reads the lease it was
    /// counted in with: a row shows its space's lease as the table holds it now.
    fn detach(&mut self, key: (u32, Uuid)) -> Option<Slot> {
        let slot = self.by_space.get(&key)?;
        if self.detached.contains(&slot) {
            return None;
        }
        let row = self.table.at(slot)?;
        self.unplace(slot, &row);
        self.detached.insert(slot);
        Some(slot)
    }

    /// Adds or replaces a row built from fresh columns, with its space's lease, its progress
    /// history and its signals at `now`.
    fn put(&mut self, mut row: BoardRow, now: DateTime<Utc>, watched: bool) {
        let tenant = self.dict.number(&row.tenant);
        row.lease = self.table.lease(tenant, &row.space).cloned();
        let old = self
            .table
            .slot(&row.id)
            .and_then(|slot| Some((slot, self.table.at(slot)?)));
        row.progress_anchor = if row.run_state == RunState::Running {
            let series = self.history.entry(row.id).or_default();
            series.observe(now, i64::from(row.completed), self.thresholds.rate_window);
            series.first()
        } else {
            self.history.remove(&row.id);
            None
        };
        row.state_changed_at = match &old {
            Some((_, old))
                if (old.run_state, old.checkpoint) != (row.run_state, row.checkpoint) =>
            {
                watched.then_some(now)
            }
            Some((_, old)) => old.state_changed_at,
            None => None,
        };
        row.signals = signals::assess(&row.facts(), now, &self.thresholds);
        if let Some((slot, old)) = &old
            && !self.detached.remove(slot)
        {
            self.unplace(*slot, old);
        }
        let slot = self.store(&row, old.as_ref().map(|(slot, _)| *slot));
        self.rows_changed |= old.is_none();
        self.place(slot, &row, now);
    }

    /// Writes `row`'s record into the table, in `held` if it has a slot; returns its slot.
    fn store(&mut self, row: &BoardRow, held: Option<Slot>) -> Slot {
        let record = Compact::of(row, &mut self.dict);
        self.table.set_names(&self.dict);
        self.table.put(record, Clock::of(row), held, &mut self.free)
    }

    fn forget_problem(&mut self, id: &Uuid) {
        if self.problems.remove(id).is_some() {
            self.problems_changed = true;
        }
    }

    fn remove(&mut self, id: &Uuid) -> bool {
        let Some(slot) = self.table.slot(id) else {
            return false;
        };
        if let Some(old) = self.table.at(slot)
            && !self.detached.remove(&slot)
        {
            self.unplace(slot, &old);
        }
        if let Some(slot) = self.table.take(id) {
            self.free.push(slot);
        }
        self.rows_changed = true;
        self.history.remove(id);
        true
    }

    /// Counts the row now stored in `slot` in everywhere: the order, the summary, the
    /// tallies, the queue.
    fn place(&mut self, slot: Slot, row: &BoardRow, now: DateTime<Utc>) {
        self.summary.count_row(row, true);
        self.tenants.count_row(row, true, &self.thresholds);
        if !self.loading {
            self.order.insert(slot, &self.table);
        }
        self.completed_total += i64::from(row.completed);
        let tenant = self.dict.number(&row.tenant);
        self.by_space.insert((tenant, row.space), slot);
        self.schedule(slot, row, now);
    }

    /// Counts the row in `slot` (still stored there) out of everything but the table.
    fn unplace(&mut self, slot: Slot, row: &BoardRow) {
        self.summary.count_row(row, false);
        self.tenants.count_row(row, false, &self.thresholds);
        if !self.loading {
            self.order.remove(slot, &self.table);
        }
        self.completed_total -= i64::from(row.completed);
        let key = (self.dict.number(&row.tenant), row.space);
        if self.by_space.get(&key) == Some(slot) {
            self.by_space.remove(&key);
        }
        if let Some(at) = self.due_of.remove(&slot) {
            self.due.remove(&(at, slot));
        }
    }

    /// Queues the row for the next instant its signals change, if there is one.
    fn schedule(&mut self, slot: Slot, row: &BoardRow, now: DateTime<Utc>) {
        if let Some(at) = self.due_of.remove(&slot) {
            self.due.remove(&(at, slot));
        }
        if let Some(at) = signals::next_change(&row.facts(), now, &self.thresholds) {
            self.due.insert((at, slot));
            self.due_of.insert(slot, at);
        }
    }
}
