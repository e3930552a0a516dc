//! The board's rows in the operator's order, kept sorted as rows change.
//!
//! Both sequences are persistent vectors (`imbl`): a changed row is moved with two binary
//! searches, a remove and an insert, all logarithmic, and publishing the result to the UI is a
//! constant-time clone. Nothing here walks all rows except a change of sort key or filter.

use std::sync::Arc;

use imbl::Vector;

use crate::domain::board::{BoardQuery, BoardRow, BoardView, SortKey};

/// The ordered rows and the query that ordered them.
#[derive(Debug, Clone)]
pub struct Order {
    query: BoardQuery,
    /// [`BoardQuery::needle`], computed once per query.
    needle: String,
    /// Every row, in `query.sort` order.
    all: Vector<Arc<BoardRow>>,
    /// The rows the filters let through, when any filter is set.
    shown: Option<Vector<Arc<BoardRow>>>,
}

impl Default for Order {
    fn default() -> Self {
        Self::new(BoardQuery::default())
    }
}

impl Order {
    pub fn new(query: BoardQuery) -> Self {
        Self {
            needle: query.needle(),
            query,
            all: Vector::new(),
            shown: None,
        }
    }

    pub fn query(&self) -> &BoardQuery {
        &self.query
    }

    /// What the UI shows: the filtered rows (or all of them) with the query.
    pub fn view(&self) -> BoardView {
        BoardView::new(
            self.query.clone(),
            self.shown.clone().unwrap_or_else(|| self.all.clone()),
        )
    }

    /// Replaces every row (a first load or a change of sort key).
    pub fn rebuild<'a>(&mut self, rows: impl Iterator<Item = &'a Arc<BoardRow>>) {
        let sort = self.query.sort;
        let mut sorted: Vec<Arc<BoardRow>> = rows.cloned().collect();
        sorted.sort_unstable_by(|a, b| sort.compare(a, b));
        self.all = sorted.into_iter().collect();
        self.refilter(false);
    }

    /// Takes a new query; only what it changes is recomputed.
    pub fn set_query<'a>(
        &mut self,
        query: BoardQuery,
        rows: impl Iterator<Item = &'a Arc<BoardRow>>,
    ) {
        if query == self.query {
            return;
        }
        let before = std::mem::replace(&mut self.query, query);
        self.needle = self.query.needle();
        if self.query.sort != before.sort {
            self.rebuild(rows);
        } else if (&self.query.quick, &self.query.tenant, &self.query.text)
            != (&before.quick, &before.tenant, &before.text)
        {
            let narrowing = self.shown.is_some() && self.query.narrows(&before);
            self.refilter(narrowing);
        }
    }

    /// Recomputes the filtered rows, from the previous ones when the query only narrowed.
    fn refilter(&mut self, narrowing: bool) {
        if !self.query.filters() {
            self.shown = None;
            return;
        }
        let source = match (&self.shown, narrowing) {
            (Some(shown), true) => shown,
            _ => &self.all,
        };
        let kept: Vector<Arc<BoardRow>> = source
            .iter()
            .filter(|row| self.query.matches(row, &self.needle))
            .cloned()
            .collect();
        self.shown = Some(kept);
    }

    pub fn insert(&mut self, row: &Arc<BoardRow>) {
        let sort = self.query.sort;
        insert_sorted(&mut self.all, row, sort);
        if let Some(shown) = &mut self.shown
            && self.query.matches(row, &self.needle)
        {
            insert_sorted(shown, row, sort);
        }
    }

    pub fn remove(&mut self, row: &BoardRow) {
        let sort = self.query.sort;
        remove_sorted(&mut self.all, row, sort);
        if let Some(shown) = &mut self.shown {
            remove_sorted(shown, row, sort);
        }
    }
}

fn insert_sorted(rows: &mut Vector<Arc<BoardRow>>, row: &Arc<BoardRow>, sort: SortKey) {
    match rows.binary_search_by(|probe| sort.compare(probe, row)) {
        // The same place: the row was not removed first (cannot happen; keep the newer one).
        Ok(at) => {
            rows.set(at, row.clone());
        }
        Err(at) => rows.insert(at, row.clone()),
    }
}

fn remove_sorted(rows: &mut Vector<Arc<BoardRow>>, row: &BoardRow, sort: SortKey) {
    if let Ok(at) = rows.binary_search_by(|probe| sort.compare(probe, row)) {
        rows.remove(at);
    }
}
