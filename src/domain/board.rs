//! The board: every bootstrap in scope with its signals, in attention order, and the rollout
//! summary — built from one snapshot of the store.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use super::model::{Bootstrap, Checkpoint, MutationLease, RowError, RunState};
use super::progress::ProgressTracker;
use super::signals::{self, Attention, Signals, Thresholds};
use crate::store::read::BoardRows;

/// One space on the board.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardRow {
    pub bootstrap: Bootstrap,
    pub lease: Option<MutationLease>,
    pub signals: Signals,
}

/// The rollout at a glance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// `matrix[checkpoint][run_state]`: how many jobs are in each combination.
    pub matrix: [[u32; 5]; 5],
    pub spaces: u32,
    pub readable: u32,
    /// How many rows fall in each attention class, indexed like [`Attention::ALL`].
    pub by_attention: [u32; 9],
    /// Documents per minute across the rollout, over the rate window.
    pub documents_per_minute: Option<f64>,
    /// Documents still to rebuild in spaces whose snapshot is captured.
    pub documents_remaining: i64,
    /// Spaces still at `pending_snapshot`, whose size is unknown until captured.
    pub spaces_uncaptured: u32,
    /// Time to rebuild `documents_remaining` at the current rate (a lower bound while spaces
    /// are uncaptured).
    pub eta: Option<Duration>,
}

impl Summary {
    /// Readable share, 0.0–1.0 (1.0 for an empty rollout: nothing is down).
    pub fn readable_share(&self) -> f64 {
        if self.spaces == 0 {
            1.0
        } else {
            f64::from(self.readable) / f64::from(self.spaces)
        }
    }

    pub fn count(&self, attention: Attention) -> u32 {
        self.by_attention[attention as usize]
    }

    /// Rows that need a human now.
    pub fn needing_attention(&self) -> u32 {
        Attention::ALL
            .iter()
            .filter(|a| a.needs_attention())
            .map(|a| self.count(*a))
            .sum()
    }

    pub fn in_state(&self, checkpoint: Checkpoint, run_state: RunState) -> u32 {
        self.matrix[checkpoint.index()][run_state.index()]
    }
}

/// The assessed board.
#[derive(Debug, Clone, PartialEq)]
pub struct Board {
    /// The database clock of the snapshot.
    pub db_now: DateTime<Utc>,
    /// In attention order.
    pub rows: Vec<BoardRow>,
    /// Rows that could not be read, shown rather than hidden.
    pub problems: Vec<RowError>,
    pub summary: Summary,
}

impl Board {
    /// Parses, assesses and orders one snapshot; feeds the progress history.
    pub fn assess(
        snapshot: BoardRows,
        tracker: &mut ProgressTracker,
        thresholds: &Thresholds,
    ) -> Self {
        let now = snapshot.db_now;
        let mut parsed = Vec::with_capacity(snapshot.lines.len());
        let mut problems = Vec::new();
        for line in snapshot.lines {
            match Bootstrap::try_from(line.bootstrap) {
                Ok(bootstrap) => parsed.push((bootstrap, line.lease.map(MutationLease::from))),
                Err(problem) => problems.push(problem),
            }
        }
        tracker.observe(
            now,
            parsed.iter().map(|(b, _)| (b.id, b.completed_documents)),
        );

        let mut rows: Vec<BoardRow> = parsed
            .into_iter()
            .map(|(bootstrap, lease)| {
                let rate = tracker.rate_per_minute(&bootstrap.id);
                let signals = signals::assess(&bootstrap, lease.as_ref(), now, thresholds, rate);
                BoardRow {
                    bootstrap,
                    lease,
                    signals,
                }
            })
            .collect();
        rows.sort_by(attention_order);
        let summary = summarize(&rows, tracker.rollout_rate_per_minute());
        Self {
            db_now: now,
            rows,
            problems,
            summary,
        }
    }

    pub fn row(&self, bootstrap_id: &Uuid) -> Option<&BoardRow> {
        self.rows.iter().find(|r| r.bootstrap.id == *bootstrap_id)
    }
}

/// SPEC §2 attention order; within a class the longest-idle first, then by tenant and space so
/// the order is stable between polls.
pub fn attention_order(a: &BoardRow, b: &BoardRow) -> std::cmp::Ordering {
    a.signals
        .attention
        .cmp(&b.signals.attention)
        .then(a.bootstrap.updated_at.cmp(&b.bootstrap.updated_at))
        .then_with(|| a.bootstrap.tenant_id.cmp(&b.bootstrap.tenant_id))
        .then(
            a.bootstrap
                .knowledge_space_id
                .cmp(&b.bootstrap.knowledge_space_id),
        )
}

fn summarize(rows: &[BoardRow], documents_per_minute: Option<f64>) -> Summary {
    let mut summary = Summary {
        documents_per_minute,
        ..Summary::default()
    };
    for row in rows {
        let b = &row.bootstrap;
        summary.matrix[b.checkpoint.index()][b.run_state.index()] += 1;
        summary.spaces += 1;
        summary.by_attention[row.signals.attention as usize] += 1;
        if row.signals.readable {
            summary.readable += 1;
            continue;
        }
        if b.checkpoint == Checkpoint::PendingSnapshot {
            summary.spaces_uncaptured += 1;
        } else {
            summary.documents_remaining += i64::from(b.total_documents - b.completed_documents);
        }
    }
    summary.eta = documents_per_minute
        .filter(|rate| *rate > 0.0)
        .map(|rate| signals::minutes(summary.documents_remaining as f64 / rate));
    summary
}
