//! Sliding-window progress rates, fed by successive snapshots.
//!
//! One snapshot says how far a job is; only a history of snapshots says how fast it moves. The
//! tracker keeps, per bootstrap and for the rollout as a whole, the completed-document count
//! at each database-clock instant within the window, and derives documents per minute.

use std::collections::{HashMap, VecDeque};

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// Samples older than the window are dropped; a rate needs samples at least this far apart.
const MIN_SPAN: Duration = Duration::seconds(1);

#[derive(Debug, Clone, Default)]
struct Series {
    samples: VecDeque<(DateTime<Utc>, i64)>,
}

impl Series {
    fn observe(&mut self, now: DateTime<Utc>, completed: i64, window: Duration) {
        if let Some(&(at, last)) = self.samples.back() {
            // A count that went down (a reset) or a clock that went back starts a new history.
            if completed < last || now < at {
                self.samples.clear();
            } else if now == at {
                self.samples.pop_back();
            }
        }
        self.samples.push_back((now, completed));
        while let Some(&(at, _)) = self.samples.front() {
            if now - at > window && self.samples.len() > 2 {
                self.samples.pop_front();
            } else {
                break;
            }
        }
    }

    fn rate_per_minute(&self) -> Option<f64> {
        let (first_at, first) = *self.samples.front()?;
        let (last_at, last) = *self.samples.back()?;
        let span = last_at - first_at;
        if span < MIN_SPAN {
            return None;
        }
        Some((last - first) as f64 * 60_000.0 / span.num_milliseconds() as f64)
    }
}

/// Per-bootstrap and rollout-wide progress history.
#[derive(Debug, Clone)]
pub struct ProgressTracker {
    window: Duration,
    jobs: HashMap<Uuid, Series>,
    rollout: Series,
}

impl ProgressTracker {
    pub fn new(window: Duration) -> Self {
        Self {
            window,
            jobs: HashMap::new(),
            rollout: Series::default(),
        }
    }

    /// Records one snapshot: `(bootstrap id, completed documents)` for every job in it. Jobs
    /// absent from the snapshot are forgotten.
    pub fn observe(&mut self, now: DateTime<Utc>, jobs: impl IntoIterator<Item = (Uuid, i32)>) {
        let mut seen = HashMap::with_capacity(self.jobs.len());
        let mut total = 0i64;
        for (id, completed) in jobs {
            let mut series = self.jobs.remove(&id).unwrap_or_default();
            series.observe(now, i64::from(completed), self.window);
            total += i64::from(completed);
            seen.insert(id, series);
        }
        self.jobs = seen;
        self.rollout.observe(now, total, self.window);
    }

    /// Documents per minute of one job over the window.
    pub fn rate_per_minute(&self, id: &Uuid) -> Option<f64> {
        self.jobs.get(id)?.rate_per_minute()
    }

    /// Documents per minute of the whole rollout over the window.
    pub fn rollout_rate_per_minute(&self) -> Option<f64> {
        self.rollout.rate_per_minute()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(1_800_000_000 + seconds, 0).expect("valid")
    }

    #[test]
    fn the_rate_is_measured_over_the_window() {
        let id = Uuid::from_u128(1);
        let mut tracker = ProgressTracker::new(Duration::minutes(5));
        tracker.observe(at(0), [(id, 0)]);
        assert_eq!(tracker.rate_per_minute(&id), None, "one sample has no rate");
        tracker.observe(at(30), [(id, 10)]);
        tracker.observe(at(60), [(id, 20)]);
        assert_eq!(tracker.rate_per_minute(&id), Some(20.0));
        assert_eq!(tracker.rollout_rate_per_minute(), Some(20.0));
    }

    #[test]
    fn old_samples_leave_the_window() {
        let id = Uuid::from_u128(1);
        let mut tracker = ProgressTracker::new(Duration::minutes(1));
        tracker.observe(at(0), [(id, 0)]);
        tracker.observe(at(60), [(id, 600)]);
        // Then it slows down: the fast first minute drops out of the window.
        tracker.observe(at(120), [(id, 610)]);
        tracker.observe(at(180), [(id, 620)]);
        assert_eq!(tracker.rate_per_minute(&id), Some(10.0));
    }

    #[test]
    fn a_count_that_goes_down_restarts_the_history() {
        let id = Uuid::from_u128(1);
        let mut tracker = ProgressTracker::new(Duration::minutes(5));
        tracker.observe(at(0), [(id, 50)]);
        tracker.observe(at(60), [(id, 10)]);
        assert_eq!(tracker.rate_per_minute(&id), None);
    }

    #[test]
    fn jobs_that_disappear_are_forgotten() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let mut tracker = ProgressTracker::new(Duration::minutes(5));
        tracker.observe(at(0), [(a, 0), (b, 0)]);
        tracker.observe(at(60), [(a, 6)]);
        assert_eq!(tracker.rate_per_minute(&a), Some(6.0));
        assert_eq!(tracker.rate_per_minute(&b), None);
    }
}
