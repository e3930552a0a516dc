//! What the sync knows of each row between polls: its version and the page it was last read
//! on. One array sorted by id, 24 bytes a row, in place of a map by id plus an index by page
//! (about 100 bytes a row): at a million spaces this is the sync's whole resident cost.
//!
//! Lookups are binary searches. New rows and deletions are merged in one pass at the end of
//! the poll that learned them (they are rare once a rollout has started); the rows a slice
//! expects on its pages are found by one scan, a few milliseconds at a million rows.

use uuid::Uuid;

use crate::store::fleet::Version;

/// A row's version and page. Both fit 32 bits: the version is `xmin` and a page is a block
/// number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    id: Uuid,
    version: u32,
    page: u32,
}

impl Entry {
    fn of((id, version, page): Version) -> Self {
        Entry {
            id,
            version: narrow(version),
            page: narrow(page),
        }
    }
}

/// The 32 bits a version or a page is made of (both come from the database as `bigint`).
pub(super) fn narrow(value: i64) -> u32 {
    value as u32
}

#[derive(Debug, Default)]
pub(super) struct Seen {
    /// Sorted by id, one entry per id.
    entries: Vec<Entry>,
}

impl Seen {
    /// The copy after a full load.
    pub(super) fn loaded(read: impl Iterator<Item = Version>) -> Self {
        let mut seen = Seen::default();
        seen.learn(read.collect(), &[]);
        seen.entries.shrink_to_fit();
        seen
    }

    fn find(&self, id: &Uuid) -> Result<usize, usize> {
        self.entries.binary_search_by(|e| e.id.cmp(id))
    }

    /// The version the copy holds for `id`.
    pub(super) fn version(&self, id: &Uuid) -> Option<u32> {
        self.find(id).ok().map(|i| self.entries[i].version)
    }

    /// The ids last read on pages `[from, to)` (`to = None`: to the end).
    pub(super) fn on_pages(&self, from: i64, to: Option<i64>) -> impl Iterator<Item = Uuid> + '_ {
        let from = from.clamp(0, u32::MAX as i64) as u32;
        let to = to.map_or(u32::MAX as u64 + 1, |to| {
            to.clamp(0, u32::MAX as i64) as u64
        });
        self.entries
            .iter()
            .filter(move |e| e.page >= from && (e.page as u64) < to)
            .map(|e| e.id)
    }

    /// Takes in what a poll read (a later read of the same id wins), then drops `gone`.
    pub(super) fn learn(&mut self, read: Vec<Version>, gone: &[Uuid]) {
        let mut added = Vec::new();
        for version in read {
            let entry = Entry::of(version);
            match self.find(&entry.id) {
                Ok(i) => self.entries[i] = entry,
                Err(_) => added.push(entry),
            }
        }
        if !added.is_empty() {
            // Latest first, so that the stable sort and dedup keep the latest of each id.
            added.reverse();
            added.sort_by_key(|e| e.id);
            added.dedup_by_key(|e| e.id);
            self.entries = merge(std::mem::take(&mut self.entries), added);
        }
        let before = self.entries.len();
        let mut doomed: Vec<usize> = gone.iter().filter_map(|id| self.find(id).ok()).collect();
        if doomed.is_empty() {
            return;
        }
        doomed.sort_unstable();
        let mut doomed = doomed.into_iter().peekable();
        let mut index = 0;
        self.entries.retain(|_| {
            let keep = doomed.peek() != Some(&index);
            if !keep {
                doomed.next();
            }
            index += 1;
            keep
        });
        debug_assert!(self.entries.len() < before);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// Two id-sorted arrays with no id in common, as one.
fn merge(old: Vec<Entry>, added: Vec<Entry>) -> Vec<Entry> {
    let mut out = Vec::with_capacity(old.len() + added.len());
    let mut old = old.into_iter().peekable();
    let mut added = added.into_iter().peekable();
    loop {
        let next = match (old.peek(), added.peek()) {
            (Some(a), Some(b)) if a.id < b.id => old.next(),
            (Some(_), Some(_)) => added.next(),
            (Some(_), None) => old.next(),
            (None, Some(_)) => added.next(),
            (None, None) => break,
        };
        out.extend(next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    #[test]
    fn a_read_replaces_the_version_and_page_and_a_later_read_of_the_same_id_wins() {
        let mut seen = Seen::loaded([(id(3), 1, 0), (id(1), 1, 0)].into_iter());
        seen.learn(vec![(id(1), 2, 5), (id(2), 7, 1), (id(2), 8, 2)], &[]);
        assert_eq!(seen.version(&id(1)), Some(2));
        assert_eq!(seen.version(&id(2)), Some(8));
        assert_eq!(seen.version(&id(3)), Some(1));
        assert_eq!(seen.version(&id(4)), None);
        let on: Vec<Uuid> = seen.on_pages(1, Some(5)).collect();
        assert_eq!(on, [id(2)]);
        let on: Vec<Uuid> = seen.on_pages(2, None).collect();
        assert_eq!(on, [id(1), id(2)]);
    }

    #[test]
    fn gone_rows_are_dropped_even_when_read_in_the_same_poll() {
        let mut seen = Seen::loaded((1..=5).map(|n| (id(n), 1, n as i64)));
        seen.learn(vec![(id(9), 1, 9)], &[id(2), id(9), id(4), id(42)]);
        assert_eq!(seen.len(), 3);
        for (n, present) in [
            (1, true),
            (2, false),
            (3, true),
            (4, false),
            (5, true),
            (9, false),
        ] {
            assert_eq!(seen.version(&id(n)).is_some(), present, "id {n}");
        }
    }

    #[test]
    fn versions_and_pages_keep_their_32_bits() {
        let seen = Seen::loaded([(id(1), u32::MAX as i64, u32::MAX as i64 - 1)].into_iter());
        assert_eq!(seen.version(&id(1)), Some(u32::MAX));
        assert_eq!(seen.on_pages(u32::MAX as i64 - 1, None).count(), 1);
        assert_eq!(seen.on_pages(0, Some(u32::MAX as i64 - 1)).count(), 0);
    }
}
