//! The board's vocabulary: one compact row per bootstrap, the rollout summary, the orderings
//! and filters an operator picks, and the ordered view the model publishes.
//!
//! A [`BoardRow`] holds what the board shows and nothing wider (no snapshot metadata, no
//! fingerprints, messages clipped): 100,000 of them must fit comfortably in memory. Rows are
//! immutable and shared through `Arc` between the model and every published view; a change
//! makes a new row.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::model::{Checkpoint, MutationLease, RunState};
use super::progress::Sample;
use super::signals::{self, Attention, Facts, Group, Signals, Thresholds};

/// Text many rows share (tenant names, worker ids, error codes), stored once.
pub(crate) type Name = Arc<str>;

/// The worker lease of a running job, as the board needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerClock {
    pub worker_id: Name,
    pub expires_at: DateTime<Utc>,
    pub heartbeat_at: DateTime<Utc>,
}

/// One space on the board.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardRow {
    pub id: Uuid,
    pub tenant: Name,
    pub space: Uuid,
    pub checkpoint: Checkpoint,
    pub run_state: RunState,
    pub total: i32,
    pub completed: i32,
    pub worker: Option<WorkerClock>,
    pub error_code: Option<Name>,
    /// The start of the last error message, where it was read with the row (the board
    /// fetches the messages of the rows on screen; the detail view reads it whole).
    pub error_message: Option<Box<str>>,
    /// The row has an error message, read with it or not.
    pub has_message: bool,
    pub row_version: i32,
    pub updated_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    /// The mutation lease on the space, if any.
    pub lease: Option<Arc<MutationLease>>,
    pub signals: Signals,
    /// The oldest progress sample inside the rate window when the job last changed (running
    /// jobs only): the rate is measured from it to the present.
    pub progress_anchor: Option<Sample>,
    /// When (database clock) the run state or checkpoint last changed while the console watched.
    pub state_changed_at: Option<DateTime<Utc>>,
}

impl BoardRow {
    /// What the signals are judged from.
    pub(crate) fn facts(&self) -> Facts {
        Facts {
            run_state: self.run_state,
            checkpoint: self.checkpoint,
            updated_at: self.updated_at,
            worker: self.worker.as_ref().map(|w| (w.expires_at, w.heartbeat_at)),
            lease: self.lease.as_ref().map(|l| (l.acquired_at, l.expires_at)),
        }
    }

    /// Whether documents are frozen (or the snapshot is past): else its progress reads `-`.
    pub(crate) fn has_documents(&self) -> bool {
        self.total > 0 || self.checkpoint.index() > 0
    }

    /// 0.0–1.0; a job with nothing to do is at 0 until it succeeds.
    pub(crate) fn fraction(&self) -> f64 {
        fraction(self.completed, self.total)
    }

    pub(crate) fn idle_for(&self, now: DateTime<Utc>) -> Duration {
        now - self.updated_at
    }

    /// Worker lease time left (negative once expired); running jobs only.
    pub fn lease_remaining(&self, now: DateTime<Utc>) -> Option<Duration> {
        self.worker.as_ref().map(|w| w.expires_at - now)
    }

    /// Time since the worker's last heartbeat; running jobs only.
    pub(crate) fn heartbeat_age(&self, now: DateTime<Utc>) -> Option<Duration> {
        self.worker.as_ref().map(|w| now - w.heartbeat_at)
    }

    /// Age of the space's mutation lease, if any.
    pub fn lease_age(&self, now: DateTime<Utc>) -> Option<Duration> {
        self.lease.as_ref().map(|l| now - l.acquired_at)
    }

    /// Documents per minute from the anchor sample to `now` (it decays while a job is quiet).
    pub(crate) fn rate_per_minute(&self, now: DateTime<Utc>) -> Option<f64> {
        let anchor = self.progress_anchor?;
        anchor.rate_to(Sample {
            at: now,
            completed: i64::from(self.completed),
        })
    }

    /// Time to finish at the current rate; only a job being worked on is heading anywhere.
    pub(crate) fn eta(&self, now: DateTime<Utc>) -> Option<Duration> {
        if self.run_state != RunState::Running {
            return None;
        }
        let rate = self.rate_per_minute(now).filter(|r| *r > 0.0)?;
        Some(signals::minutes(
            f64::from(self.total - self.completed) / rate,
        ))
    }

    /// Since when the row has been in its attention class (see [`signals::attention_since`]).
    pub(crate) fn attention_since(&self, thresholds: &Thresholds) -> Option<DateTime<Utc>> {
        signals::attention_since(
            &self.facts(),
            self.signals.attention,
            self.completed_at,
            thresholds,
        )
    }
}

/// A job's share done, 0.0–1.0; a job with nothing to do is at 0 until it succeeds.
pub(crate) fn fraction(completed: i32, total: i32) -> f64 {
    if total > 0 {
        f64::from(completed) / f64::from(total)
    } else {
        0.0
    }
}

/// The rollout at a glance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// `matrix[checkpoint][run_state]`: how many jobs are in each combination.
    pub matrix: [[u32; 5]; 5],
    pub spaces: u32,
    pub readable: u32,
    /// How many rows fall in each attention class, indexed like [`Attention::ALL`].
    pub by_attention: [u32; Attention::COUNT],
    /// Documents per minute across the rollout, over the rate window.
    pub documents_per_minute: Option<f64>,
    /// Documents still to rebuild in spaces whose snapshot is captured.
    pub documents_remaining: i64,
    /// Documents rebuilt so far, over every job in scope (the pace chart's rate comes from
    /// how this moves between polls).
    pub documents_completed: i64,
    /// Of those, the documents running jobs still have to rebuild: what the ETA covers (a
    /// failed or canceled job never finishes on its own).
    pub documents_running: i64,
    /// Spaces still at `pending_snapshot`, whose size is unknown until captured.
    pub spaces_uncaptured: u32,
    /// Time for the running jobs to rebuild `documents_running` at the current rate.
    pub eta: Option<Duration>,
}

impl Summary {
    /// Readable share, 0.0–1.0 (1.0 for an empty rollout: nothing is down).
    pub(crate) fn readable_share(&self) -> f64 {
        readable_share(self.readable, self.spaces)
    }

    pub fn count(&self, attention: Attention) -> u32 {
        self.by_attention[attention.index()]
    }

    /// Rows in `group`.
    pub fn in_group(&self, group: Group) -> u32 {
        in_group(&self.by_attention, group)
    }

    /// Jobs in `run_state`, at any checkpoint.
    pub(crate) fn in_run_state(&self, run_state: RunState) -> u32 {
        self.matrix.iter().map(|row| row[run_state.index()]).sum()
    }

    /// Running jobs whose snapshot is captured: the ones whose documents the ETA counts.
    pub(crate) fn running_captured(&self) -> u32 {
        self.in_run_state(RunState::Running)
            - self.in_state(Checkpoint::PendingSnapshot, RunState::Running)
    }

    pub fn in_state(&self, checkpoint: Checkpoint, run_state: RunState) -> u32 {
        self.matrix[checkpoint.index()][run_state.index()]
    }

    /// Counts a row in (`add`) or out of the summary.
    pub(crate) fn count_row(&mut self, row: &BoardRow, add: bool) {
        let step = |n: &mut u32| {
            if add {
                *n += 1
            } else {
                *n = n.saturating_sub(1)
            }
        };
        step(&mut self.matrix[row.checkpoint.index()][row.run_state.index()]);
        step(&mut self.spaces);
        let completed = i64::from(row.completed);
        self.documents_completed += if add { completed } else { -completed };
        step(&mut self.by_attention[row.signals.attention.index()]);
        if row.signals.readable {
            step(&mut self.readable);
        } else if row.checkpoint == Checkpoint::PendingSnapshot {
            step(&mut self.spaces_uncaptured);
        } else {
            let remaining = i64::from(row.total - row.completed);
            let signed = if add { remaining } else { -remaining };
            self.documents_remaining += signed;
            if row.run_state == RunState::Running {
                self.documents_running += signed;
            }
        }
    }

    /// Sets the rollout rate, and the ETA that follows from it.
    pub(crate) fn set_rate(&mut self, documents_per_minute: Option<f64>) {
        self.documents_per_minute = documents_per_minute;
        self.eta = documents_per_minute
            .filter(|rate| *rate > 0.0)
            .map(|rate| signals::minutes(self.documents_running as f64 / rate));
    }
}

/// What needs an operator and what is watched, in the one vocabulary, with the classes that
/// make each count: `needs an operator 2 (failed 1, blocked 1) · watch 8 (writing 8)`.
pub(crate) fn attention_sentence(by_attention: &[u32; Attention::COUNT]) -> String {
    attention_lines(by_attention).join(" · ")
}

/// [`attention_sentence`], a group per line.
pub(crate) fn attention_lines(by_attention: &[u32; Attention::COUNT]) -> Vec<String> {
    [Group::NeedsOperator, Group::Watch]
        .into_iter()
        .map(|group| {
            let classes: Vec<String> = group
                .classes()
                .filter(|a| by_attention[a.index()] > 0)
                .map(|a| format!("{} {}", a.label(), by_attention[a.index()]))
                .collect();
            let count = in_group(by_attention, group);
            if classes.is_empty() {
                format!("{} {count}", group.label())
            } else {
                format!("{} {count} ({})", group.label(), classes.join(", "))
            }
        })
        .collect()
}

/// How many of the spaces counted by attention class (indexed like [`Attention::ALL`]) are
/// in `group`.
pub fn in_group(by_attention: &[u32; Attention::COUNT], group: Group) -> u32 {
    group.classes().map(|a| by_attention[a.index()]).sum()
}

/// The share of `spaces` that is readable, 0.0–1.0 (1.0 for none: nothing is down).
pub(crate) fn readable_share(readable: u32, spaces: u32) -> f64 {
    if spaces == 0 {
        1.0
    } else {
        f64::from(readable) / f64::from(spaces)
    }
}

/// How the board is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Attention,
    Tenant,
    Progress,
    Idle,
}

impl SortKey {
    pub const ALL: [SortKey; 4] = [Self::Attention, Self::Tenant, Self::Progress, Self::Idle];

    /// How the order reads, in its direction: which rows come first.
    pub(crate) fn label(self, reverse: bool) -> &'static str {
        match (self, reverse) {
            (Self::Attention, false) => "attention",
            (Self::Attention, true) => "attention, calmest first",
            (Self::Tenant, false) => "tenant A-Z",
            (Self::Tenant, true) => "tenant Z-A",
            (Self::Progress, false) => "progress, least first",
            (Self::Progress, true) => "progress, most first",
            (Self::Idle, false) => "idle, longest first",
            (Self::Idle, true) => "idle, shortest first",
        }
    }
}

/// Quick filters: by attention class, cycled with `f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quick {
    All,
    Group(Group),
    Class(Attention),
}

impl Quick {
    pub fn cycle() -> Vec<Quick> {
        let mut all = vec![
            Quick::All,
            Quick::Group(Group::NeedsOperator),
            Quick::Group(Group::Watch),
        ];
        all.extend(Attention::ALL.iter().map(|a| Quick::Class(*a)));
        all
    }

    pub(crate) fn label(self) -> String {
        match self {
            Quick::All => "all".into(),
            Quick::Group(group) => group.label().into(),
            Quick::Class(a) => a.label().into(),
        }
    }

    /// Whether a row of this attention class passes.
    pub(crate) fn admits(self, attention: Attention) -> bool {
        match self {
            Quick::All => true,
            Quick::Group(group) => attention.group() == group,
            Quick::Class(a) => attention == a,
        }
    }
}

/// What the operator asked the board to show: order, filters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardQuery {
    pub sort: SortKey,
    pub reverse: bool,
    pub quick: Quick,
    /// The `/` filter as typed (matched case-insensitively).
    pub text: String,
    /// Only this tenant (chosen in the tenants view).
    pub tenant: Option<Name>,
}

impl Default for BoardQuery {
    fn default() -> Self {
        Self {
            sort: SortKey::Attention,
            reverse: false,
            quick: Quick::All,
            text: String::new(),
            tenant: None,
        }
    }
}

impl BoardQuery {
    /// Whether the reverse is part of the order itself rather than the rows read backwards:
    /// by tenant, reversed is tenants Z-A with each tenant's trouble still first.
    pub(crate) fn reverses_inside(&self) -> bool {
        self.reverse && self.sort == SortKey::Tenant
    }

    /// Whether the rows in order are read backwards to show them.
    pub(crate) fn read_backwards(&self) -> bool {
        self.reverse && !self.reverses_inside()
    }

    /// Whether any filter is set (otherwise every row is shown).
    pub(crate) fn filters(&self) -> bool {
        self.quick != Quick::All || !self.text.is_empty() || self.tenant.is_some()
    }

    /// The text filter, ready to search with (build it once per query, not per row).
    pub(crate) fn needle(&self) -> Needle {
        Needle::new(&self.text)
    }

    /// Whether `self` shows a subset of what `before` showed, in the same order: then the new
    /// rows can be found among the old ones instead of among all rows.
    pub(crate) fn narrows(&self, before: &BoardQuery) -> bool {
        // Text read as an id (a marked suffix, a hyphenated prefix) matches differently from
        // the plain text it grew from: `.` matches nothing, `..7d30` an id's end.
        let plain = |text: &str| !text.contains(super::ids::SUFFIX_MARK) && !text.contains('-');
        self.sort == before.sort
            && self.quick == before.quick
            && self.tenant == before.tenant
            && plain(&self.text)
            && plain(&before.text)
            && self
                .text
                .to_lowercase()
                .contains(&before.text.to_lowercase())
    }
}

/// A case-insensitive substring to find in rows' search text, with its searcher built once.
#[derive(Debug, Clone)]
pub(crate) struct Needle {
    finder: Option<memchr::memmem::Finder<'static>>,
    /// What was typed read as an id as the console shows them — its first digits (hyphens
    /// aside), or `..` and its last ones — searched at an id's start or end.
    id_finder: Option<memchr::memmem::Finder<'static>>,
    /// A both-ends form (`4..00000239`): an id's start, and the digits it must end with.
    ends: Option<(memchr::memmem::Finder<'static>, Vec<u8>)>,
}

impl Needle {
    /// Whether the needle occurs in `haystack` (an empty needle is everywhere).
    pub(crate) fn finds(&self, haystack: &[u8]) -> bool {
        let Some(finder) = &self.finder else {
            return true;
        };
        finder.find(haystack).is_some()
            || self
                .id_finder
                .as_ref()
                .is_some_and(|finder| finder.find(haystack).is_some())
            || self.ends.as_ref().is_some_and(|(start, tail)| {
                // Each id in the text is 32 digits between field ends.
                start.find_iter(haystack).any(|at| {
                    haystack
                        .get(at + 1..at + 34)
                        .is_some_and(|id| id[32] == 1 && id[..32].ends_with(tail))
                })
            })
    }

    pub fn new(text: &str) -> Self {
        use super::ids::{MIN_PREFIX_DIGITS, SHOWN_DIGITS, SUFFIX_MARK};
        let lower = text.to_lowercase();
        let (suffix, bare) = match lower.strip_prefix(SUFFIX_MARK) {
            Some(rest) => (true, rest),
            None => (false, lower.as_str()),
        };
        let digits: String = bare.chars().filter(|c| *c != '-').collect();
        let hex = digits.chars().all(|c| c.is_ascii_hexdigit());
        // A suffix as shown, or a prefix long enough to be one (a tenant such as `cafe-01`
        // is not taken for an id).
        let id_text = match (suffix, hex, digits.len()) {
            (true, true, n) if n >= MIN_PREFIX_DIGITS => Some(format!("{digits}\u{1}")),
            (false, true, n) if n >= SHOWN_DIGITS && digits != lower => {
                Some(format!("\u{1}{digits}"))
            }
            _ => None,
        };
        let finder = |text: &str| memchr::memmem::Finder::new(text.as_bytes()).into_owned();
        let ends = match super::ids::parse_id_arg(&lower) {
            Ok(super::ids::IdArg::Both(lead, tail)) => {
                Some((finder(&format!("\u{1}{}", lead.digits)), tail.into_bytes()))
            }
            _ => None,
        };
        Self {
            finder: (!lower.is_empty()).then(|| finder(&lower)),
            id_finder: id_text.map(|text| finder(&text)),
            ends,
        }
    }
}

pub use super::fleet::BoardView;

#[cfg(test)]
mod tests {
    use super::Needle;

    #[test]
    fn ids_are_found_as_shown_typed_with_or_without_hyphens_and_the_suffix_mark() {
        let row = "dead-beef\u{1}3f2a9c104b0040008000000000000002\u{1}worker-1\u{1}";
        // A marked suffix is an id's end, a hyphenated prefix its start; short hyphenated
        // text is not an id.
        let other = "acme\u{1}00000000000000000000000000000021\u{1}";
        for typed in ["..00000002", "0000-0000-0000-0021", "00-21"] {
            assert!(!Needle::new(typed).finds(other.as_bytes()), "{typed}");
        }
        for typed in [
            "3F2A9C104B",
            "3f2a9c10-4b",
            "..00000002",
            "dead-beef",
            "worker",
        ] {
            assert!(Needle::new(typed).finds(row.as_bytes()), "{typed}");
        }
        // First and last digits, as ids alike at both ends are shown.
        assert!(Needle::new("3f..00000002").finds(row.as_bytes()));
        assert!(!Needle::new("4f..00000002").finds(row.as_bytes()));
        assert!(!Needle::new("3f..00000003").finds(row.as_bytes()));
        for typed in ["3f2a9c104c", "..00000003", "deadbeef4"] {
            assert!(!Needle::new(typed).finds(row.as_bytes()), "{typed}");
        }
        assert!(Needle::new("").finds(b"anything"));
        // Typed key by key, an id's shown form is filtered afresh, not within what `.` found.
        let query = |text: &str| super::BoardQuery {
            text: text.into(),
            ..super::BoardQuery::default()
        };
        assert!(!query("..").narrows(&query(".")));
        assert!(!query("..7d30").narrows(&query("..7d3")));
        assert!(!query("3f2a9c10-4b").narrows(&query("3f2a9c10-4")));
        assert!(!query("acme-eu").narrows(&query("acme")));
        assert!(query("acme").narrows(&query("acm")));
    }
}
