//! Simulated document writers: each holds its space's mutation lease for a while and releases
//! it — unless it crashes, and its lease stays behind as an orphan until an operator removes it.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use sqlx::PgPool;
use tokio::sync::watch;

use super::chance::{key_of, roll};
use super::config::RunConfig;
use super::seed::SeededWriter;
use super::{Stats, pause};

pub(super) async fn run_writer(
    pool: PgPool,
    config: RunConfig,
    writer: SeededWriter,
    stats: Arc<Stats>,
    mut shutdown: watch::Receiver<bool>,
) {
    if writer.orphaned {
        return; // it crashed long before the rollout started
    }
    let mut rng = roll(config.seed, &[3, key_of(writer.lease_id.as_bytes())]);
    let hold = config.writer_hold.mul_f64(0.5 + rng.unit());
    if !pause(&mut shutdown, config.scaled(hold)).await {
        return;
    }
    if rng.chance(config.writer_crash_rate) {
        stats.writer_crashes.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let released = async {
        let mut tx = pool.begin().await?;
        crate::store::sql::query("DELETE FROM knowledge_space_mutation_leases WHERE id = $1")
            .bind(writer.lease_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await
    }
    .await;
    match released {
        Ok(_) => {
            stats.writer_releases.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => {
            tracing::warn!("simulated writer on {}: {e}", writer.knowledge_space_id);
            stats.record_error(&stats.writer_errors, e.to_string());
        }
    }
}
