//! When the next poll starts: the interval, start to start; slower when polls are expensive
//! (a polite observer keeps its share of the database small); backing off while it fails.

use std::time::{Duration, Instant};

pub const MIN_INTERVAL: Duration = Duration::from_millis(500);
pub const MAX_INTERVAL: Duration = Duration::from_secs(60);
/// Backoff ceiling while the database is unreachable.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A poll may take at most this share of the time between polls; beyond it, polls are spaced
/// out so that they do.
const DUTY: f64 = 0.1;
/// Weight of the newest poll in the smoothed poll time.
const SMOOTHING: f64 = 0.3;

#[derive(Debug, Clone)]
pub struct Cadence {
    interval: Duration,
    last_start: Option<Instant>,
    /// The measured start-to-start time of the last two polls.
    period: Option<Duration>,
    /// Smoothed duration of a successful poll.
    poll_time: Option<Duration>,
    failures: u32,
    /// When the last failed poll ended (backoff counts from there).
    failed_at: Option<Instant>,
}

impl Cadence {
    pub fn new(interval: Duration) -> Self {
        Self {
            interval: interval.clamp(MIN_INTERVAL, MAX_INTERVAL),
            last_start: None,
            period: None,
            poll_time: None,
            failures: 0,
            failed_at: None,
        }
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    pub fn set_interval(&mut self, interval: Duration) {
        self.interval = interval.clamp(MIN_INTERVAL, MAX_INTERVAL);
    }

    pub fn period(&self) -> Option<Duration> {
        self.period
    }

    pub fn poll_time(&self) -> Option<Duration> {
        self.poll_time
    }

    /// A poll starts now.
    pub fn started(&mut self, at: Instant) {
        if let Some(last) = self.last_start {
            self.period = Some(at.saturating_duration_since(last));
        }
        self.last_start = Some(at);
    }

    /// The poll that started last ended, after `took`.
    pub fn finished(&mut self, took: Duration, ok: bool, at: Instant) {
        if ok {
            self.failures = 0;
            self.failed_at = None;
            self.poll_time = Some(match self.poll_time {
                None => took,
                Some(before) => before.mul_f64(1.0 - SMOOTHING) + took.mul_f64(SMOOTHING),
            });
        } else {
            self.failures += 1;
            self.failed_at = Some(at);
        }
    }

    /// The time between poll starts: the interval, or more when polls are expensive.
    pub fn spacing(&self) -> Duration {
        let polite = self.poll_time.map_or(Duration::ZERO, |t| t.div_f64(DUTY));
        self.interval
            .max(polite)
            .min(MAX_INTERVAL.max(self.interval))
    }

    /// Polls are spaced out beyond the interval.
    pub fn slowed(&self) -> bool {
        self.spacing() > self.interval
    }

    /// When the next poll starts.
    pub fn next_start(&self, now: Instant) -> Instant {
        if let Some(failed_at) = self.failed_at {
            let backoff = Duration::from_secs(1) * 2u32.saturating_pow(self.failures.min(6) - 1);
            return failed_at + backoff.min(MAX_BACKOFF);
        }
        match self.last_start {
            Some(last) => last + self.spacing(),
            None => now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_start_an_interval_apart_however_long_they_take() {
        let t0 = Instant::now();
        let mut cadence = Cadence::new(Duration::from_secs(1));
        cadence.started(t0);
        cadence.finished(
            Duration::from_millis(80),
            true,
            t0 + Duration::from_millis(80),
        );
        assert_eq!(cadence.next_start(t0), t0 + Duration::from_secs(1));
    }

    #[test]
    fn a_new_interval_counts_from_the_last_start() {
        let t0 = Instant::now();
        let mut cadence = Cadence::new(Duration::from_secs(60));
        cadence.started(t0);
        cadence.finished(Duration::from_millis(5), true, t0);
        cadence.set_interval(Duration::from_secs(2));
        assert_eq!(cadence.next_start(t0), t0 + Duration::from_secs(2));
    }

    #[test]
    fn expensive_polls_are_spaced_out() {
        let t0 = Instant::now();
        let mut cadence = Cadence::new(Duration::from_secs(1));
        cadence.started(t0);
        cadence.finished(Duration::from_millis(400), true, t0);
        assert!(cadence.slowed());
        assert_eq!(cadence.spacing(), Duration::from_secs(4));
    }

    #[test]
    fn failures_back_off_from_the_failure() {
        let t0 = Instant::now();
        let mut cadence = Cadence::new(Duration::from_secs(1));
        for n in 1..=3 {
            cadence.started(t0);
            cadence.finished(Duration::ZERO, false, t0);
            assert_eq!(
                cadence.next_start(t0),
                t0 + Duration::from_secs(1 << (n - 1))
            );
        }
    }
}
