//! How ids are shown: the shortest form no other id in scope shares (see the parent module).

use std::sync::Arc;

use uuid::Uuid;

use super::{MAX_SHOWN_PREFIX, SHOWN_DIGITS, SUFFIX_MARK};

/// The most ids sharing their last digits that a both-ends form tells apart.
const BOTH_ENDS_MOST_ALIKE: usize = 64;

/// How the ids in scope are shown: each by the shortest form no other id in scope shares.
/// Built once per change of the set (sorting it), asked per id in O(log n), so the same id
/// reads the same on every page of a report and every frame of the board.
///
/// The set may come in layers: a large one that seldom changes (the bootstraps) shared as
/// is, and small ones rebuilt often (the leases writers take and release), so a lease coming
/// or going costs a sort of the leases, not of 100,000 bootstraps.
#[derive(Debug, Clone)]
pub struct IdNames {
    layers: Vec<Arc<Layer>>,
    /// The widest form any id in scope is shown with.
    widest: usize,
}

/// One layer of ids, sorted both ways.
#[derive(Debug, Default)]
struct Layer {
    /// The ids, sorted.
    forward: Vec<u128>,
    /// The ids in the order of their hex digits reversed, as places in `forward`: suffixes
    /// are prefixes in this order. A place is 4 bytes where the reversed id would be 16 (at a
    /// million spaces and their bootstraps, 24 MB less).
    backward: Vec<u32>,
}

impl Layer {
    fn new(ids: impl IntoIterator<Item = Uuid>) -> Self {
        let mut forward: Vec<u128> = ids.into_iter().map(|id| id.as_u128()).collect();
        forward.sort_unstable();
        forward.dedup();
        let backward = {
            // Sorted with the reversed ids at hand, which a comparison would otherwise redo.
            let mut keyed: Vec<(u128, u32)> = forward
                .iter()
                .enumerate()
                .map(|(place, id)| (reverse_digits(*id), place as u32))
                .collect();
            keyed.sort_unstable();
            keyed.into_iter().map(|(_, place)| place).collect()
        };
        Self { forward, backward }
    }

    /// The ids sorted as they are.
    fn forward(&self) -> Sorted<'_> {
        Sorted::Forward(&self.forward)
    }

    /// The ids reversed, sorted.
    fn backward(&self) -> Sorted<'_> {
        Sorted::Backward(self)
    }

    /// The ids sharing `id`'s last [`SHOWN_DIGITS`] digits (a few dozen at most are looked at:
    /// past that, no both-ends form is shown).
    fn alike_at_end(&self, id: u128) -> impl Iterator<Item = u128> + '_ {
        let reversed = reverse_digits(id);
        let high = u128::MAX << (128 - 4 * SHOWN_DIGITS);
        let backward = self.backward();
        let from = backward.partition_point(|r| r < (reversed & high));
        (from..backward.len())
            .map(move |i| backward.at(i))
            .take_while(move |r| *r & high == reversed & high)
            .take(BOTH_ENDS_MOST_ALIKE + 1)
            .map(reverse_digits)
    }

    /// The ids next to `id` in either order: the only ones whose forms `id` can lengthen.
    fn neighbours(&self, id: u128) -> impl Iterator<Item = u128> + '_ {
        let around = |sorted: Sorted<'_>, key: u128| {
            let at = sorted.partition_point(|other| other < key);
            [at.checked_sub(1), Some(at), Some(at + 1)]
                .into_iter()
                .flatten()
                .filter(|i| *i < sorted.len())
                .map(|i| sorted.at(i))
                .collect::<Vec<_>>()
        };
        let forward = around(self.forward(), id);
        let backward = around(self.backward(), reverse_digits(id));
        forward
            .into_iter()
            .chain(backward.into_iter().map(reverse_digits))
    }
}

/// One of a layer's two orders, read as sorted 128-bit keys.
#[derive(Clone, Copy)]
enum Sorted<'a> {
    Forward(&'a [u128]),
    /// The layer's ids with their digits reversed.
    Backward(&'a Layer),
}

impl Sorted<'_> {
    fn len(self) -> usize {
        match self {
            Self::Forward(ids) => ids.len(),
            Self::Backward(layer) => layer.backward.len(),
        }
    }

    fn at(self, i: usize) -> u128 {
        match self {
            Self::Forward(ids) => ids[i],
            Self::Backward(layer) => reverse_digits(layer.forward[layer.backward[i] as usize]),
        }
    }

    /// The first place whose key fails `before` (the keys that pass it come first).
    fn partition_point(self, before: impl Fn(u128) -> bool) -> usize {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = low + (high - low) / 2;
            if before(self.at(middle)) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low
    }
}

impl Default for IdNames {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl PartialEq for IdNames {
    fn eq(&self, other: &Self) -> bool {
        self.layers.len() == other.layers.len()
            && self
                .layers
                .iter()
                .zip(&other.layers)
                .all(|(a, b)| a.forward == b.forward)
    }
}

impl Eq for IdNames {}

impl IdNames {
    /// No ids in scope: every id is shown by its first [`SHOWN_DIGITS`] digits.
    pub const EMPTY: Self = Self {
        layers: Vec::new(),
        widest: SHOWN_DIGITS,
    };

    pub fn new(ids: impl IntoIterator<Item = Uuid>) -> Self {
        let layer = Arc::new(Layer::new(ids));
        let mut names = Self {
            layers: vec![layer.clone()],
            widest: SHOWN_DIGITS,
        };
        // In one pass over the sorted ids, each prefix needs one digit more than it shares
        // with the closer neighbour; only ids past 12 digits are looked at again (their
        // suffixes) — a 100,000-id scope is named in a few milliseconds.
        let sorted = &layer.forward;
        let shared_with_next: Vec<usize> = sorted
            .windows(2)
            .map(|pair| shared_digits(pair[0], pair[1]))
            .collect();
        let mut widest = SHOWN_DIGITS;
        let mut long = Vec::new();
        for (i, id) in sorted.iter().enumerate() {
            let before = i.checked_sub(1).map_or(0, |j| shared_with_next[j]);
            let after = shared_with_next.get(i).copied().unwrap_or(0);
            match before.max(after) + 1 {
                need if need <= MAX_SHOWN_PREFIX => widest = widest.max(need),
                _ => long.push(*id),
            }
        }
        names.widest = widest.max(names.widest_of(long));
        names
    }

    /// These names and `ids` besides, sharing (not copying) the layers already built.
    pub fn with(&self, ids: impl IntoIterator<Item = Uuid>) -> Self {
        let layer = Arc::new(Layer::new(ids));
        let mut names = Self {
            layers: self.layers.iter().cloned().chain([layer.clone()]).collect(),
            widest: self.widest,
        };
        // The new ids, and the old ones they sit next to (whose forms they may lengthen) or
        // share their last digits with (whose first digits a both-ends form may need more of).
        let touched: Vec<u128> = layer
            .forward
            .iter()
            .flat_map(|id| {
                self.layers
                    .iter()
                    .flat_map(|old| {
                        let mut near = old.neighbours(*id).collect::<Vec<_>>();
                        near.extend(old.alike_at_end(*id));
                        near
                    })
                    .chain([*id])
            })
            .collect();
        names.widest = names.widest.max(names.widest_of(touched));
        names
    }

    fn widest_of(&self, ids: impl IntoIterator<Item = u128>) -> usize {
        ids.into_iter()
            .map(|id| self.form(id).width())
            .max()
            .unwrap_or(SHOWN_DIGITS)
            .max(SHOWN_DIGITS)
    }

    /// `id` as shown: unique among the ids in scope (an id outside the scope gets the form
    /// that tells it from all of them).
    pub fn short(&self, id: &Uuid) -> String {
        self.form(id.as_u128()).to_string()
    }

    /// `id` with its shown form.
    pub fn shown(&self, id: &Uuid) -> ShownId {
        ShownId {
            id: *id,
            text: self.short(id),
        }
    }

    /// A width that holds the form of every id in scope: exactly the widest for names built
    /// at once; after [`Self::with`] at most a suffix mark wider (an added id may shorten an
    /// old id's form, from a long prefix to a suffix, which is not looked for).
    pub(crate) fn widest(&self) -> usize {
        self.widest
    }

    fn form(&self, id: u128) -> Form {
        let digits = |sorted: fn(&Layer) -> Sorted<'_>, key: u128| {
            self.layers
                .iter()
                .map(|layer| distinguishing_digits(sorted(layer), key))
                .max()
                .unwrap_or(SHOWN_DIGITS)
        };
        let prefix = digits(Layer::forward, id);
        if prefix <= MAX_SHOWN_PREFIX {
            return Form::Prefix(id, prefix);
        }
        let suffix = digits(Layer::backward, reverse_digits(id));
        if suffix <= MAX_SHOWN_PREFIX {
            return Form::Suffix(id, suffix);
        }
        if let Some(both) = self.both_ends(id) {
            return both;
        }
        if suffix + SUFFIX_MARK.len() < prefix {
            Form::Suffix(id, suffix)
        } else {
            Form::Prefix(id, prefix)
        }
    }

    /// For an id alike at both ends with others (a sequence number under a constant, such as
    /// spaces and leases minted from the same counter): its first digits and its last
    /// [`SHOWN_DIGITS`], `4..00000239`, when that fits [`MAX_SHOWN_WIDTH`]. Only the ids that
    /// share those last digits can share the first ones too; past a few dozen of them, none.
    fn both_ends(&self, id: u128) -> Option<Form> {
        let tail = SHOWN_DIGITS;
        let mut lead = 0;
        for layer in &self.layers {
            let alike: Vec<u128> = layer.alike_at_end(id).collect();
            if alike.len() > BOTH_ENDS_MOST_ALIKE {
                return None;
            }
            for other in alike {
                if other != id {
                    lead = lead.max(shared_digits(id, other) + 1);
                }
            }
        }
        let lead = lead.max(1);
        (lead + SUFFIX_MARK.len() + tail <= super::MAX_SHOWN_WIDTH)
            .then_some(Form::Both(id, lead, tail))
    }
}

/// An id and the form it is shown in, for sentences made before they are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownId {
    pub id: Uuid,
    pub text: String,
}

impl std::fmt::Display for ShownId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// A shown form: the id and how many leading or trailing digits tell it apart.
#[derive(Debug, Clone, Copy)]
enum Form {
    Prefix(u128, usize),
    Suffix(u128, usize),
    /// Leading and trailing digits, `4..00000239`.
    Both(u128, usize, usize),
}

impl Form {
    fn width(self) -> usize {
        match self {
            Self::Prefix(_, n) => n,
            Self::Suffix(_, n) => SUFFIX_MARK.len() + n,
            Self::Both(_, lead, tail) => lead + SUFFIX_MARK.len() + tail,
        }
    }
}

impl std::fmt::Display for Form {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::Prefix(id, n) => f.write_str(&format!("{id:032x}")[..n]),
            Self::Suffix(id, n) => write!(f, "{SUFFIX_MARK}{}", &format!("{id:032x}")[32 - n..]),
            Self::Both(id, lead, tail) => {
                let hex = format!("{id:032x}");
                write!(f, "{}{SUFFIX_MARK}{}", &hex[..lead], &hex[32 - tail..])
            }
        }
    }
}

/// How many leading hex digits tell `id` from its neighbours in `sorted` (itself excepted):
/// one more than it shares with the closer of them, at least [`SHOWN_DIGITS`].
fn distinguishing_digits(sorted: Sorted<'_>, id: u128) -> usize {
    let at = sorted.partition_point(|other| other < id);
    let before = at.checked_sub(1).map(|i| sorted.at(i));
    let after = (at..sorted.len())
        .map(|i| sorted.at(i))
        .find(|other| *other != id);
    let shared = [before, after]
        .into_iter()
        .flatten()
        .map(|other| shared_digits(id, other))
        .max()
        .unwrap_or(0);
    (shared + 1).clamp(SHOWN_DIGITS, 32)
}

/// How many leading hex digits two ids have in common.
fn shared_digits(a: u128, b: u128) -> usize {
    ((a ^ b).leading_zeros() / 4) as usize
}

/// The id with its 32 hex digits in reverse order.
fn reverse_digits(id: u128) -> u128 {
    // Bytes reversed, then the two digits of each byte swapped.
    const LOW: u128 = 0x0f0f_0f0f_0f0f_0f0f_0f0f_0f0f_0f0f_0f0f;
    let bytes = id.swap_bytes();
    ((bytes & LOW) << 4) | ((bytes >> 4) & LOW)
}

#[cfg(test)]
mod tests {
    use super::super::same_id_form;
    use super::*;

    fn ids(texts: &[&str]) -> Vec<Uuid> {
        texts
            .iter()
            .map(|t| Uuid::parse_str(t).expect("uuid"))
            .collect()
    }

    #[test]
    fn ids_that_differ_early_are_shown_by_eight_digits() {
        let set = ids(&[
            "3f2a9c10-0000-4000-8000-000000000001",
            "a0b1c2d3-0000-4000-8000-000000000002",
        ]);
        let names = IdNames::new(set.clone());
        assert_eq!(names.short(&set[0]), "3f2a9c10");
        assert_eq!(names.short(&set[1]), "a0b1c2d3");
        assert_eq!(names.widest(), 8);
    }

    #[test]
    fn a_shared_prefix_lengthens_only_the_ids_that_share_it() {
        let set = ids(&[
            "019e7044-5a10-7000-8000-0000000000aa",
            "019e7044-5a1f-7000-8000-0000000000bb",
            "019e7045-0000-7000-8000-0000000000cc",
            "b0000000-0000-4000-8000-000000000000",
        ]);
        let names = IdNames::new(set.clone());
        assert_eq!(names.short(&set[0]), "019e70445a10");
        assert_eq!(names.short(&set[1]), "019e70445a1f");
        assert_eq!(names.short(&set[2]), "019e7045");
        assert_eq!(names.short(&set[3]), "b0000000");
        assert_eq!(names.widest(), 12);
        // Every form names exactly one id of the set.
        for id in &set {
            let shown = names.short(id);
            let named: Vec<_> = set
                .iter()
                .filter(|other| other.simple().to_string().starts_with(&shown))
                .collect();
            assert_eq!(named, vec![id], "{shown}");
        }
    }

    #[test]
    fn ids_sharing_more_than_twelve_digits_are_shown_by_a_marked_suffix() {
        // Minted from a sequence: they share 31 digits.
        let set = ids(&[
            "00000000-0000-0000-0000-000000000001",
            "00000000-0000-0000-0000-000000000002",
            "00000000-0000-0000-0000-000000000011",
        ]);
        let names = IdNames::new(set.clone());
        assert_eq!(names.short(&set[0]), "..00000001");
        assert_eq!(names.short(&set[1]), "..00000002");
        assert_eq!(names.short(&set[2]), "..00000011");
        assert_eq!(names.widest(), 10);
        // Minted in the same millisecond (UUIDv7): the random tail tells them apart.
        let v7 = ids(&[
            "019e7044-5a10-7abc-8000-00000000a001",
            "019e7044-5a10-7abd-9000-00000000b002",
        ]);
        let names = IdNames::new(v7.clone());
        let shown = names.short(&v7[0]);
        assert_eq!(shown, "..0000a001");
        assert!(same_id_form("..0000A001", &shown));
        assert!(same_id_form(" 0000a001 ", &shown));
        assert!(!same_id_form("..0000b002", &shown));
        assert!(!same_id_form("019e7044", &shown));
    }

    #[test]
    fn ids_outside_the_scope_are_told_from_every_id_in_it() {
        let set = ids(&["019e7044-5a10-7000-8000-0000000000aa"]);
        let names = IdNames::new(set.clone());
        let outsider = ids(&["019e7044-5a1f-7000-8000-0000000000bb"])[0];
        assert_eq!(names.short(&outsider), "019e70445a1f");
        assert_eq!(names.short(&set[0]), "019e7044", "alone in its scope");
        assert_eq!(IdNames::default().short(&set[0]), "019e7044");
    }

    #[test]
    fn ids_alike_at_both_ends_keep_the_shorter_telling_form() {
        let set = ids(&[
            "aaaaaaaa-aaaa-aaa0-aaaa-aaaaaaaaaaaa",
            "aaaaaaaa-aaaa-aaa1-aaaa-aaaaaaaaaaaa",
        ]);
        let names = IdNames::new(set.clone());
        // 16 leading digits against 17 trailing ones: the prefix form.
        assert_eq!(names.short(&set[0]), "aaaaaaaaaaaaaaa0");
        assert_eq!(names.short(&set[1]), "aaaaaaaaaaaaaaa1");
        let set = ids(&[
            "aaaaaaaa-aaaa-aaaa-aaa0-aaaaaaaaaaaa",
            "aaaaaaaa-aaaa-aaaa-aaa1-aaaaaaaaaaaa",
        ]);
        let names = IdNames::new(set.clone());
        // 20 leading digits against 13 trailing ones: the suffix form.
        assert_eq!(names.short(&set[0]), "..0aaaaaaaaaaaa");
    }

    #[test]
    fn ids_alike_at_both_ends_with_others_show_their_first_and_last_digits() {
        // Spaces and leases minted from one counter: a space and its lease differ only in
        // their first digit, spaces only in their last ones.
        let spaces: Vec<Uuid> = (1..=300u128)
            .map(|n| Uuid::from_u128(0x0000_0000_0000_4000_8000_0000_0000_0000 | n))
            .collect();
        let leases: Vec<Uuid> = (1..=3u128)
            .map(|n| Uuid::from_u128(0x4000_0000_0000_4000_8000_0000_0000_0000 | n))
            .collect();
        let names = IdNames::new(spaces.iter().copied()).with(leases.iter().copied());
        assert_eq!(names.short(&spaces[0]), "0..00000001");
        assert_eq!(names.short(&leases[0]), "4..00000001");
        assert_eq!(
            names.short(&spaces[4]),
            "..00000005",
            "no lease shares its end"
        );
        assert!(names.widest() <= super::super::MAX_SHOWN_WIDTH);
        // Each form names exactly one id, and reads back as one.
        let all: Vec<Uuid> = spaces.iter().chain(&leases).copied().collect();
        for id in &all {
            let shown = names.short(id);
            let parsed = super::super::parse_id_arg(&shown).expect("typeable");
            let named: Vec<_> = all.iter().filter(|other| parsed.names(other)).collect();
            assert_eq!(named, vec![id], "{shown}");
        }
    }

    #[test]
    fn an_added_id_lengthens_the_both_ends_forms_it_shares_an_end_with() {
        // Spaces `0..N` and leases `40..N` minted from one counter, then leases `41..N`: the
        // old `4..N` forms must grow to `40..N`, as if all had been named at once.
        let minted = |lead: u128, n: u128| {
            Uuid::from_u128((lead << 120) | 0x0000_0000_0000_4000_8000_0000_0000_0000 | n)
        };
        let old: Vec<Uuid> = (1..=2)
            .flat_map(|n| [minted(0x00, n), minted(0x40, n)])
            .collect();
        let added: Vec<Uuid> = (1..=2).map(|n| minted(0x41, n)).collect();
        let before = IdNames::new(old.iter().copied());
        assert_eq!(before.short(&old[1]), "4..00000001");
        let layered = before.with(added.iter().copied());
        let whole = IdNames::new(old.iter().chain(&added).copied());
        for id in old.iter().chain(&added) {
            assert_eq!(layered.short(id), whole.short(id), "{id}");
            assert!(layered.short(id).len() <= layered.widest(), "{id}");
        }
        assert_eq!(layered.short(&old[1]), "40..00000001");
    }

    #[test]
    fn layers_add_up_to_the_whole_set() {
        // Random ids, some sharing long prefixes or suffixes, split into two layers: every
        // form and the widest are those of one set holding them all.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut all = Vec::new();
        for i in 0..400u64 {
            let high = u128::from(next() & 0xfff0_0000_0000_0000) << 64;
            let low = u128::from(if i % 3 == 0 { next() & 0xfff } else { next() });
            all.push(Uuid::from_u128(high | low));
        }
        let (big, small) = all.split_at(350);
        let whole = IdNames::new(all.iter().copied());
        let layered = IdNames::new(big.iter().copied()).with(small.iter().copied());
        for id in &all {
            assert_eq!(layered.short(id), whole.short(id), "{id}");
            assert!(layered.short(id).len() <= layered.widest(), "{id}");
        }
        assert!(layered.widest() >= whole.widest());
        assert!(layered.widest() <= whole.widest() + SUFFIX_MARK.len());
        assert!(whole.widest() > SHOWN_DIGITS, "the ids share long prefixes");
    }

    #[test]
    fn digits_reverse_exactly() {
        let id = 0x0123_4567_89ab_cdef_0011_2233_4455_6677u128;
        assert_eq!(
            reverse_digits(id),
            0x7766_5544_3322_1100_fedc_ba98_7654_3210u128
        );
        assert_eq!(reverse_digits(reverse_digits(id)), id);
    }
}
