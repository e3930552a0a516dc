//! The simulator's knobs. The defaults make a `demo` show every state — rebuilds, failures,
//! expired worker leases, blocked spaces and orphan mutation leases — within two minutes.

use std::time::Duration;

/// Shape of the seeded rollout.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedConfig {
    pub seed: u64,
    pub tenants: u32,
    pub spaces_per_tenant: u32,
    /// Share of spaces with no documents at all (some still get a marker via legacy rows).
    pub empty_share: f64,
    /// Share of spaces that are large.
    pub large_share: f64,
    /// Documents in a normal space, and in a large one.
    pub documents: (u32, u32),
    pub large_documents: (u32, u32),
    /// Share of spaces already on the publication model (a head exists: no marker).
    pub migrated_share: f64,
    /// Share of spaces with legacy NULL-generation rows.
    pub legacy_share: f64,
    /// Share of unmigrated spaces whose document writer holds a mutation lease at the start.
    pub writer_share: f64,
    /// Share of those writers that crashed long ago and left an orphan lease.
    pub orphan_share: f64,
}

impl Default for SeedConfig {
    fn default() -> Self {
        Self {
            seed: 2026,
            tenants: 6,
            spaces_per_tenant: 20,
            empty_share: 0.08,
            large_share: 0.12,
            documents: (5, 80),
            large_documents: (200, 500),
            migrated_share: 0.1,
            legacy_share: 0.5,
            writer_share: 0.12,
            orphan_share: 0.35,
        }
    }
}

/// Behaviour of the simulated platform once the rollout runs.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    pub seed: u64,
    pub workers: u32,
    /// Worker lease length; heartbeats renew it.
    pub lease_ttl: Duration,
    /// Rebuild time of one document.
    pub document_time: Duration,
    /// Probability that one rebuild attempt of a document fails (and fails its job).
    pub item_failure_rate: f64,
    /// Probability that a worker crashes while holding a job (stops heartbeating).
    pub worker_crash_rate: f64,
    /// Probability that a document is slow, and how many times slower.
    pub slow_document_rate: f64,
    pub slow_factor: u32,
    /// How long a live document writer holds its lease …
    pub writer_hold: Duration,
    /// … and the probability that it crashes instead of releasing it (an orphan).
    pub writer_crash_rate: f64,
    /// Every duration above is multiplied by this (0.5 runs twice as fast).
    pub time_scale: f64,
    /// What the platform's tables let the workers do (everything, on the stand-in).
    pub shape: super::PlatformShape,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            seed: 2026,
            workers: 4,
            lease_ttl: Duration::from_secs(12),
            document_time: Duration::from_millis(60),
            item_failure_rate: 0.0015,
            worker_crash_rate: 0.04,
            slow_document_rate: 0.004,
            slow_factor: 120,
            writer_hold: Duration::from_secs(40),
            writer_crash_rate: 0.25,
            time_scale: 1.0,
            shape: super::PlatformShape::default(),
        }
    }
}

impl RunConfig {
    /// A configuration with no faults at all (tests, and `--no-faults`).
    pub fn fault_free(self) -> Self {
        Self {
            item_failure_rate: 0.0,
            worker_crash_rate: 0.0,
            slow_document_rate: 0.0,
            writer_crash_rate: 0.0,
            ..self
        }
    }

    pub(crate) fn scaled(&self, duration: Duration) -> Duration {
        duration.mul_f64(self.time_scale.max(0.0))
    }
}
