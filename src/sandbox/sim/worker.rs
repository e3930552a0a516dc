//! A simulated bootstrap worker: claims jobs and drives them through the worker protocol
//! (domain contract §1, see [`crate::domain`]),
//! with the configured faults. Every write is fenced, so a job canceled or reclaimed behind its
//! back stops it at its next write.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::PgPool;
use tokio::sync::watch;
use uuid::Uuid;

use super::chance::{key_of, roll};
use super::config::RunConfig;
use super::{Stats, pause};
use crate::sandbox::protocol::{self, Capture, Claim, Completion, NextItem, StepError};

/// Realistic failures: (error code, message template; `{doc}` and `{attempt}` are filled in).
const FAILURES: &[(&str, &str)] = &[
    (
        "compile_timeout",
        "compilation of document {doc} exceeded 300s (attempt {attempt})",
    ),
    (
        "document_parse_error",
        "pdf parser: unexpected EOF in object stream of document {doc}",
    ),
    (
        "embedding_quota_exceeded",
        "embedding provider returned 429 for document {doc}: quota exhausted",
    ),
    (
        "graph_extraction_failed",
        "entity extraction crashed on document {doc}: worker exited with status 137",
    ),
    // Parsers echo what they read; the console must show this without obeying it.
    (
        "document_parse_error",
        "parser echoed raw bytes from document {doc}: \u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mFATAL\u{1b}[0m",
    ),
];

/// Document attempt counters shared by all workers, so retries roll fresh chances.
pub(super) type Attempts = Arc<Mutex<HashMap<Uuid, u64>>>;

pub(super) struct Worker {
    pub(crate) pool: PgPool,
    pub(crate) config: RunConfig,
    pub(crate) stats: Arc<Stats>,
    pub(crate) attempts: Attempts,
    pub(crate) shutdown: watch::Receiver<bool>,
    pub(crate) index: u32,
}

/// How handling one job ended.
enum JobEnd {
    Done,
    /// Simulated crash: the worker vanishes without another write.
    Crashed,
}

/// A worker's run of failed attempts: past a few in a row it counts as failing, until an
/// attempt succeeds again.
#[derive(Default)]
struct Failing {
    in_a_row: u32,
}

impl Failing {
    /// Attempts in a row that make a worker count as failing.
    const AFTER: u32 = 3;

    fn failed(&mut self, stats: &Stats) {
        self.in_a_row += 1;
        if self.in_a_row == Self::AFTER {
            stats.workers_failing.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn succeeded(&mut self, stats: &Stats) {
        if self.in_a_row >= Self::AFTER {
            stats.workers_failing.fetch_sub(1, Ordering::Relaxed);
        }
        self.in_a_row = 0;
    }
}

impl Worker {
    pub(crate) async fn run(mut self) {
        let mut incarnation = 0u32;
        let mut claims = 0u64;
        let mut failing = Failing::default();
        while !*self.shutdown.borrow() {
            let name = format!("worker-{}.{}", self.index, incarnation);
            let claimed = match protocol::claim_within(
                &self.pool,
                &name,
                self.config.lease_ttl,
                1,
                &self.config.shape,
            )
            .await
            {
                Ok(claimed) => claimed,
                Err(e) => {
                    tracing::warn!("simulated worker {name}: claim: {e}");
                    self.stats
                        .record_error(&self.stats.worker_errors, format!("claim: {e}"));
                    failing.failed(&self.stats);
                    if !pause(&mut self.shutdown, Duration::from_millis(500)).await {
                        return;
                    }
                    continue;
                }
            };
            let Some(mut claim) = claimed.into_iter().next() else {
                // Nothing to claim is no sign of health either: jobs that failed on the
                // database stay claimed, so a worker that keeps failing soon finds no work.
                let idle = self.config.scaled(Duration::from_millis(300));
                if !pause(&mut self.shutdown, idle).await {
                    return;
                }
                continue;
            };
            claims += 1;
            self.stats.claims.fetch_add(1, Ordering::Relaxed);
            if claim.reclaimed {
                self.stats.reclaims.fetch_add(1, Ordering::Relaxed);
            }
            let crash_after = {
                let mut rng = roll(self.config.seed, &[1, u64::from(self.index), claims]);
                rng.chance(self.config.worker_crash_rate)
                    .then(|| rng.between(0, 12))
            };
            let worked = self.work(&mut claim, crash_after).await;
            if !matches!(worked, Err(StepError::Database(_))) {
                failing.succeeded(&self.stats);
            }
            match worked {
                Ok(JobEnd::Done) => {}
                Ok(JobEnd::Crashed) => {
                    self.stats.worker_crashes.fetch_add(1, Ordering::Relaxed);
                    incarnation += 1;
                    // A crashed worker comes back as a new process after a while.
                    if !pause(
                        &mut self.shutdown,
                        self.config.scaled(self.config.lease_ttl),
                    )
                    .await
                    {
                        return;
                    }
                }
                Err(StepError::LostLease(_)) => {
                    self.stats.fenced_out.fetch_add(1, Ordering::Relaxed);
                }
                Err(StepError::Database(e)) => {
                    tracing::warn!("simulated worker {name}: {e}");
                    self.stats
                        .record_error(&self.stats.worker_errors, e.to_string());
                    failing.failed(&self.stats);
                    if !pause(&mut self.shutdown, Duration::from_millis(500)).await {
                        return;
                    }
                }
            }
        }
    }

    async fn work(
        &mut self,
        claim: &mut Claim,
        crash_after: Option<u64>,
    ) -> Result<JobEnd, StepError> {
        if claim.checkpoint == "pending_snapshot" {
            match protocol::capture_snapshot(&self.pool, claim).await? {
                Capture::Captured(_) => {
                    self.stats.captures.fetch_add(1, Ordering::Relaxed);
                }
                Capture::BlockedByLease => {
                    self.stats.blocked_captures.fetch_add(1, Ordering::Relaxed);
                    protocol::release(&self.pool, claim).await?;
                    pause(
                        &mut self.shutdown,
                        self.config.scaled(Duration::from_secs(2)),
                    )
                    .await;
                    return Ok(JobEnd::Done);
                }
                Capture::HeadExists => {
                    let message = "the space already has a publication head";
                    protocol::fail(&self.pool, claim, None, "publication_head_exists", message)
                        .await?;
                    return Ok(JobEnd::Done);
                }
            }
        }
        let mut steps = 0u64;
        let mut last_heartbeat = tokio::time::Instant::now();
        while let Some(item) = protocol::next_item(&self.pool, claim).await? {
            if crash_after == Some(steps) {
                return Ok(JobEnd::Crashed);
            }
            steps += 1;
            if last_heartbeat.elapsed() > self.config.lease_ttl / 3 {
                protocol::heartbeat_pooled(&self.pool, claim, self.config.lease_ttl).await?;
                last_heartbeat = tokio::time::Instant::now();
            }
            protocol::bind_item(&self.pool, claim, &item).await?;
            let attempt = self.next_attempt(&item);
            let mut rng = roll(
                self.config.seed,
                &[2, key_of(item.document_asset_id.as_bytes()), attempt],
            );
            let slow = rng.chance(self.config.slow_document_rate);
            let time = if slow {
                self.config.document_time
                    * rng.between(
                        u64::from(self.config.slow_factor) / 2,
                        u64::from(self.config.slow_factor) * 2,
                    ) as u32
            } else {
                self.config.document_time
            };
            // A slow document starves the heartbeat: the lease runs late, and may expire.
            if !pause(&mut self.shutdown, self.config.scaled(time)).await {
                return Ok(JobEnd::Done);
            }
            if rng.chance(self.config.item_failure_rate) {
                self.fail_item(
                    claim,
                    &item,
                    attempt,
                    rng.between(0, FAILURES.len() as u64 - 1),
                )
                .await?;
                return Ok(JobEnd::Done);
            }
            protocol::complete_item(&self.pool, claim, &item).await?;
            self.stats.documents.fetch_add(1, Ordering::Relaxed);
        }
        if crash_after.is_some() {
            return Ok(JobEnd::Crashed);
        }
        if protocol::verify(&self.pool, claim).await? {
            // Where the platform's tables take no publication, the job waits at verifying.
            if !self.config.shape.publish {
                protocol::release(&self.pool, claim).await?;
                return Ok(JobEnd::Done);
            }
            match protocol::complete(&self.pool, claim, self.config.shape.capture).await? {
                Completion::Published => self.stats.published.fetch_add(1, Ordering::Relaxed),
                Completion::Drifted => self.stats.failures.fetch_add(1, Ordering::Relaxed),
            };
        }
        Ok(JobEnd::Done)
    }

    fn next_attempt(&self, item: &NextItem) -> u64 {
        let mut attempts = self.attempts.lock().unwrap_or_else(|e| e.into_inner());
        let count = attempts.entry(item.document_asset_id).or_insert(0);
        *count += 1;
        *count
    }

    async fn fail_item(
        &self,
        claim: &mut Claim,
        item: &NextItem,
        attempt: u64,
        which: u64,
    ) -> Result<(), StepError> {
        let (code, template) = FAILURES[which as usize];
        let short = &item.document_asset_id.simple().to_string()[..8];
        let message = template
            .replace("{doc}", short)
            .replace("{attempt}", &attempt.to_string());
        protocol::fail(&self.pool, claim, Some(item), code, &message).await?;
        self.stats.failures.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}
