//! The board's rows in the operator's order, kept sorted as rows change.
//!
//! The sequences are persistent vectors (`imbl`): a changed row is moved with two binary
//! searches, a remove and an insert, all logarithmic, and publishing the result to the UI is a
//! constant-time clone. Nothing here walks all rows except a change of sort key or filter, and
//! that walk reads a compact filter key per row, stored by value in a vector beside the rows
//! (chunks of keys one after another), instead of following a pointer to each row.

use std::sync::Arc;

use imbl::Vector;

use crate::domain::board::{BoardQuery, BoardRow, BoardView, Name, Needle};
use crate::domain::signals::Attention;

/// The ordered rows and the query that ordered them.
#[derive(Debug, Clone)]
pub(crate) struct Order {
    query: BoardQuery,
    /// [`BoardQuery::needle`], built once per query.
    needle: Needle,
    /// Every row, in `query.sort` order.
    all: Seq,
    /// The rows the filters let through, when any filter is set.
    shown: Option<Seq>,
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
            all: Seq::default(),
            shown: None,
        }
    }

    pub(crate) fn query(&self) -> &BoardQuery {
        &self.query
    }

    /// What the UI shows: the filtered rows (or all of them) with the query.
    pub(crate) fn view(&self) -> BoardView {
        let seq = self.shown.as_ref().unwrap_or(&self.all);
        BoardView::new(self.query.clone(), seq.rows.clone())
    }

    /// Replaces every row (a first load or a change of sort key).
    pub(crate) fn rebuild<'a>(&mut self, rows: impl Iterator<Item = &'a Arc<BoardRow>>) {
        let query = &self.query;
        let mut sorted: Vec<Arc<BoardRow>> = rows.cloned().collect();
        sorted.sort_unstable_by(|a, b| query.compare(a, b));
        self.all = Seq {
            keys: sorted.iter().map(|row| FilterKey::of(row)).collect(),
            rows: sorted.into_iter().collect(),
        };
        self.refilter(false);
    }

    /// Takes a new query; only what it changes is recomputed.
    pub(crate) fn set_query<'a>(
        &mut self,
        query: BoardQuery,
        rows: impl Iterator<Item = &'a Arc<BoardRow>>,
    ) {
        if query == self.query {
            return;
        }
        let before = std::mem::replace(&mut self.query, query);
        self.needle = self.query.needle();
        if (self.query.sort, self.query.reverses_inside())
            != (before.sort, before.reverses_inside())
        {
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
        self.shown = Some(source.filter(&self.query, &self.needle));
    }

    pub(crate) fn insert(&mut self, row: &Arc<BoardRow>) {
        let key = FilterKey::of(row);
        if let Some(shown) = &mut self.shown
            && key.admits(&self.query, &self.needle)
        {
            shown.insert(row, key.clone(), &self.query);
        }
        self.all.insert(row, key, &self.query);
    }

    pub(crate) fn remove(&mut self, row: &BoardRow) {
        self.all.remove(row, &self.query);
        if let Some(shown) = &mut self.shown {
            shown.remove(row, &self.query);
        }
    }
}

/// Rows in order, and the filter key of each at the same position.
#[derive(Debug, Clone, Default)]
struct Seq {
    rows: Vector<Arc<BoardRow>>,
    keys: Vector<FilterKey>,
}

impl Seq {
    fn insert(&mut self, row: &Arc<BoardRow>, key: FilterKey, order: &BoardQuery) {
        match self
            .rows
            .binary_search_by(|probe| order.compare(probe, row))
        {
            // The same place: the row was not removed first (cannot happen; keep the newer one).
            Ok(at) => {
                self.rows.set(at, row.clone());
                self.keys.set(at, key);
            }
            Err(at) => {
                self.rows.insert(at, row.clone());
                self.keys.insert(at, key);
            }
        }
    }

    fn remove(&mut self, row: &BoardRow, order: &BoardQuery) {
        if let Ok(at) = self
            .rows
            .binary_search_by(|probe| order.compare(probe, row))
        {
            self.rows.remove(at);
            self.keys.remove(at);
        }
    }

    /// The rows `query` admits. Rows are copied only from the first one that fails on: a key
    /// that keeps every row (the first letters of a common prefix) shares this sequence as is.
    fn filter(&self, query: &BoardQuery, needle: &Needle) -> Seq {
        let mut kept: Option<Seq> = None;
        for (index, (row, key)) in self.rows.iter().zip(self.keys.iter()).enumerate() {
            let admitted = key.admits(query, needle);
            match (&mut kept, admitted) {
                (Some(kept), true) => {
                    kept.rows.push_back(row.clone());
                    kept.keys.push_back(key.clone());
                }
                (None, false) => {
                    kept = Some(Seq {
                        rows: self.rows.clone().slice(..index),
                        keys: self.keys.clone().slice(..index),
                    })
                }
                _ => {}
            }
        }
        kept.unwrap_or_else(|| self.clone())
    }
}

/// What the filters look at, copied out of a row.
#[derive(Debug, Clone)]
struct FilterKey {
    text: Text,
    attention: Attention,
    tenant: Name,
}

/// Search text up to this many bytes lives inside the key; longer text on the heap.
const INLINE: usize = 94;

#[derive(Debug, Clone)]
enum Text {
    Inline(u8, [u8; INLINE]),
    Heap(Box<[u8]>),
}

impl Text {
    fn new(text: &[u8]) -> Self {
        if text.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..text.len()].copy_from_slice(text);
            Self::Inline(text.len() as u8, bytes)
        } else {
            Self::Heap(text.into())
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Self::Inline(len, bytes) => &bytes[..usize::from(*len)],
            Self::Heap(bytes) => bytes,
        }
    }
}

impl FilterKey {
    fn of(row: &BoardRow) -> Self {
        Self {
            text: Text::new(row.search_text().as_bytes()),
            attention: row.signals.attention,
            tenant: row.tenant.clone(),
        }
    }

    /// Whether `query` (with `needle` built from it) lets this row through.
    fn admits(&self, query: &BoardQuery, needle: &Needle) -> bool {
        query.admits(self.attention, &self.tenant, self.text.bytes(), needle)
    }
}
