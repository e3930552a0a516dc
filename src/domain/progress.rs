//! Progress rates from a bounded history.
//!
//! One snapshot says how far a job is; only a history says how fast it moves. A [`Series`]
//! keeps at most [`SAMPLES`] samples of (database-clock instant, completed documents) spread
//! over the rate window, so memory stays fixed however long the console runs and however often
//! it polls. The model keeps one series per running job (fed only when the job changes) and
//! one for the whole rollout (fed once per poll).

use std::collections::VecDeque;

use chrono::{DateTime, Duration, Utc};

/// The most samples one series keeps.
pub(crate) const SAMPLES: usize = 8;
/// A rate needs samples at least this far apart.
const MIN_SPAN: Duration = Duration::seconds(1);

/// A progress sample: at this instant, this many documents were done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub(crate) at: DateTime<Utc>,
    pub(crate) completed: i64,
}

impl Sample {
    /// Documents per minute from this sample to `later`; `None` over less than a second.
    pub(crate) fn rate_to(&self, later: Sample) -> Option<f64> {
        let span = later.at - self.at;
        if span < MIN_SPAN {
            return None;
        }
        Some((later.completed - self.completed) as f64 * 60_000.0 / span.num_milliseconds() as f64)
    }
}

/// At most [`SAMPLES`] samples spanning about the rate window.
#[derive(Debug, Clone, Default)]
pub(crate) struct Series {
    samples: VecDeque<Sample>,
}

impl Series {
    /// Records `completed` at `now`. Samples closer together than a share of the window are
    /// merged (the newest value wins), and samples older than the window leave.
    pub(crate) fn observe(&mut self, now: DateTime<Utc>, completed: i64, window: Duration) {
        let sample = Sample { at: now, completed };
        if let Some(last) = self.samples.back() {
            // A count that went down (a reset) or a clock that went back starts a new history.
            if completed < last.completed || now < last.at {
                self.samples.clear();
            }
        }
        let spacing = window / SAMPLES as i32;
        let len = self.samples.len();
        if len >= 2 && now - self.samples[len - 2].at < spacing {
            // The previous sample was only a waypoint: replace it with the newer value.
            self.samples.pop_back();
        }
        self.samples.push_back(sample);
        while self.samples.len() > SAMPLES
            || (self.samples.len() > 2 && self.samples.front().is_some_and(|s| now - s.at > window))
        {
            self.samples.pop_front();
        }
    }

    /// The oldest sample kept.
    pub(crate) fn first(&self) -> Option<Sample> {
        self.samples.front().copied()
    }

    /// Documents per minute between the oldest and the newest sample.
    pub(crate) fn rate_per_minute(&self) -> Option<f64> {
        let first = self.samples.front()?;
        first.rate_to(*self.samples.back()?)
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
        let mut series = Series::default();
        let window = Duration::minutes(5);
        series.observe(at(0), 0, window);
        assert_eq!(series.rate_per_minute(), None, "one sample has no rate");
        series.observe(at(60), 20, window);
        series.observe(at(120), 40, window);
        assert_eq!(series.rate_per_minute(), Some(20.0));
    }

    #[test]
    fn old_samples_leave_the_window() {
        let mut series = Series::default();
        let window = Duration::minutes(1);
        series.observe(at(0), 0, window);
        series.observe(at(60), 600, window);
        // Then it slows down: the fast first minute drops out of the window.
        series.observe(at(120), 610, window);
        series.observe(at(180), 620, window);
        assert_eq!(series.rate_per_minute(), Some(10.0));
    }

    #[test]
    fn a_count_that_goes_down_restarts_the_history() {
        let mut series = Series::default();
        let window = Duration::minutes(5);
        series.observe(at(0), 50, window);
        series.observe(at(60), 10, window);
        assert_eq!(series.rate_per_minute(), None);
    }

    #[test]
    fn a_series_stays_bounded_however_often_it_is_fed() {
        let mut series = Series::default();
        let window = Duration::minutes(5);
        for second in 0..3_600 {
            series.observe(at(second), second, window);
            assert!(series.samples.len() <= SAMPLES);
        }
        // One document a second, measured over (about) the window.
        let rate = series.rate_per_minute().expect("rate");
        assert!((rate - 60.0).abs() < 1e-9, "{rate}");
        let span = at(3_599) - series.first().expect("first").at;
        assert!(span <= window && span >= window / 2, "{span}");
    }
}
