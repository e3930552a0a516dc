//! Verifying the audit log's hash chain: every record's hash must be what its fields and its
//! predecessor's hash give, and every record must follow the one it was chained to.
//!
//! A chain alone cannot show records removed at its end: the last record left is a valid
//! head. Consoles log the head after each action, and [`verify`] can be told a head recorded
//! elsewhere that the chain must still contain.
//!
//! # The design (console schema unit 0004, `migrations/console/0004_audit_chain.sql`)
//!
//! * Append-only: triggers refuse UPDATE, DELETE and TRUNCATE whoever holds a grant, in every
//!   session (`ENABLE ALWAYS`, so `session_replication_role = replica` is refused too), and
//!   `migrate` revokes, with `CASCADE`, every grant to change the log or add triggers to it
//!   held by a role other than the owner.
//! * Tamper-evident: an INSERT trigger computes `hash`, the sha256 of the previous record's
//!   hash and of the record's own fields, in a form that depends on no session setting (times
//!   in UTC, JSON text, hex). `chain_seq` is the record's place in the chain and `db_role` the
//!   role the database saw write it (`session_user`); the `actor` and `host` columns are what
//!   the caller of the action functions claims (anyone who may call them could claim anything
//!   from `psql`), so the views show the role first (`alice (ops@jump-1)`). The time, the role and the chain
//!   columns are the database's, whatever a client sends.
//! * The end: the database keeps the head in `bootstrap_console.audit_chain_head`; a
//!   verification whose records do not reach it says so, and a role that may not read it is
//!   told the end was not checked. The owner can move that head too, so every applied action
//!   logs the head (`audit chain head: record 42 (chain position 42) sha256 9f2c…`), the CLI's
//!   actions print it and the live console shows its first [`HEAD_PREFIX`] digits; heads kept
//!   elsewhere (a ticket, a log shipper) are what `audit verify --expect-head` checks, and an
//!   owner who rewrites and re-chains records cannot keep them.
//! * The guards: verification also reports a disabled or missing trigger, row-level security
//!   on the table, or an object that is not a plain table ("audit log UNPROTECTED: …").
//! * One chain for several consoles: the INSERT trigger runs as the log's owner (`SECURITY
//!   DEFINER`), locks the one head row, chains onto it and moves it; the lock lasts until the
//!   action's transaction ends, and the audit INSERT is that transaction's last statement, so
//!   another console waits only between that INSERT and its COMMIT. A transaction stalled
//!   there holds the others for at most their lock timeout (5 s); their action then rolls back
//!   and names the holder (pid, role, application, how long it has been open) so it can be
//!   ended. A stalled console's own transaction ends by its idle-in-transaction timeout (60 s)
//!   or its deadline. No other role holds a grant on the head table, so none can lock it
//!   without appending a record (an advisory lock would be open to every role). A transaction
//!   chaining from an old snapshot fails (REPEATABLE READ cannot lock a head updated since, and
//!   `chain_seq` is unique) rather than forking the chain. Sealing records after commit was the
//!   alternative; it leaves records unchained, and so removable unseen, until a sealer runs.
//! * Cost: the console writes one record per transaction, where chaining adds about 0.13 ms;
//!   records inserted by hand many in one transaction chain slowly (100,000 in one statement
//!   took about three minutes, against 0.3 s without the chain).
//!
//! Verification reads [`crate::store::audit_chain::PAGE`] records a statement, so memory stays
//! flat however long the log is. The audit view verifies in the background while shown: the
//! whole chain when first opened and on Ctrl-R, then every minute only the records added since
//! the head it verified last (a head changed or removed since is found at once), and the whole
//! chain again every ten minutes; each run stops after 5 s and the next goes on from the last
//! sound record (`tui::update::chain`).

use std::fmt;
use std::time::Instant;

use crate::domain::session::Session;
use crate::store::StoreError;
use crate::store::audit_chain as store;
pub use crate::store::audit_chain::{ChainHead, Link};
use crate::store::db::read_retried;

impl ChainHead {
    pub(crate) fn hex(&self) -> String {
        hex(&self.hash)
    }

    fn of(link: &Link) -> Self {
        Self {
            id: link.id,
            seq: link.seq,
            hash: link.hash.clone(),
        }
    }
}

impl fmt::Display for ChainHead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "record {} (chain position {}) sha256 {}",
            self.id,
            self.seq,
            self.hex()
        )
    }
}

/// The first thing wrong with a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Break {
    /// The record's fields no longer give its hash (or, when its successor was chained to a
    /// hash that is nowhere now, its hash was rewritten along with them).
    Changed { id: i64, seq: i64 },
    /// The records between two chain positions are gone (`after_seq` 0: from the start).
    Removed {
        after_seq: i64,
        before_id: i64,
        before_seq: i64,
    },
    /// The record was chained after another record than the one it now follows.
    Reordered {
        id: i64,
        seq: i64,
        chained_after: i64,
        follows: Option<i64>,
    },
    /// The head recorded elsewhere is not in the chain: records were removed from its end
    /// (or the head belongs to another database).
    HeadMissing {
        expected: String,
        last: Option<ChainHead>,
    },
    /// The head the database keeps is not the last record: records were removed from the end.
    KeptHeadMissing { seq: i64, last: Option<ChainHead> },
    /// A record verified before (where a verification continues) is not there as it was.
    Vanished { id: i64, seq: i64 },
    /// The record follows the one it was chained to, at another position than the next.
    Renumbered { id: i64, seq: i64, expected: i64 },
    /// The record was moved elsewhere in the chain's order: it belongs at `belongs`.
    Moved { id: i64, seq: i64, belongs: i64 },
}

impl Break {
    fn vanished(from: &ChainHead) -> Self {
        Self::Vanished {
            id: from.id,
            seq: from.seq,
        }
    }
}

impl fmt::Display for Break {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Changed { id, seq } => write!(
                f,
                "record {id} (chain position {seq}) was changed: its fields no longer give \
                 the hash it was chained with"
            ),
            Self::Removed {
                after_seq: 0,
                before_id,
                before_seq,
            } => write!(
                f,
                "records were removed from the start of the chain: the first record left is \
                 {before_id} (chain position {before_seq})"
            ),
            Self::Removed {
                after_seq,
                before_id,
                before_seq,
            } => match before_seq - after_seq - 1 {
                0 => write!(
                    f,
                    "a record was removed before record {before_id} (chain position \
                     {before_seq})"
                ),
                1 => write!(
                    f,
                    "the record at chain position {} was removed (before record {before_id})",
                    after_seq + 1
                ),
                _ => write!(
                    f,
                    "records at chain positions {}-{} were removed (before record {before_id})",
                    after_seq + 1,
                    before_seq - 1
                ),
            },
            Self::Reordered {
                id,
                seq,
                chained_after,
                follows,
            } => {
                write!(
                    f,
                    "record {id} (chain position {seq}) was reordered: it was chained after \
                     record {chained_after}"
                )?;
                match follows {
                    Some(previous) => write!(f, ", but now follows record {previous}"),
                    None => write!(f, ", but is now first"),
                }
            }
            Self::HeadMissing {
                expected,
                last: Some(last),
            } => write!(
                f,
                "head {} is not in the chain: records were removed from its end, or \
                 rewritten (or it is not a head of this log); the chain now ends at {last}",
                prefix(expected)
            ),
            Self::HeadMissing {
                expected,
                last: None,
            } => write!(
                f,
                "head {} is not in the chain: the audit log is empty",
                prefix(expected)
            ),
            Self::KeptHeadMissing { seq, last } => {
                write!(
                    f,
                    "the chain's head, chain position {seq}, is not its last record: records \
                     were removed from its end"
                )?;
                match last {
                    Some(last) => write!(f, " (it now ends at {last})"),
                    None => write!(f, " (the audit log is empty)"),
                }
            }
            Self::Renumbered { id, seq, expected } => write!(
                f,
                "record {id} is at chain position {seq}, where {expected} belongs: the \
                 positions were renumbered"
            ),
            Self::Moved { id, seq, belongs } => write!(
                f,
                "record {id} was moved to chain position {seq}: it was chained at position \
                 {belongs}"
            ),
            Self::Vanished { id, seq } => write!(
                f,
                "record {id} (chain position {seq}), verified before, is no longer there as it was"
            ),
        }
    }
}

/// What a verification found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// Records read and judged (not counting the one a continued verification starts from).
    pub records: u64,
    /// The last record found sound: the head of the chain when it is intact, or where the
    /// verification stopped.
    pub verified: Option<ChainHead>,
    /// The first flaw, if any: records after it were not judged.
    pub broken: Option<Break>,
    /// Whether the chain was read to its end (a verification with a time budget may stop
    /// before; it continues from `verified`).
    pub complete: bool,
    /// What keeps the log append-only that is not in place (a disabled trigger, say).
    pub unprotected: Vec<String>,
    /// The expected head was met (or none was expected): a verification continued later
    /// need not look for it again.
    pub expected_found: bool,
    /// The log's end was checked: against the head the database keeps (when this role may
    /// read it) or an expected head. Otherwise records removed from the end go unseen.
    pub end_checked: bool,
}

impl Verification {
    /// Sound so far, and guarded.
    pub(crate) fn intact(&self) -> bool {
        self.broken.is_none() && self.unprotected.is_empty()
    }
}

/// Where a verification starts and what it must find.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Start {
    /// A record verified earlier: go on from it (it must still be there as it was).
    pub from: Option<ChainHead>,
    /// A head recorded elsewhere (hex) that the chain must contain.
    pub expect_head: Option<String>,
    /// Stop after the page that passes this instant, incomplete.
    pub until: Option<Instant>,
}

/// What a link says about the chain before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Judgement {
    Sound,
    Changed,
    /// Its stored predecessor hash is not the hash of the record before it.
    Unlinked,
    /// It follows the record it was chained to, but not at the next position.
    Renumbered,
}

/// Judges `link` against the record before it in chain order (`None` for the first).
pub(crate) fn judge(previous: Option<&Link>, link: &Link) -> Judgement {
    if link.recomputed != link.hash {
        return Judgement::Changed;
    }
    let linked = match previous {
        Some(previous) => link.prev_hash.as_deref() == Some(previous.hash.as_slice()),
        None => link.prev_hash.is_none(),
    };
    let next = previous.map_or(1, |p| p.seq + 1);
    if !linked {
        Judgement::Unlinked
    } else if link.seq != next {
        Judgement::Renumbered
    } else {
        Judgement::Sound
    }
}

/// Walks the chain in pages, where polls read, from its start or from `start.from`.
/// `progress` is told how many records were read so far.
pub(crate) async fn verify(
    session: &Session,
    start: &Start,
    mut progress: impl FnMut(u64),
) -> Result<Verification, StoreError> {
    let topology = session.topology();
    let unprotected = read_retried!(topology.reads(), "the audit log's guards", |c| {
        store::missing_protections(c)
    })?;
    // Read before the records: a record committed during the walk moves it past them.
    let kept = read_retried!(topology.reads(), "the audit chain's head", |c| {
        store::kept_head(c)
    })?;
    let mut walk = Walk {
        end_checked: kept.is_some() || start.expect_head.is_some(),
        found_expected: start.expect_head.is_none(),
        expected: start.expect_head.as_deref().map(str::to_ascii_lowercase),
        kept,
        unprotected,
        ..Walk::default()
    };
    let mut next = start.from.as_ref().map_or(0, |from| from.seq);
    let mut first = start.from.clone();
    loop {
        let page = read_retried!(topology.reads(), "the audit chain", |c| store::links_from(
            c, next
        ))?;
        let last_page = (page.len() as i64) < store::PAGE;
        for link in page {
            if let Some(from) = first.take() {
                // A continued verification: its starting record must be as verified.
                let same = link.id == from.id && link.seq == from.seq && link.hash == from.hash;
                if !same || link.recomputed != link.hash {
                    return Ok(walk.broken(Break::vanished(&from)));
                }
                walk.accept(link);
                continue;
            }
            walk.records += 1;
            let broken = match judge(walk.previous.as_ref(), &link) {
                Judgement::Sound => None,
                Judgement::Changed => Some(Break::Changed {
                    id: link.id,
                    seq: link.seq,
                }),
                Judgement::Unlinked => Some(unlinked(session, &walk, &link).await?),
                Judgement::Renumbered => Some(Break::Renumbered {
                    id: link.id,
                    seq: link.seq,
                    expected: walk.previous.as_ref().map_or(1, |p| p.seq + 1),
                }),
            };
            if let Some(broken) = broken {
                return Ok(walk.broken(broken));
            }
            walk.accept(link);
        }
        if let Some(from) = first.take() {
            // The record to continue from is gone.
            return Ok(walk.broken(Break::vanished(&from)));
        }
        progress(walk.records);
        next = walk.previous.as_ref().map_or(0, |p| p.seq + 1);
        if last_page {
            break;
        }
        if start.until.is_some_and(|until| Instant::now() >= until) {
            return Ok(walk.done(None, false));
        }
    }
    let last = walk.previous.as_ref().map(ChainHead::of);
    let broken = match &walk.expected {
        Some(expected) if !walk.found_expected => Some(Break::HeadMissing {
            expected: expected.clone(),
            last,
        }),
        // The head the database kept when the walk began must be among the records read
        // (none yet: position 0), unless the walk began after it.
        _ => match walk.kept {
            Some((seq, _))
                if seq > 0
                    && !walk.kept_found
                    && start.from.as_ref().is_none_or(|f| f.seq <= seq) =>
            {
                Some(Break::KeptHeadMissing { seq, last })
            }
            _ => None,
        },
    };
    Ok(walk.done(broken, true))
}

/// The walk so far: the last sound record and the one before it, and whether the heads it
/// must meet were met.
#[derive(Default)]
struct Walk {
    records: u64,
    previous: Option<Link>,
    before_previous: Option<ChainHead>,
    /// A head recorded elsewhere (hex, whole or its first digits).
    expected: Option<String>,
    found_expected: bool,
    /// The head the database kept when the walk began: (position, hash).
    kept: Option<(i64, Option<Vec<u8>>)>,
    kept_found: bool,
    end_checked: bool,
    unprotected: Vec<String>,
}

impl Walk {
    fn accept(&mut self, link: Link) {
        let hex = hex(&link.hash);
        if self
            .expected
            .as_deref()
            .is_some_and(|expected| hex.starts_with(expected))
        {
            self.found_expected = true;
        }
        if self
            .kept
            .as_ref()
            .is_some_and(|(seq, hash)| link.seq == *seq && hash.as_ref() == Some(&link.hash))
        {
            self.kept_found = true;
        }
        self.before_previous = self.previous.as_ref().map(ChainHead::of);
        self.previous = Some(link);
    }

    fn done(self, broken: Option<Break>, complete: bool) -> Verification {
        let verified = self.previous.as_ref().map(ChainHead::of);
        self.verdict(verified, broken, complete)
    }

    /// Ends at `broken`: what stays verified is what came before the flawed record (before
    /// the previous one, when the flaw is that one's rewritten hash).
    fn broken(self, broken: Break) -> Verification {
        let verified = match &broken {
            Break::Changed { id, .. } if self.previous.as_ref().is_some_and(|p| p.id == *id) => {
                self.before_previous.clone()
            }
            _ => self.previous.as_ref().map(ChainHead::of),
        };
        self.verdict(verified, Some(broken), false)
    }

    fn verdict(
        self,
        verified: Option<ChainHead>,
        broken: Option<Break>,
        complete: bool,
    ) -> Verification {
        Verification {
            records: self.records,
            verified,
            broken,
            complete,
            unprotected: self.unprotected,
            expected_found: self.found_expected,
            end_checked: self.end_checked,
        }
    }
}

/// Why `link` does not follow `previous`: its real predecessor is elsewhere (reordered), gone
/// (removed, when positions are missing between them), or was rewritten (changed).
async fn unlinked(session: &Session, walk: &Walk, link: &Link) -> Result<Break, StoreError> {
    let topology = session.topology();
    let previous = walk.previous.as_ref();
    let chained_after = match &link.prev_hash {
        Some(prev_hash) => read_retried!(topology.reads(), "the audit chain", |c| {
            store::record_with_hash(c, prev_hash)
        })?,
        None => None,
    };
    if let Some((chained_after, its_seq, its_prev)) = chained_after {
        // The predecessor is elsewhere. If it was chained right where it is missing, it is the
        // record that moved; otherwise this one is out of its place.
        let belongs = previous.map_or(1, |p| p.seq + 1);
        if its_prev.as_deref() == previous.map(|p| p.hash.as_slice()) && its_seq != belongs {
            return Ok(Break::Moved {
                id: chained_after,
                seq: its_seq,
                belongs,
            });
        }
        return Ok(Break::Reordered {
            id: link.id,
            seq: link.seq,
            chained_after,
            follows: previous.map(|p| p.id),
        });
    }
    Ok(match previous {
        Some(previous) if link.seq == previous.seq + 1 => Break::Changed {
            id: previous.id,
            seq: previous.seq,
        },
        _ => Break::Removed {
            after_seq: previous.map_or(0, |p| p.seq),
            before_id: link.id,
            before_seq: link.seq,
        },
    })
}

/// Lower-case hexadecimal, as `verify --expect-head` takes it.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first [`HEAD_PREFIX`] digits of a head, as the console shows heads in sentences.
fn prefix(hex: &str) -> &str {
    &hex[..hex.len().min(HEAD_PREFIX)]
}

/// The first 12 digits of a hash, for a line with little room.
pub(crate) fn short(hex: &str) -> &str {
    &hex[..hex.len().min(12)]
}

/// The fewest leading hex digits of a head that `verify --expect-head` takes: 64 bits, too
/// many to forge a record whose hash begins with them.
pub(crate) const HEAD_PREFIX: usize = 16;

/// Whether `text` is a head as `verify --expect-head` takes it: a sha256 in hexadecimal, whole
/// or its first [`HEAD_PREFIX`] digits or more.
pub(crate) fn is_head_hex(text: &str) -> bool {
    (HEAD_PREFIX..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(id: i64, seq: i64, prev: Option<u8>, hash: u8) -> Link {
        Link {
            id,
            seq,
            prev_hash: prev.map(|p| vec![p]),
            hash: vec![hash],
            recomputed: vec![hash],
        }
    }

    #[test]
    fn a_first_record_must_start_the_chain() {
        assert_eq!(judge(None, &link(1, 1, None, 10)), Judgement::Sound);
        assert_eq!(judge(None, &link(3, 3, Some(9), 10)), Judgement::Unlinked);
        assert_eq!(judge(None, &link(1, 1, Some(9), 10)), Judgement::Unlinked);
        assert_eq!(judge(None, &link(1, 2, None, 10)), Judgement::Renumbered);
    }

    #[test]
    fn a_record_must_follow_the_hash_it_was_chained_to() {
        let first = link(1, 1, None, 10);
        assert_eq!(
            judge(Some(&first), &link(2, 2, Some(10), 11)),
            Judgement::Sound
        );
        assert_eq!(
            judge(Some(&first), &link(2, 2, Some(12), 11)),
            Judgement::Unlinked
        );
        assert_eq!(
            judge(Some(&first), &link(2, 20, Some(10), 11)),
            Judgement::Renumbered
        );
        let mut changed = link(2, 2, Some(10), 11);
        changed.recomputed = vec![99];
        assert_eq!(judge(Some(&first), &changed), Judgement::Changed);
    }

    #[test]
    fn breaks_name_the_record_in_a_sentence() {
        let removed = Break::Removed {
            after_seq: 4,
            before_id: 9,
            before_seq: 7,
        };
        assert_eq!(
            removed.to_string(),
            "records at chain positions 5-6 were removed (before record 9)"
        );
        let one = Break::Removed {
            after_seq: 4,
            before_id: 9,
            before_seq: 6,
        };
        assert_eq!(
            one.to_string(),
            "the record at chain position 5 was removed (before record 9)"
        );
        let missing = Break::HeadMissing {
            expected: "ab".repeat(32),
            last: Some(ChainHead {
                id: 3,
                seq: 3,
                hash: vec![0xcd; 32],
            }),
        };
        assert!(
            missing
                .to_string()
                .starts_with("head abababababababab is not in the chain: records were removed"),
            "{missing}"
        );
    }

    #[test]
    fn a_head_is_a_sha256_or_at_least_its_first_16_digits() {
        assert!(is_head_hex(&"aF".repeat(32)));
        assert!(is_head_hex(&"a".repeat(16)));
        assert!(!is_head_hex(&"a".repeat(15)));
        assert!(!is_head_hex(&"a".repeat(65)));
        assert!(!is_head_hex(&"g".repeat(64)));
        assert_eq!(hex(&[0, 255, 16]), "00ff10");
    }
}
