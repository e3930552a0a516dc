//! The resident rows as fixed-size records in a persistent array: what a million spaces cost.
//!
//! A [`Compact`] row is 96 bytes by value: ids as they are, timestamps as microseconds,
//! tenant, worker and error code as numbers into a [`Dict`], no message (the board fetches
//! the messages of the rows on screen), no lease (looked up by space when a row is shown) and
//! no worker clocks (kept beside the rows for the few that have them: see [`Clock`]). The slot
//! of an id is found in an [`Index`] of sorted arrays, about 20 bytes a row.
//! Rows live in slots of an `imbl` vector, in chunks that are copied only when written after
//! a snapshot shared them, so publishing the table to the UI after a poll costs nothing per
//! row and a poll that changes a hundred rows copies a hundred chunks at most.
//!
//! [`Table::row`] turns a record back into the [`BoardRow`] the views and the rules read: the
//! same row, field for field, that the poll's columns made.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::index::Index;
use crate::domain::board::{BoardRow, Name, WorkerClock};
use crate::domain::model::{Checkpoint, MutationLease, RunState};
use crate::domain::progress::Sample;
use crate::domain::signals::Signals;

/// Where a row lives in the table.
pub(crate) type Slot = u32;

/// Interned text (tenant, worker, error code) by number; append-only, so a number handed out
/// stays valid in every snapshot. It grows with the distinct names ever seen, not with rows.
#[derive(Debug, Clone, Default)]
pub(crate) struct Dict {
    names: imbl::Vector<Name>,
    numbers: std::collections::HashMap<Name, u32>,
}

/// The dictionary number of "no name".
pub(crate) const NONE: u32 = u32::MAX;

impl Dict {
    pub(crate) fn number(&mut self, name: &Name) -> u32 {
        if let Some(n) = self.numbers.get(name) {
            return *n;
        }
        let n = self.names.len() as u32;
        self.names.push_back(name.clone());
        self.numbers.insert(name.clone(), n);
        n
    }

    pub(crate) fn names(&self) -> &imbl::Vector<Name> {
        &self.names
    }
}

/// One row as stored. `None` timestamps are [`i64::MIN`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Compact {
    pub(crate) id: Uuid,
    pub(crate) space: Uuid,
    pub(crate) updated_at: i64,
    pub(crate) completed_at: i64,
    pub(crate) state_changed_at: i64,
    pub(crate) tenant: u32,
    pub(crate) worker: u32,
    pub(crate) code: u32,
    pub(crate) total: i32,
    pub(crate) completed: i32,
    pub(crate) row_version: i32,
    pub(crate) checkpoint: Checkpoint,
    pub(crate) run_state: RunState,
    /// The row has an error message (fetched when it is on screen).
    pub(crate) has_message: bool,
    pub(crate) signals: Signals,
}

/// The clocks of a row that has a worker or a progress anchor: a few hundred running jobs
/// among a million rows, so they are kept beside the records rather than in each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Clock {
    expires_at: i64,
    heartbeat_at: i64,
    anchor_at: i64,
    anchor_completed: i32,
}

impl Clock {
    const NONE: Clock = Clock {
        expires_at: i64::MIN,
        heartbeat_at: i64::MIN,
        anchor_at: i64::MIN,
        anchor_completed: 0,
    };

    /// The clocks of `row`, if it has any.
    pub(crate) fn of(row: &BoardRow) -> Option<Self> {
        let worker = row.worker.as_ref();
        let clock = Self {
            expires_at: micros_of(worker.map(|w| w.expires_at)),
            heartbeat_at: micros_of(worker.map(|w| w.heartbeat_at)),
            anchor_at: micros_of(row.progress_anchor.map(|s| s.at)),
            // A sample's count is a job's completed documents: an i32 in the ledger.
            anchor_completed: row
                .progress_anchor
                .map_or(0, |s| i32::try_from(s.completed).unwrap_or(i32::MAX)),
        };
        (clock != Self::NONE).then_some(clock)
    }
}

fn micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

fn micros_of(at: Option<DateTime<Utc>>) -> i64 {
    at.map_or(i64::MIN, micros)
}

fn instant(micros: i64) -> Option<DateTime<Utc>> {
    (micros != i64::MIN)
        .then(|| DateTime::from_timestamp_micros(micros))
        .flatten()
}

impl Compact {
    /// The record of `row` (its lease and message are not kept: see the module docs; its
    /// clocks are kept apart: see [`Clock`]).
    pub(crate) fn of(row: &BoardRow, dict: &mut Dict) -> Self {
        let worker = row.worker.as_ref();
        Self {
            id: row.id,
            space: row.space,
            updated_at: micros(row.updated_at),
            completed_at: micros_of(row.completed_at),
            state_changed_at: micros_of(row.state_changed_at),
            tenant: dict.number(&row.tenant),
            worker: worker.map_or(NONE, |w| dict.number(&w.worker_id)),
            code: row.error_code.as_ref().map_or(NONE, |c| dict.number(c)),
            total: row.total,
            completed: row.completed,
            row_version: row.row_version,
            checkpoint: row.checkpoint,
            run_state: row.run_state,
            has_message: row.has_message,
            signals: row.signals,
        }
    }

    /// 0.0–1.0, by [`BoardRow::fraction`]'s rule.
    pub(crate) fn fraction(&self) -> f64 {
        crate::domain::board::fraction(self.completed, self.total)
    }
}

/// The rows by slot, the slot of each id, the clocks of the rows that have them, the names
/// and the leases: everything a row needs to be shown, shared between the model and every
/// snapshot.
#[derive(Debug, Clone, Default)]
pub struct Table {
    slots: imbl::Vector<Option<Compact>>,
    index: Index<Uuid>,
    clocks: imbl::HashMap<Slot, Clock>,
    dict: imbl::Vector<Name>,
    leases: imbl::HashMap<(u32, Uuid), Arc<MutationLease>>,
}

impl Table {
    /// Spaces in the table.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub(crate) fn slot(&self, id: &Uuid) -> Option<Slot> {
        self.index.get(id)
    }

    pub(crate) fn compact(&self, slot: Slot) -> Option<&Compact> {
        self.slots.get(slot as usize).and_then(Option::as_ref)
    }

    /// The row of bootstrap `id`, as the views read it.
    pub fn get(&self, id: &Uuid) -> Option<BoardRow> {
        self.at(self.slot(id)?)
    }

    pub(crate) fn at(&self, slot: Slot) -> Option<BoardRow> {
        self.compact(slot).map(|c| self.row(slot, c))
    }

    /// Every row, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = BoardRow> + '_ {
        self.records().map(|(slot, c)| self.row(slot, c))
    }

    /// The rows of running jobs (a few hundred among a million), without showing the rest.
    pub(crate) fn running(&self) -> impl Iterator<Item = BoardRow> + '_ {
        self.records()
            .filter(|(_, c)| c.run_state == RunState::Running)
            .map(|(slot, c)| self.row(slot, c))
    }

    /// Every record with its slot, in slot order.
    pub(crate) fn records(&self) -> impl Iterator<Item = (Slot, &Compact)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(slot, c)| c.as_ref().map(|c| (slot as Slot, c)))
    }

    /// The slots' range (some vacant).
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn name(&self, number: u32) -> Option<&Name> {
        self.dict.get(number as usize)
    }

    pub(crate) fn names(&self) -> &imbl::Vector<Name> {
        &self.dict
    }

    /// The lease on `space` of the tenant numbered `tenant`.
    pub(crate) fn lease(&self, tenant: u32, space: &Uuid) -> Option<&Arc<MutationLease>> {
        self.leases.get(&(tenant, *space))
    }

    /// The board row of a record.
    pub(crate) fn row(&self, slot: Slot, c: &Compact) -> BoardRow {
        let name = |n: u32| (n != NONE).then(|| self.name(n).cloned()).flatten();
        let clock = self.clocks.get(&slot).unwrap_or(&Clock::NONE);
        let worker = match (
            name(c.worker),
            instant(clock.expires_at),
            instant(clock.heartbeat_at),
        ) {
            (Some(worker_id), Some(expires_at), Some(heartbeat_at)) => Some(WorkerClock {
                worker_id,
                expires_at,
                heartbeat_at,
            }),
            _ => None,
        };
        BoardRow {
            id: c.id,
            tenant: name(c.tenant).unwrap_or_else(|| Arc::from("")),
            space: c.space,
            checkpoint: c.checkpoint,
            run_state: c.run_state,
            total: c.total,
            completed: c.completed,
            worker,
            error_code: name(c.code),
            error_message: None,
            has_message: c.has_message,
            row_version: c.row_version,
            updated_at: instant(c.updated_at).unwrap_or_default(),
            completed_at: instant(c.completed_at),
            lease: self.lease(c.tenant, &c.space).cloned(),
            signals: c.signals,
            progress_anchor: instant(clock.anchor_at).map(|at| Sample {
                at,
                completed: i64::from(clock.anchor_completed),
            }),
            state_changed_at: instant(c.state_changed_at),
        }
    }

    /// Stores `record` and its clocks under its id, in `held` (the slot the id has, which the
    /// caller has looked up already) or a free one; returns the slot.
    pub(crate) fn put(
        &mut self,
        record: Compact,
        clock: Option<Clock>,
        held: Option<Slot>,
        free: &mut Vec<Slot>,
    ) -> Slot {
        debug_assert_eq!(held, self.index.get(&record.id), "the slot the id has");
        let slot = match held {
            Some(slot) => slot,
            None => {
                let slot = free.pop().unwrap_or_else(|| {
                    self.slots.push_back(None);
                    (self.slots.len() - 1) as Slot
                });
                self.index.insert(record.id, slot);
                slot
            }
        };
        self.slots.set(slot as usize, Some(record));
        match clock {
            Some(clock) => self.clocks.insert(slot, clock),
            None => self.clocks.remove(&slot),
        };
        slot
    }

    /// Empties the slot of `id`; returns it for reuse.
    pub(crate) fn take(&mut self, id: &Uuid) -> Option<Slot> {
        let slot = self.index.remove(id)?;
        self.slots.set(slot as usize, None);
        self.clocks.remove(&slot);
        Some(slot)
    }

    pub(crate) fn set_names(&mut self, dict: &Dict) {
        if self.dict.len() != dict.names().len() {
            self.dict = dict.names().clone();
        }
    }

    pub(crate) fn set_lease(&mut self, key: (u32, Uuid), lease: Option<Arc<MutationLease>>) {
        match lease {
            Some(lease) => self.leases.insert(key, lease),
            None => self.leases.remove(&key),
        };
    }

    pub(crate) fn leases(&self) -> impl Iterator<Item = &Arc<MutationLease>> + '_ {
        self.leases.values()
    }

    /// The spaces that hold a lease, as (tenant number, space).
    pub(crate) fn lease_keys(&self) -> impl Iterator<Item = (u32, Uuid)> + '_ {
        self.leases.keys().copied()
    }

    pub(crate) fn clear_leases(&mut self) {
        self.leases = imbl::HashMap::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A million records cost a million of these: the clocks and the message stay out.
    #[test]
    fn a_stored_row_stays_small() {
        let size = std::mem::size_of::<Option<Compact>>();
        assert!(size <= 96, "a stored row takes {size} bytes");
    }
}
