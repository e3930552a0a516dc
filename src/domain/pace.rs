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

/// One point of the pace history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PacePoint {
    pub at: DateTime<Utc>,
    pub documents_per_minute: f64,
    /// 0.0–1.0.
    pub readable_share: f64,
}

/// The pace history.
#[derive(Debug, Clone, PartialEq)]
pub struct Pace {
    points: Vec<PacePoint>,
    bucket: Duration,
}

impl Default for Pace {
    fn default() -> Self {
        Self {
            points: Vec::new(),
            bucket: FIRST_BUCKET,
        }
    }
}

impl Pace {
    /// Records the rollout at `at`. A reading within the last point's bucket replaces it (the
    /// latest value wins); a clock that went back starts over.
    pub fn record(&mut self, at: DateTime<Utc>, documents_per_minute: f64, readable_share: f64) {
        let point = PacePoint {
            at,
            documents_per_minute: documents_per_minute.max(0.0),
            readable_share: readable_share.clamp(0.0, 1.0),
        };
        match self.points.last() {
            Some(last) if at < last.at => {
                *self = Self::default();
                self.points.push(point);
            }
            // Buckets start at their first reading.
            Some(last) if at - last.at < self.bucket => {
                *self.points.last_mut().expect("a last point") = PacePoint {
                    at: last.at,
                    ..point
                };
            }
            _ => self.points.push(point),
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
                let n = pair.len() as f64;
                PacePoint {
                    at: pair[0].at,
                    documents_per_minute: pair.iter().map(|p| p.documents_per_minute).sum::<f64>()
                        / n,
                    readable_share: pair.iter().map(|p| p.readable_share).sum::<f64>() / n,
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

    /// The last `width` documents-per-minute values as a sparkline, scaled to their maximum.
    pub fn rate_sparkline(&self, width: usize, ascii: bool) -> String {
        let values: Vec<f64> = self.tail(width).map(|p| p.documents_per_minute).collect();
        let top = values.iter().copied().fold(0.0, f64::max);
        sparkline(&values, top, ascii)
    }

    /// The last `width` readable shares as a sparkline, on a fixed 0–100 % scale.
    pub fn readable_sparkline(&self, width: usize, ascii: bool) -> String {
        let values: Vec<f64> = self.tail(width).map(|p| p.readable_share).collect();
        sparkline(&values, 1.0, ascii)
    }

    fn tail(&self, width: usize) -> impl Iterator<Item = &PacePoint> {
        self.points
            .iter()
            .skip(self.points.len().saturating_sub(width))
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
    fn readings_within_a_bucket_replace_the_last_point() {
        let mut pace = Pace::default();
        pace.record(at(0), 10.0, 0.1);
        pace.record(at(4), 20.0, 0.2);
        pace.record(at(12), 30.0, 0.3);
        assert_eq!(pace.points().len(), 2);
        assert_eq!(pace.points()[0].documents_per_minute, 20.0);
        assert_eq!(pace.points()[0].at, at(0));
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
            at(0),
            "the session's start is still in view"
        );
        assert!(pace.bucket() >= Duration::minutes(10), "{}", pace.bucket());
    }

    #[test]
    fn the_sparklines_show_a_stall_as_a_floor() {
        let mut pace = Pace::default();
        for (i, rate) in [40.0, 80.0, 80.0, 0.0, 0.0].into_iter().enumerate() {
            pace.record(at(i as i64 * 10), rate, i as f64 / 4.0);
        }
        assert_eq!(pace.rate_sparkline(8, false), "▅██▁▁");
        assert_eq!(pace.rate_sparkline(3, true), "#__");
        assert_eq!(pace.readable_sparkline(5, false), "▁▃▅▆█");
    }
}
