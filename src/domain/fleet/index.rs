//! A map from a key to a slot that costs its keys and slots and little more: what finding a
//! row by id or by space costs at a million rows.
//!
//! The bulk of the entries sit in two sorted arrays (keys, slots) shared by `Arc`, so a
//! snapshot shares them for nothing; entries changed since are kept in a small persistent
//! map beside them (a removed entry as a tombstone) and merged into new arrays once that map
//! outgrows a sixteenth of the arrays. A first load therefore merges a few dozen times, moving
//! each entry about sixteen times in all, and a steady rollout, whose rows seldom come or go,
//! almost never. A hash map of the same entries costs 50–110 bytes a row; this, 20–24.

use std::sync::Arc;

use super::table::Slot;

/// The changes kept beside the arrays before a merge, at the least.
const OVERLAY_MIN: usize = 4096;

/// Key → slot, one slot a key.
#[derive(Debug, Clone)]
pub(crate) struct Index<K: Ord + Clone> {
    keys: Arc<Vec<K>>,
    slots: Arc<Vec<Slot>>,
    /// Entries changed since the arrays were built; `None` hides an entry of the arrays.
    recent: imbl::OrdMap<K, Option<Slot>>,
    len: usize,
}

impl<K: Ord + Clone> Default for Index<K> {
    fn default() -> Self {
        Self {
            keys: Arc::default(),
            slots: Arc::default(),
            recent: imbl::OrdMap::new(),
            len: 0,
        }
    }
}

impl<K: Ord + Clone> Index<K> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn get(&self, key: &K) -> Option<Slot> {
        match self.recent.get(key) {
            Some(slot) => *slot,
            None => self.settled(key),
        }
    }

    /// The slot the arrays hold for `key`.
    fn settled(&self, key: &K) -> Option<Slot> {
        let at = self.keys.binary_search(key).ok()?;
        Some(self.slots[at])
    }

    /// Maps `key` to `slot`; returns the slot it had.
    pub(crate) fn insert(&mut self, key: K, slot: Slot) -> Option<Slot> {
        // One search of the arrays a change: at a million rows each is a walk through memory
        // that no cache holds, and a first load makes two million of them.
        let settled = self.settled(&key);
        let old = self.recent.get(&key).copied().unwrap_or(settled);
        if old == Some(slot) {
            return old;
        }
        self.len += usize::from(old.is_none());
        if settled == Some(slot) {
            self.recent.remove(&key);
        } else {
            self.recent.insert(key, Some(slot));
        }
        self.merge_if_due();
        old
    }

    /// Unmaps `key`; returns the slot it had.
    pub(crate) fn remove(&mut self, key: &K) -> Option<Slot> {
        let settled = self.settled(key);
        let old = self.recent.get(key).copied().unwrap_or(settled)?;
        self.len -= 1;
        if settled.is_some() {
            self.recent.insert(key.clone(), None);
        } else {
            self.recent.remove(key);
        }
        self.merge_if_due();
        Some(old)
    }

    fn merge_if_due(&mut self) {
        if self.recent.len() > OVERLAY_MIN.max(self.keys.len() / 16) {
            self.merge();
        }
    }

    /// New arrays of the old ones with the recent changes, both read in key order.
    fn merge(&mut self) {
        let recent = std::mem::take(&mut self.recent);
        let mut keys = Vec::with_capacity(self.len);
        let mut slots = Vec::with_capacity(self.len);
        let mut changed = recent.into_iter().peekable();
        for (key, slot) in self.keys.iter().zip(self.slots.iter()) {
            while let Some((k, new)) = changed.next_if(|(k, _)| k < key) {
                if let Some(new) = new {
                    keys.push(k);
                    slots.push(new);
                }
            }
            match changed.next_if(|(k, _)| k == key) {
                Some((_, Some(new))) => {
                    keys.push(key.clone());
                    slots.push(new);
                }
                Some((_, None)) => {}
                None => {
                    keys.push(key.clone());
                    slots.push(*slot);
                }
            }
        }
        for (key, new) in changed {
            if let Some(new) = new {
                keys.push(key);
                slots.push(new);
            }
        }
        debug_assert_eq!(keys.len(), self.len);
        self.keys = Arc::new(keys);
        self.slots = Arc::new(slots);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// A long random walk of inserts, moves and removes agrees with a `BTreeMap` at every
    /// step, across many merges, and a clone taken midway keeps what it saw.
    #[test]
    fn agrees_with_a_map_across_merges() {
        let mut index: Index<u32> = Index::default();
        let mut model: BTreeMap<u32, Slot> = BTreeMap::new();
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut kept = None;
        for step in 0..60_000u32 {
            let r = next();
            let key = (r % 20_000) as u32;
            match r >> 60 {
                0..=9 => {
                    let slot = (r >> 20) as u32 % 1_000;
                    assert_eq!(index.insert(key, slot), model.insert(key, slot));
                }
                _ => assert_eq!(index.remove(&key), model.remove(&key)),
            }
            assert_eq!(index.get(&key), model.get(&key).copied());
            assert_eq!(index.len(), model.len());
            if step == 30_000 {
                kept = Some((index.clone(), model.clone()));
            }
        }
        for key in 0..20_000 {
            assert_eq!(index.get(&key), model.get(&key).copied(), "key {key}");
        }
        let (old, old_model) = kept.expect("kept");
        for key in 0..20_000 {
            assert_eq!(old.get(&key), old_model.get(&key).copied(), "old key {key}");
        }
        assert!(index.keys.len() > OVERLAY_MIN, "the walk merged");
    }
}
