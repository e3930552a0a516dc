//! The board's rows in the operator's order, kept sorted as rows change.
//!
//! An order is a persistent vector of slots (`imbl`, 4 bytes a row): a changed row is moved
//! with two binary searches, a remove and an insert, all logarithmic, and publishing the
//! result to the UI is a constant-time clone. A row's place is a [`Place`], a few numbers made
//! from its record, so a change of sort key sorts those numbers rather than rows. Nothing here
//! walks all rows except a change of sort key or filter, and a first load; a filter walks the
//! records in slot order (see [`Order::refilter`]).

use std::sync::Arc;

use imbl::Vector;
use uuid::Uuid;

use super::filter::Filter;
use super::table::{Compact, Slot, Table};
use crate::domain::board::{BoardQuery, SortKey};

/// A row's place under a query: two rows compare as the query orders them. Every order ends
/// in the bootstrap id, so no two rows ever share a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Place(u64, u64, u64, Uuid);

/// Microseconds as an unsigned number of the same order.
fn biased(micros: i64) -> u64 {
    (micros as u64) ^ (1 << 63)
}

/// Where `record` goes under `query`; `ranks` gives each tenant's place in name order.
pub(crate) fn place(query: &BoardQuery, record: &Compact, ranks: &[u32]) -> Place {
    let attention = record.signals.attention.index() as u64;
    let updated = biased(record.updated_at);
    let rank = u64::from(
        ranks
            .get(record.tenant as usize)
            .copied()
            .unwrap_or(u32::MAX),
    );
    match query.sort {
        // By tenant, reversed is tenants Z-A with each tenant's trouble still first.
        SortKey::Tenant if query.reverses_inside() => {
            Place(u64::MAX - rank, attention, updated, record.id)
        }
        SortKey::Tenant => Place(rank, attention, updated, record.id),
        // The attention order of domain contract §2: the class, then the longest idle, then
        // the id, so the order is stable between polls and the same as `status` pages through.
        SortKey::Attention => Place(attention, updated, 0, record.id),
        // A fraction is never negative: its bits order as it does.
        SortKey::Progress => Place(record.fraction().to_bits(), attention, updated, record.id),
        SortKey::Idle => Place(updated, 0, 0, record.id),
    }
}

/// Each tenant's place in name order, by dictionary number.
fn ranks(table: &Table) -> Vec<u32> {
    let names = table.names();
    let mut order: Vec<u32> = (0..names.len() as u32).collect();
    order.sort_by(|a, b| names[*a as usize].cmp(&names[*b as usize]));
    let mut ranks = vec![0; names.len()];
    for (rank, number) in order.into_iter().enumerate() {
        ranks[number as usize] = rank as u32;
    }
    ranks
}

/// The ordered rows and the query that ordered them.
#[derive(Debug, Clone)]
pub(crate) struct Order {
    filter: Arc<Filter>,
    ranks: Arc<Vec<u32>>,
    /// Every row, in the query's order.
    all: Vector<Slot>,
    /// The rows the filters let through, when any filter is set.
    shown: Option<Vector<Slot>>,
}

impl Order {
    pub fn new(query: BoardQuery) -> Self {
        Self {
            filter: Arc::new(Filter::new(&query, &Table::default())),
            ranks: Arc::default(),
            all: Vector::new(),
            shown: None,
        }
    }

    pub(crate) fn query(&self) -> &BoardQuery {
        self.filter.query()
    }

    /// What the UI shows: the filtered rows (or all of them) with the query.
    pub(crate) fn view(&self, table: &Table) -> BoardView {
        BoardView {
            seq: self.shown.as_ref().unwrap_or(&self.all).clone(),
            table: table.clone(),
            filter: self.filter.clone(),
            ranks: self.ranks.clone(),
        }
    }

    /// Keeps the tenants' ranks current when the table has new names (a name's rank moves
    /// when one sorts before it, but never past another name, so the order stays sorted).
    pub(crate) fn learn_names(&mut self, table: &Table) {
        if self.ranks.len() != table.names().len() {
            self.ranks = Arc::new(ranks(table));
            // The filter's judgement of each name, and its tenant's number, for the new ones.
            self.filter = Arc::new(Filter::new(self.filter.query(), table));
        }
    }

    /// Orders every row again (a first load or a change of sort key).
    pub(crate) fn rebuild(&mut self, table: &Table) {
        self.learn_names(table);
        let query = self.filter.query();
        let mut places: Vec<(Place, Slot)> = table
            .records()
            .map(|(slot, record)| (place(query, record, &self.ranks), slot))
            .collect();
        places.sort_unstable();
        self.all = places.into_iter().map(|(_, slot)| slot).collect();
        self.refilter(table, false);
    }

    /// Takes a new query; only what it changes is recomputed.
    pub(crate) fn set_query(&mut self, query: BoardQuery, table: &Table) {
        let before = self.filter.query().clone();
        if query == before {
            return;
        }
        self.filter = Arc::new(Filter::new(&query, table));
        if (query.sort, query.reverses_inside()) != (before.sort, before.reverses_inside()) {
            self.rebuild(table);
        } else if (&query.quick, &query.tenant, &query.text)
            != (&before.quick, &before.tenant, &before.text)
        {
            let narrowing = self.shown.is_some() && query.narrows(&before);
            self.refilter(table, narrowing);
        }
    }

    /// Recomputes the filtered rows, from the previous ones when the query only narrowed
    /// and they are few; else the records are judged in slot order (one pass over memory in
    /// sequence) and the order keeps those that passed.
    fn refilter(&mut self, table: &Table, narrowing: bool) {
        if !self.filter.filters() {
            self.shown = None;
            return;
        }
        let filter = &self.filter;
        let admits = |slot: &Slot| {
            table
                .compact(*slot)
                .is_some_and(|record| filter.admits(record, table))
        };
        if let Some(shown) = self
            .shown
            .as_ref()
            .filter(|s| narrowing && s.len() * 8 < self.all.len())
        {
            self.shown = Some(shown.iter().copied().filter(|s| admits(s)).collect());
            return;
        }
        let mut passed = vec![false; table.capacity()];
        for (slot, record) in table.records() {
            passed[slot as usize] = filter.admits(record, table);
        }
        self.shown = Some(
            self.all
                .iter()
                .copied()
                .filter(|slot| passed[*slot as usize])
                .collect(),
        );
    }

    /// Places the row now in `slot` of `table`.
    pub(crate) fn insert(&mut self, slot: Slot, table: &Table) {
        self.learn_names(table);
        let Some(record) = table.compact(slot) else {
            return;
        };
        let at = place(self.filter.query(), record, &self.ranks);
        if self.filter.filters()
            && self.filter.admits(record, table)
            && let Some(shown) = &mut self.shown
        {
            insert(shown, slot, at, table, self.filter.query(), &self.ranks);
        }
        insert(
            &mut self.all,
            slot,
            at,
            table,
            self.filter.query(),
            &self.ranks,
        );
    }

    /// Takes out the row in `slot`, whose record is still the one it was placed with.
    pub(crate) fn remove(&mut self, slot: Slot, table: &Table) {
        let Some(record) = table.compact(slot) else {
            return;
        };
        let at = place(self.filter.query(), record, &self.ranks);
        let query = self.filter.query();
        remove(&mut self.all, at, table, query, &self.ranks);
        if let Some(shown) = &mut self.shown {
            remove(shown, at, table, query, &self.ranks);
        }
    }
}

fn search(
    seq: &Vector<Slot>,
    at: Place,
    table: &Table,
    query: &BoardQuery,
    ranks: &[u32],
) -> Result<usize, usize> {
    seq.binary_search_by(|probe| {
        table
            .compact(*probe)
            .map(|record| place(query, record, ranks))
            .cmp(&Some(at))
    })
}

fn insert(
    seq: &mut Vector<Slot>,
    slot: Slot,
    at: Place,
    table: &Table,
    query: &BoardQuery,
    ranks: &[u32],
) {
    match search(seq, at, table, query, ranks) {
        Ok(index) => {
            seq.set(index, slot);
        }
        Err(index) => seq.insert(index, slot),
    }
}

fn remove(seq: &mut Vector<Slot>, at: Place, table: &Table, query: &BoardQuery, ranks: &[u32]) {
    if let Ok(index) = search(seq, at, table, query, ranks) {
        seq.remove(index);
    }
}

/// The rows a query shows, in its order, as one immutable value the UI can index cheaply.
#[derive(Debug, Clone)]
pub struct BoardView {
    /// In the query's order (not yet read backwards).
    seq: Vector<Slot>,
    table: Table,
    filter: Arc<Filter>,
    ranks: Arc<Vec<u32>>,
}

impl BoardView {
    pub fn query(&self) -> &BoardQuery {
        self.filter.query()
    }

    pub fn len(&self) -> usize {
        self.seq.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }

    fn index(&self, position: usize) -> usize {
        if self.query().read_backwards() {
            self.seq.len() - 1 - position
        } else {
            position
        }
    }

    /// The row at `position` as shown (the query's direction applied).
    pub fn get(&self, position: usize) -> Option<crate::domain::board::BoardRow> {
        if position >= self.seq.len() {
            return None;
        }
        self.table.at(*self.seq.get(self.index(position))?)
    }

    /// Up to `count` rows from `position` on, as shown.
    pub fn window(
        &self,
        position: usize,
        count: usize,
    ) -> impl Iterator<Item = crate::domain::board::BoardRow> + '_ {
        (position..position.saturating_add(count).min(self.len())).filter_map(|p| self.get(p))
    }

    /// Where the row of bootstrap `id` (as currently known) is shown, if it is.
    pub(crate) fn position_of(&self, id: &Uuid) -> Option<usize> {
        let slot = self.table.slot(id)?;
        let at = place(self.query(), self.table.compact(slot)?, &self.ranks);
        let index = search(&self.seq, at, &self.table, self.query(), &self.ranks).ok()?;
        Some(self.index(index))
    }

    /// Whether the query shows the row of bootstrap `id`: for the few rows a caller holds,
    /// such as the marked ones, by the board's own rule.
    pub(crate) fn shows(&self, id: &Uuid) -> bool {
        self.table
            .slot(id)
            .and_then(|slot| self.table.compact(slot))
            .is_some_and(|record| self.filter.admits(record, &self.table))
    }
}
