//! Stall outliers: running spaces far slower than their peers at the same checkpoint.
//!
//! The ledger records no time of entering a checkpoint, so "no change for 10 minutes" (stuck)
//! is all a single snapshot can tell. The console's bounded progress history can tell more:
//! each running job's documents per minute since the oldest sample in the rate window. A job
//! that moves, but at a tenth of what its peers at the same checkpoint manage, is a slow
//! worker, a huge document or a hot tenant — worth a look before it reads as stuck.
//!
//! Only jobs rebuilding are compared (verifying and capturing rebuild no documents), and a job
//! already flagged lease-expired or stuck is that, neither an outlier nor a peer. The history
//! lives only in a running console, so the Health view lists outliers and `check` does not.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::board::{BoardRow, Name};
use super::model::{Checkpoint, RunState};
use super::progress::Sample;

/// Flagged below this share of the median rate at the same checkpoint.
pub(crate) const SLOW_SHARE: f64 = 0.1;
/// Fewer peers than this at a checkpoint make no distribution to compare with.
pub(crate) const MIN_PEERS: usize = 5;
/// A rate needs at least this much history behind it.
pub(crate) const MIN_HISTORY: Duration = Duration::seconds(60);
/// Progress comes in whole documents: a job is compared only over a history in which its
/// peers' median pace would have done at least this many, so one long document is not a stall.
pub(crate) const MIN_EXPECTED_DOCUMENTS: f64 = 5.0;

/// A running space far slower than its peers.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    pub(crate) id: Uuid,
    pub(crate) tenant: Name,
    pub(crate) space: Uuid,
    pub(crate) checkpoint: Checkpoint,
    /// Its documents per minute over its history.
    pub(crate) rate: f64,
    /// The median of its peers' (itself included).
    pub(crate) median: f64,
    /// Running jobs with enough history at the same checkpoint.
    pub(crate) peers: usize,
    pub(crate) completed: i32,
    pub(crate) total: i32,
}

/// The running rows far below the median rate of their checkpoint, slowest (relative to the
/// median) first.
pub(crate) fn stall_outliers<'a>(
    rows: impl IntoIterator<Item = &'a BoardRow>,
    now: DateTime<Utc>,
) -> Vec<Outlier> {
    // Documents are rebuilt at one checkpoint only: a job verifying (every document done)
    // or capturing has no documents per minute to compare.
    let mut rated: Vec<(&BoardRow, f64, f64)> = rows
        .into_iter()
        // A job whose worker lease ran out, or that has not changed for the stuck threshold,
        // is flagged as that already: it is neither a peer nor an outlier.
        .filter(|row| {
            row.run_state == RunState::Running
                && row.checkpoint == Checkpoint::Rebuilding
                && row.completed < row.total
                && !row.signals.lease_expired
                && !row.signals.stuck
        })
        .filter_map(|row| {
            let anchor = row.progress_anchor?;
            let history = now - anchor.at;
            if history < MIN_HISTORY {
                return None;
            }
            let rate = anchor.rate_to(Sample {
                at: now,
                completed: i64::from(row.completed),
            })?;
            let minutes = history.num_milliseconds() as f64 / 60_000.0;
            Some((row, rate.max(0.0), minutes))
        })
        .collect();
    let mut outliers = Vec::new();
    for checkpoint in Checkpoint::ALL {
        let mut rates: Vec<f64> = rated
            .iter()
            .filter(|(row, _, _)| row.checkpoint == *checkpoint)
            .map(|(_, rate, _)| *rate)
            .collect();
        if rates.len() < MIN_PEERS {
            continue;
        }
        rates.sort_by(f64::total_cmp);
        let median = rates[rates.len() / 2];
        if median <= 0.0 {
            continue;
        }
        outliers.extend(
            rated
                .iter()
                .filter(|(row, rate, minutes)| {
                    row.checkpoint == *checkpoint
                        && *rate < median * SLOW_SHARE
                        && median * minutes >= MIN_EXPECTED_DOCUMENTS
                })
                .map(|(row, rate, _)| Outlier {
                    id: row.id,
                    tenant: row.tenant.clone(),
                    space: row.space,
                    checkpoint: *checkpoint,
                    rate: *rate,
                    median,
                    peers: rates.len(),
                    completed: row.completed,
                    total: row.total,
                }),
        );
    }
    rated.clear();
    outliers.sort_by(|a, b| (a.rate / a.median).total_cmp(&(b.rate / b.median)));
    outliers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::signals::Signals;

    fn row(checkpoint: Checkpoint, done_in_5_min: i32, now: DateTime<Utc>) -> BoardRow {
        BoardRow {
            id: Uuid::new_v4(),
            tenant: "acme".into(),
            space: Uuid::new_v4(),
            checkpoint,
            run_state: RunState::Running,
            total: 1000,
            completed: 100 + done_in_5_min,
            worker: None,
            error_code: None,
            error_message: None,
            has_message: false,
            row_version: 1,
            updated_at: now,
            completed_at: None,
            lease: None,
            signals: Signals::UNJUDGED,
            progress_anchor: Some(Sample {
                at: now - Duration::minutes(5),
                completed: 100,
            }),
            state_changed_at: None,
        }
    }

    #[test]
    fn a_job_far_below_its_peers_is_flagged_and_its_peers_are_not() {
        let now = Utc::now();
        let mut rows: Vec<BoardRow> = [50, 55, 60, 45, 52]
            .into_iter()
            .map(|n| row(Checkpoint::Rebuilding, n, now))
            .collect();
        // Moving, but at a twentieth of the others: not stuck, yet an outlier.
        rows.push(row(Checkpoint::Rebuilding, 2, now));
        // Slow at another checkpoint, with too few peers there to compare.
        rows.push(row(Checkpoint::Verifying, 1, now));
        let found = stall_outliers(&rows, now);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].id, rows[5].id);
        assert!((found[0].rate - 0.4).abs() < 1e-9, "{found:?}");
        assert!((found[0].median - 10.4).abs() < 1e-9, "{found:?}");
        assert_eq!(found[0].peers, 6);
    }

    #[test]
    fn one_long_document_is_not_a_stall_nor_is_verifying() {
        let now = Utc::now();
        // Peers at 2 documents a minute: over a 1.5-minute history the median pace would do 3
        // documents — too few to call a job at 0 slow rather than on a long document.
        let mut rows: Vec<BoardRow> = (0..5)
            .map(|_| row(Checkpoint::Rebuilding, 10, now))
            .collect();
        let mut long_document = row(Checkpoint::Rebuilding, 0, now);
        long_document.progress_anchor = Some(Sample {
            at: now - Duration::seconds(90),
            completed: 100,
        });
        rows.push(long_document);
        for _ in 0..6 {
            let mut verifying = row(Checkpoint::Verifying, 0, now);
            verifying.completed = verifying.total;
            rows.push(verifying);
        }
        assert!(stall_outliers(&rows, now).is_empty());
    }

    #[test]
    fn too_little_history_or_too_few_peers_flags_nothing() {
        let now = Utc::now();
        let mut rows: Vec<BoardRow> = (0..3)
            .map(|_| row(Checkpoint::Rebuilding, 50, now))
            .collect();
        rows.push(row(Checkpoint::Rebuilding, 0, now));
        assert!(
            stall_outliers(&rows, now).is_empty(),
            "five peers are needed"
        );
        let mut young = row(Checkpoint::Rebuilding, 0, now);
        young.progress_anchor = Some(Sample {
            at: now - Duration::seconds(20),
            completed: 100,
        });
        rows.push(row(Checkpoint::Rebuilding, 50, now));
        rows.push(young);
        let found = stall_outliers(&rows, now);
        assert_eq!(
            found.len(),
            1,
            "only the one with a minute of history: {found:?}"
        );
    }
}
