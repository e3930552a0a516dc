//! When the next poll starts: the interval, start to start; slower when polls are expensive
//! (a polite observer keeps its share of the database small); backing off while it fails.

use std::time::{Duration, Instant};

pub const MIN_INTERVAL: Duration = Duration::from_millis(500);
pub const MAX_INTERVAL: Duration = Duration::from_secs(60);
/// The intervals `+` and `-` step through (from an interval between two, the next one).
pub const INTERVAL_STEPS: [Duration; 8] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(5),
    Duration::from_secs(10),
    Duration::from_secs(15),
    Duration::from_secs(30),
    Duration::from_secs(60),
];

/// The next step below `interval` (polling more often), or the shortest.
pub fn faster(interval: Duration) -> Duration {
    INTERVAL_STEPS
        .iter()
        .rev()
        .find(|step| **step < interval)
        .copied()
        .unwrap_or(MIN_INTERVAL)
}

/// The next step above `interval` (polling less often), or the longest.
pub fn slower(interval: Duration) -> Duration {
    INTERVAL_STEPS
        .iter()
        .find(|step| **step > interval)
        .copied()
        .unwrap_or(MAX_INTERVAL)
}

/// The steps a poll's cost is shown in: 1, 2 and 5 of each decade, from "under 1 ms" (the
/// first) to 50 s. A rounded figure that moves only when the cost does (not its jitter) keeps
/// the header still, so an idle console writes nothing.
const POLL_TIME_STEPS_US: [u64; 16] = [
    500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000,
    2_000_000, 5_000_000, 10_000_000, 20_000_000, 50_000_000,
];

/// How far past the midpoint between two steps the cost must go to move the figure.
const STEP_HYSTERESIS: f64 = 1.5;

/// The step to show for a smoothed poll time of `time`, `shown` being the step shown now.
fn shown_step(shown: Option<Duration>, time: Duration) -> Duration {
    let t = time.as_secs_f64().max(1e-6);
    let distance = |d: &Duration| (d.as_secs_f64().ln() - t.ln()).abs();
    let nearest = POLL_TIME_STEPS_US
        .iter()
        .map(|us| Duration::from_micros(*us))
        .min_by(|a, b| distance(a).total_cmp(&distance(b)))
        .unwrap_or(time);
    match shown {
        Some(shown) if shown != nearest => {
            let midpoint = (shown.as_secs_f64() * nearest.as_secs_f64()).sqrt();
            let past = if nearest > shown {
                t > midpoint * STEP_HYSTERESIS
            } else {
                t < midpoint / STEP_HYSTERESIS
            };
            if past { nearest } else { shown }
        }
        _ => nearest,
    }
}

/// Backoff ceiling while the database is unreachable.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A poll may take at most this share of the time between polls; beyond it, polls are spaced
/// out so that they do.
const DUTY: f64 = 0.1;
/// Weight of the newest poll in the smoothed poll time.
const SMOOTHING: f64 = 0.3;

#[derive(Debug, Clone)]
pub(crate) struct Cadence {
    interval: Duration,
    last_start: Option<Instant>,
    /// The measured start-to-start time of the last two polls.
    period: Option<Duration>,
    /// Smoothed duration of a successful poll.
    poll_time: Option<Duration>,
    /// The poll time as shown: it follows the smoothed time only when that moves by more than
    /// a third, so the header does not flicker (and an idle console writes nothing).
    poll_time_shown: Option<Duration>,
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
            poll_time_shown: None,
            failures: 0,
            failed_at: None,
        }
    }

    pub(crate) fn interval(&self) -> Duration {
        self.interval
    }

    /// A new interval; the period measured under the old one no longer says anything.
    pub(crate) fn set_interval(&mut self, interval: Duration) {
        self.interval = interval.clamp(MIN_INTERVAL, MAX_INTERVAL);
        self.period = None;
    }

    pub(crate) fn period(&self) -> Option<Duration> {
        self.period
    }

    /// The poll time to show (see `poll_time_shown`).
    pub(crate) fn shown_poll_time(&self) -> Option<Duration> {
        self.poll_time_shown
    }

    /// A poll starts now.
    pub(crate) fn started(&mut self, at: Instant) {
        if let Some(last) = self.last_start {
            self.period = Some(at.saturating_duration_since(last));
        }
        self.last_start = Some(at);
    }

    /// The poll that started last ended, after `took`. A first load (`steady` false) is not a
    /// measure of what polls cost.
    pub(crate) fn finished(&mut self, took: Duration, ok: bool, steady: bool, at: Instant) {
        if ok {
            self.failures = 0;
            self.failed_at = None;
            if !steady {
                return;
            }
            let smoothed = match self.poll_time {
                None => took,
                Some(before) => before.mul_f64(1.0 - SMOOTHING) + took.mul_f64(SMOOTHING),
            };
            self.poll_time = Some(smoothed);
            self.poll_time_shown = Some(shown_step(self.poll_time_shown, smoothed));
        } else {
            self.failures += 1;
            self.failed_at = Some(at);
        }
    }

    /// The time between poll starts: the interval, or more when polls are expensive.
    pub(crate) fn spacing(&self) -> Duration {
        let polite = self.poll_time.map_or(Duration::ZERO, |t| t.div_f64(DUTY));
        self.interval
            .max(polite)
            .min(MAX_INTERVAL.max(self.interval))
    }

    /// Polls are spaced out beyond the interval.
    pub(crate) fn slowed(&self) -> bool {
        self.spacing() > self.interval
    }

    /// When the next poll starts.
    pub(crate) fn next_start(&self, now: Instant) -> Instant {
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
    fn plus_and_minus_land_on_the_documented_steps() {
        let secs = Duration::from_secs_f64;
        let mut interval = MAX_INTERVAL;
        let mut seen = vec![interval];
        while interval > MIN_INTERVAL {
            interval = faster(interval);
            seen.push(interval);
        }
        let mut down = INTERVAL_STEPS.to_vec();
        down.reverse();
        assert_eq!(seen, down);
        assert_eq!(faster(MIN_INTERVAL), MIN_INTERVAL);
        assert_eq!(slower(MAX_INTERVAL), MAX_INTERVAL);
        // From an interval between two steps (`--interval 3`), the next one either way.
        assert_eq!(faster(secs(3.0)), secs(2.0));
        assert_eq!(slower(secs(3.0)), secs(5.0));
        assert_eq!(MIN_INTERVAL, INTERVAL_STEPS[0]);
        assert_eq!(MAX_INTERVAL, INTERVAL_STEPS[INTERVAL_STEPS.len() - 1]);
    }

    #[test]
    fn polls_start_an_interval_apart_however_long_they_take() {
        let t0 = Instant::now();
        let mut cadence = Cadence::new(Duration::from_secs(1));
        cadence.started(t0);
        let took = Duration::from_millis(80);
        cadence.finished(took, true, true, t0 + took);
        assert_eq!(cadence.next_start(t0), t0 + Duration::from_secs(1));
    }

    #[test]
    fn a_new_interval_counts_from_the_last_start() {
        let t0 = Instant::now();
        let mut cadence = Cadence::new(Duration::from_secs(60));
        cadence.started(t0);
        cadence.finished(Duration::from_millis(5), true, true, t0);
        cadence.set_interval(Duration::from_secs(2));
        assert_eq!(cadence.next_start(t0), t0 + Duration::from_secs(2));
    }

    #[test]
    fn expensive_polls_are_spaced_out() {
        let t0 = Instant::now();
        let mut cadence = Cadence::new(Duration::from_secs(1));
        cadence.started(t0);
        cadence.finished(Duration::from_millis(400), true, true, t0);
        assert!(cadence.slowed());
        let mut after_load = Cadence::new(Duration::from_secs(1));
        after_load.started(t0);
        after_load.finished(Duration::from_millis(400), true, false, t0);
        assert!(
            !after_load.slowed(),
            "a first load does not slow polling down"
        );
        assert!(cadence.slowed());
        assert_eq!(cadence.spacing(), Duration::from_secs(4));
    }

    #[test]
    fn the_poll_time_shown_is_a_step_that_ignores_jitter() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut cadence = Cadence::new(Duration::from_secs(1));
        cadence.finished(ms(3), true, true, t0);
        assert_eq!(cadence.shown_poll_time(), Some(ms(2)));
        // Jitter around the midpoint of 2 and 5 ms (3.2 ms) moves nothing.
        for took in [2, 4, 3, 2, 4, 3, 4, 2, 4] {
            cadence.finished(ms(took), true, true, t0);
            assert_eq!(cadence.shown_poll_time(), Some(ms(2)), "after {took} ms");
        }
        for _ in 0..10 {
            cadence.finished(ms(30), true, true, t0);
        }
        assert_eq!(cadence.shown_poll_time(), Some(ms(20)));
        let mut fast = Cadence::new(Duration::from_secs(1));
        for _ in 0..5 {
            fast.finished(Duration::from_micros(300), true, true, t0);
        }
        assert_eq!(
            fast.shown_poll_time(),
            Some(Duration::from_micros(500)),
            "under 1 ms"
        );
    }

    #[test]
    fn failures_back_off_from_the_failure() {
        let t0 = Instant::now();
        let mut cadence = Cadence::new(Duration::from_secs(1));
        for n in 1..=3 {
            cadence.started(t0);
            cadence.finished(Duration::ZERO, false, true, t0);
            assert_eq!(
                cadence.next_start(t0),
                t0 + Duration::from_secs(1 << (n - 1))
            );
        }
    }
}
