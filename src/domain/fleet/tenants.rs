//! One line per tenant: how a 100,000-space rollout is navigated. Each tenant's tally is kept
//! up to date as its rows change; the list is re-sorted only when a tally changed.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::board::{self, BoardRow, Name};
use crate::domain::signals::{Attention, Group, Thresholds};

/// One tenant's part of the rollout.
#[derive(Debug, Clone, PartialEq)]
pub struct TenantRow {
    pub tenant: Name,
    pub spaces: u32,
    /// Indexed like [`Attention::ALL`].
    pub by_attention: [u32; Attention::COUNT],
    pub readable: u32,
    /// Documents still to rebuild in its captured spaces.
    pub documents_remaining: i64,
    /// Its space needing an operator that has been in that state longest: the class, and
    /// since when (database clock).
    pub oldest: Option<(Attention, DateTime<Utc>)>,
}

impl TenantRow {
    pub(crate) fn count(&self, attention: Attention) -> u32 {
        self.by_attention[attention.index()]
    }

    pub(crate) fn in_group(&self, group: Group) -> u32 {
        board::in_group(&self.by_attention, group)
    }

    pub(crate) fn readable_share(&self) -> f64 {
        board::readable_share(self.readable, self.spaces)
    }

    /// The most urgent class among its spaces that need an operator or are watched.
    pub fn worst(&self) -> Option<Attention> {
        Attention::ALL.into_iter().find(|a| {
            matches!(a.group(), Group::NeedsOperator | Group::Watch) && self.count(*a) > 0
        })
    }
}

/// Attention first: the worst class, then the most spaces in it, then the most needing
/// attention, then the longest in trouble, then the name.
fn attention_first(row: &TenantRow) -> impl Ord + '_ {
    let worst = row.worst();
    (
        worst.map_or(Attention::ALL.len(), Attention::index),
        Reverse(worst.map_or(0, |w| row.count(w))),
        Reverse(row.in_group(Group::NeedsOperator)),
        row.oldest.map(|(_, since)| since),
        &row.tenant,
    )
}

#[derive(Debug, Clone)]
struct Tally {
    row: TenantRow,
    /// Its attention-needing rows by the instant they entered their state.
    troubled: BTreeMap<(DateTime<Utc>, Uuid), Attention>,
}

/// Every tenant's tally.
#[derive(Debug, Default)]
pub(crate) struct Tenants {
    tallies: HashMap<Name, Tally>,
    sorted: Arc<Vec<TenantRow>>,
    dirty: bool,
}

impl Tenants {
    /// Counts a row in (`add`) or out of its tenant's tally.
    pub(crate) fn count_row(&mut self, row: &BoardRow, add: bool, thresholds: &Thresholds) {
        self.dirty = true;
        let tally = self
            .tallies
            .entry(row.tenant.clone())
            .or_insert_with(|| Tally {
                row: TenantRow {
                    tenant: row.tenant.clone(),
                    spaces: 0,
                    by_attention: [0; Attention::COUNT],
                    readable: 0,
                    documents_remaining: 0,
                    oldest: None,
                },
                troubled: BTreeMap::new(),
            });
        let step = |n: &mut u32| {
            if add {
                *n += 1
            } else {
                *n = n.saturating_sub(1)
            }
        };
        let t = &mut tally.row;
        step(&mut t.spaces);
        step(&mut t.by_attention[row.signals.attention.index()]);
        if row.signals.readable {
            step(&mut t.readable);
        } else if row.checkpoint.index() > 0 {
            let remaining = i64::from(row.total - row.completed);
            t.documents_remaining += if add { remaining } else { -remaining };
        }
        let attention = row.signals.attention;
        if attention.needs_operator()
            && let Some(since) = row.attention_since(thresholds)
        {
            if add {
                tally.troubled.insert((since, row.id), attention);
            } else {
                tally.troubled.remove(&(since, row.id));
            }
        }
        tally.row.oldest = tally
            .troubled
            .first_key_value()
            .map(|((since, _), attention)| (*attention, *since));
        if tally.row.spaces == 0 {
            self.tallies.remove(&row.tenant);
        }
    }

    /// Every tenant, attention first (re-sorted only when something changed).
    pub(crate) fn rows(&mut self) -> Arc<Vec<TenantRow>> {
        if self.dirty {
            let mut rows: Vec<TenantRow> = self.tallies.values().map(|t| t.row.clone()).collect();
            rows.sort_by(|a, b| attention_first(a).cmp(&attention_first(b)));
            self.sorted = Arc::new(rows);
            self.dirty = false;
        }
        self.sorted.clone()
    }
}
