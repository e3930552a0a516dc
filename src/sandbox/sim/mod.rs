//! The rollout simulator: plays the platform's side — bootstrap workers and document writers —
//! over real SQL, following the worker protocol (domain contract §1, see [`crate::domain`]).
//! `demo`, `simulate` and the end-to-end tests run on it.
//!
//! A run seeds tenants × spaces × documents, lets migration 0009 create the bootstrap markers
//! as in production (`seed`), then runs workers and document writers with faults: failed
//! documents, worker crashes (expired leases, reclaims), slow documents (late heartbeats) and
//! writers that crash and leave orphan leases. With the defaults a `demo` shows failures,
//! blocked spaces, orphans, expired leases and late heartbeats within a minute or two; "stuck"
//! (ten quiet minutes) takes longer. Every random choice derives from `--seed` (`chance`).
//!
//! `simulate` runs the same against a given database (a staging rehearsal, benchmark load): it
//! refuses to seed a database that already holds a ledger unless told `--no-seed` or
//! `--seed-anyway`. Worker and writer errors are counted in its summaries with the last one;
//! when every worker keeps failing (a schema it does not expect, say) it stops with that error.

mod chance;
mod config;
mod seed;
mod shape;
mod worker;
mod writer;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sqlx::PgPool;
use tokio::sync::watch;
use tokio::task::JoinSet;

pub use config::{RunConfig, SeedConfig};
pub use seed::{SeedError, SeedReport, SeededWriter, seed};
pub use shape::PlatformShape;

/// Counters of what the simulated platform did.
#[derive(Debug, Default)]
pub struct Stats {
    pub claims: AtomicU64,
    /// Claims of jobs whose previous worker's lease had expired.
    pub reclaims: AtomicU64,
    pub captures: AtomicU64,
    pub blocked_captures: AtomicU64,
    pub documents: AtomicU64,
    pub failures: AtomicU64,
    pub published: AtomicU64,
    pub worker_crashes: AtomicU64,
    /// Fenced writes that failed: the job was canceled or reclaimed behind the worker's back.
    pub fenced_out: AtomicU64,
    pub writer_releases: AtomicU64,
    pub writer_crashes: AtomicU64,
    /// Database errors of workers and writers (never hidden: a schema the simulator does not
    /// expect shows here, not as jobs that quietly stop).
    pub worker_errors: AtomicU64,
    pub writer_errors: AtomicU64,
    /// Workers whose last attempts all failed.
    pub workers_failing: AtomicU64,
    /// The most recent error, as the database said it.
    last_error: std::sync::Mutex<Option<String>>,
}

impl Stats {
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    pub(crate) fn record_error(&self, counter: &AtomicU64, error: String) {
        counter.fetch_add(1, Ordering::Relaxed);
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
    }

    pub(crate) fn last_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// A running simulation. [`Simulation::stop`] ends it; dropping it signals the tasks to stop.
pub struct Simulation {
    shutdown: watch::Sender<bool>,
    tasks: JoinSet<()>,
    stats: Arc<Stats>,
    workers: u32,
    /// Closed once the tasks end, before the database may go away: a transaction a task left
    /// is rolled back then, not when the server is already stopping.
    pool: PgPool,
}

impl Simulation {
    /// Starts the workers, and a writer task for each seeded writer.
    pub fn start(pool: PgPool, config: RunConfig, writers: Vec<SeededWriter>) -> Self {
        let (shutdown, receiver) = watch::channel(false);
        let stats = Arc::new(Stats::default());
        let attempts = worker::Attempts::default();
        let mut tasks = JoinSet::new();
        for index in 0..config.workers {
            let worker = worker::Worker {
                pool: pool.clone(),
                config: config.clone(),
                stats: stats.clone(),
                attempts: attempts.clone(),
                shutdown: receiver.clone(),
                index,
            };
            tasks.spawn(worker.run());
        }
        for writer in writers {
            tasks.spawn(writer::run_writer(
                pool.clone(),
                config.clone(),
                writer,
                stats.clone(),
                receiver.clone(),
            ));
        }
        Self {
            shutdown,
            tasks,
            stats,
            workers: config.workers,
            pool,
        }
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Every worker keeps failing (each of its last attempts was a database error): the
    /// rollout cannot move, and saying so beats a summary that only stops changing.
    pub(crate) fn every_worker_failing(&self) -> bool {
        self.workers > 0 && Stats::get(&self.stats.workers_failing) >= u64::from(self.workers)
    }

    /// Signals every task and waits for them (a worker mid-step finishes that step).
    pub async fn stop(mut self) {
        let _ = self.shutdown.send(true);
        let drain = async { while self.tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(Duration::from_secs(10), drain)
            .await
            .is_err()
        {
            self.tasks.abort_all();
        }
        crate::store::close_pool(&self.pool).await;
    }
}

impl Drop for Simulation {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}

/// Sleeps unless shutdown is signalled first; returns whether to carry on.
async fn pause(shutdown: &mut watch::Receiver<bool>, duration: Duration) -> bool {
    if *shutdown.borrow() {
        return false;
    }
    tokio::select! {
        _ = tokio::time::sleep(duration) => !*shutdown.borrow(),
        _ = shutdown.changed() => false,
    }
}
