//! The rollout's pace over the session: documents per minute and the readable share, kept in
//! at most [`POINTS`] points however long the console runs.
//!
//! Points start [`FIRST_BUCKET`] apart; when the history is full, neighbours are merged and the
//! spacing doubles, so the whole session stays in view at a coarser grain — a slowdown of the
//! whole fleet an hour ago and one a minute ago both show.

use chrono::{DateTime, Duration, Utc};

/// The most points kept.
pub const POINTS: usize = 64;
/// The spacing of points at the start of a session.
pub const FIRST_BUCKET: Duration = Duration::seconds(10);
/// Readings in the session's first minute are left out: a rate over a few seconds is noise
/// that would set the chart's scale.
pub const WARM_UP: Duration = Duration::seconds(60);

/// One point of the pace history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacePoint {
    pub at: DateTime<Utc>,
    /// The mean of the readings in the point's bucket: a dip inside it still shows.
    pub documents_per_minute: f64,
    /// 0.0–1.0, the latest in the bucket.
    pub readable_share: f64,
    /// Readings averaged into it.
    readings: u32,
}

/// The pace history.
#[derive(Debug, Clone, PartialEq)]
pub struct Pace {
    points: Vec<PacePoint>,
    bucket: Duration,
    /// The first reading of the session (see [`WARM_UP`]).
    first: Option<DateTime<Utc>>,
}

impl Default for Pace {
    fn default() -> Self {
        Self {
            points: Vec::new(),
            bucket: FIRST_BUCKET,
            first: None,
        }
    }
}

impl Pace {
    /// Records the rollout at `at`. A reading within the last point's bucket is averaged into
    /// it; a clock that went back starts over.
    pub fn record(&mut self, at: DateTime<Utc>, documents_per_minute: f64, readable_share: f64) {
        if self.points.last().is_some_and(|last| at < last.at)
            || self.first.is_some_and(|first| at < first)
        {
            *self = Self::default();
        }
        let first = *self.first.get_or_insert(at);
        if at - first < WARM_UP {
            return;
        }
        let rate = documents_per_minute.max(0.0);
        let share = readable_share.clamp(0.0, 1.0);
        match self.points.last_mut() {
            // Buckets start at their first reading.
            Some(last) if at - last.at < self.bucket => {
                let n = f64::from(last.readings);
                last.documents_per_minute = (last.documents_per_minute * n + rate) / (n + 1.0);
                last.readable_share = share;
                last.readings += 1;
            }
            _ => self.points.push(PacePoint {
                at,
                documents_per_minute: rate,
                readable_share: share,
                readings: 1,
            }),
        }
        if self.points.len() > POINTS {
            self.coarsen();
        }
    }

    /// Merges neighbours (averaged, the earlier instant kept) and doubles the spacing.
    fn coarsen(&mut self) {
        self.points = self
            .points
            .chunks(2)
            .map(|pair| {
                let readings: u32 = pair.iter().map(|p| p.readings).sum();
                let weighted = pair
                    .iter()
                    .map(|p| p.documents_per_minute * f64::from(p.readings))
                    .sum::<f64>();
                PacePoint {
                    at: pair[0].at,
                    documents_per_minute: weighted / f64::from(readings.max(1)),
                    readable_share: pair[pair.len() - 1].readable_share,
                    readings,
                }
            })
            .collect();
        self.bucket = self.bucket * 2;
    }

    pub fn points(&self) -> &[PacePoint] {
        &self.points
    }

    /// The spacing of points now.
    pub fn bucket(&self) -> Duration {
        self.bucket
    }

    /// Documents per minute over the whole session in `width` columns (fewer while the
    /// session has fewer points), scaled to their maximum.
    pub fn rate_sparkline(&self, width: usize, ascii: bool) -> String {
        let values = self.resampled(width, |p| p.documents_per_minute);
        let top = values.iter().copied().fold(0.0, f64::max);
        sparkline(&values, top, ascii)
    }

    /// The readable share over the whole session in `width` columns, on a fixed 0–100 % scale.
    pub fn readable_sparkline(&self, width: usize, ascii: bool) -> String {
        let values = self.resampled(width, |p| p.readable_share);
        sparkline(&values, 1.0, ascii)
    }

    /// The points spread over at most `width` columns, each column the mean of its points:
    /// the session's start stays in view.
    fn resampled(&self, width: usize, value: impl Fn(&PacePoint) -> f64) -> Vec<f64> {
        let n = self.points.len();
        let columns = width.min(n);
        (0..columns)
            .map(|column| {
                let (from, to) = (
                    column * n / columns,
                    ((column + 1) * n / columns).max(column * n / columns + 1),
                );
                let slice = &self.points[from..to.min(n)];
                slice.iter().map(&value).sum::<f64>() / slice.len() as f64
            })
            .collect()
    }
}

/// Eight levels from nothing to `top`; a value of zero is the lowest glyph, so a stall reads
/// as a flat floor rather than a gap.
fn sparkline(values: &[f64], top: f64, ascii: bool) -> String {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    const ASCII: [char; 8] = ['_', '.', ':', '-', '=', '+', '*', '#'];
    let glyphs = if ascii { ASCII } else { BLOCKS };
    values
        .iter()
        .map(|v| {
            let level = if top > 0.0 {
                ((v / top) * 7.0).round().clamp(0.0, 7.0) as usize
            } else {
                0
            };
            glyphs[level]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).expect("time")
    }

    #[test]
    fn the_first_minute_is_left_out_and_a_bucket_averages_its_readings() {
        let mut pace = Pace::default();
        pace.record(at(0), 500.0, 0.0);
        pace.record(at(30), 400.0, 0.0);
        assert!(pace.points().is_empty(), "warming up");
        pace.record(at(60), 10.0, 0.1);
        pace.record(at(64), 30.0, 0.2);
        pace.record(at(72), 30.0, 0.3);
        assert_eq!(pace.points().len(), 2);
        assert_eq!(pace.points()[0].documents_per_minute, 20.0);
        assert_eq!(pace.points()[0].readable_share, 0.2);
        assert_eq!(pace.points()[0].at, at(60));
    }

    #[test]
    fn a_long_session_stays_bounded_and_keeps_its_start() {
        let mut pace = Pace::default();
        // Ten hours of polls every two seconds.
        for i in 0..18_000 {
            pace.record(at(i * 2), (i % 100) as f64, i as f64 / 18_000.0);
        }
        assert!(pace.points().len() <= POINTS, "{}", pace.points().len());
        assert_eq!(
            pace.points()[0].at,
            at(60),
            "the session's start is still in view"
        );
        assert!(pace.bucket() >= Duration::minutes(10), "{}", pace.bucket());
    }

    #[test]
    fn the_sparklines_span_the_session_and_show_a_stall_as_a_floor() {
        let mut pace = Pace::default();
        pace.record(at(0), 0.0, 0.0);
        for (i, rate) in [40.0, 80.0, 80.0, 0.0, 0.0].into_iter().enumerate() {
            pace.record(at(60 + i as i64 * 10), rate, i as f64 / 4.0);
        }
        assert_eq!(pace.rate_sparkline(8, false), "▅██▁▁");
        // Three columns for five points: each column the mean of its points, from the start.
        assert_eq!(pace.rate_sparkline(3, true), "=#_");
        assert_eq!(pace.readable_sparkline(5, false), "▁▃▅▆█");
    }
}
