//! The board's filter compiled against the table: the `/` text is looked for once in each
//! name of the dictionary (tenants, workers, error codes) and in each row's ids, so a row is
//! judged by a few numbers and its two ids rather than by a search string kept per row.

use std::sync::Arc;

use uuid::Uuid;

use super::table::{Compact, NONE, Table};
use crate::domain::board::{BoardQuery, Name, Needle};

/// [`BoardQuery`]'s filters, ready to judge records with.
#[derive(Debug, Clone)]
pub(crate) struct Filter {
    query: BoardQuery,
    needle: Needle,
    /// Only this tenant (`Some(NONE)` when the table has never seen it).
    tenant: Option<u32>,
    /// Whether the text is found in each name, by dictionary number, as a tenant (first in
    /// the search text) and as a worker or code (after an id); for the names it was built
    /// with (a name added since is judged when met).
    as_tenant: Arc<Vec<bool>>,
    as_other: Arc<Vec<bool>>,
    /// Whether the text can match an id at all (it holds only hex digits, `-` and `.`).
    ids: bool,
}

/// A field as the search text holds it: ended by `\u{1}`, and begun by one unless first.
fn field(text: &str, first: bool, out: &mut Vec<u8>) {
    out.clear();
    if !first {
        out.push(1);
    }
    out.extend(text.to_lowercase().as_bytes());
    out.push(1);
}

impl Filter {
    pub(crate) fn new(query: &BoardQuery, table: &Table) -> Self {
        let needle = query.needle();
        let mut buffer = Vec::new();
        let mut judge = |name: &Name, first: bool| {
            field(name, first, &mut buffer);
            needle.finds(&buffer)
        };
        let (as_tenant, as_other) = if query.text.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            table
                .names()
                .iter()
                .map(|name| (judge(name, true), judge(name, false)))
                .unzip()
        };
        Self {
            tenant: query.tenant.as_ref().map(|t| {
                table
                    .names()
                    .iter()
                    .position(|name| name == t)
                    .map_or(NONE, |n| n as u32)
            }),
            ids: query
                .text
                .to_lowercase()
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == '-' || c == '.'),
            needle,
            as_tenant: Arc::new(as_tenant),
            as_other: Arc::new(as_other),
            query: query.clone(),
        }
    }

    pub(crate) fn query(&self) -> &BoardQuery {
        &self.query
    }

    /// Whether the query filters at all.
    pub(crate) fn filters(&self) -> bool {
        self.query.filters()
    }

    /// The filter's one rule: whether `record` is shown (names read from `table`).
    pub(crate) fn admits(&self, record: &Compact, table: &Table) -> bool {
        if !self.query.quick.admits(record.signals.attention) {
            return false;
        }
        if self.tenant.is_some_and(|t| t != record.tenant) {
            return false;
        }
        if self.query.text.is_empty() {
            return true;
        }
        self.name_found(record.tenant, true, table)
            || self.ids
                && (self.id_found(&record.space)
                    || record.id != record.space && self.id_found(&record.id))
            || [record.worker, record.code]
                .into_iter()
                .any(|n| n != NONE && self.name_found(n, false, table))
    }

    fn name_found(&self, number: u32, first: bool, table: &Table) -> bool {
        let known = if first {
            &self.as_tenant
        } else {
            &self.as_other
        };
        match known.get(number as usize) {
            Some(found) => *found,
            None => table.name(number).is_some_and(|name| {
                let mut buffer = Vec::new();
                field(name, first, &mut buffer);
                self.needle.finds(&buffer)
            }),
        }
    }

    fn id_found(&self, id: &Uuid) -> bool {
        let mut buffer = [1u8; 34];
        id.simple().encode_lower(&mut buffer[1..33]);
        self.needle.finds(&buffer)
    }
}
