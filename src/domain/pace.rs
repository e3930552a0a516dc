//! The rollout's pace over the session: documents per minute and the readable share, kept in
//! at most [`POINTS`] points however long the console runs.
//!
//! The rate of a point is the documents completed between polls over the time between them,
//! not the header's rate over a five-minute window: a fleet that stops shows as a floor at the
//! next point, before the header's number has come down.
//!
//! Points start [`FIRST_BUCKET`] apart; when the history is full, neighbours are merged and the
//! spacing doubles, so the whole session stays in view at a coarser grain — a slowdown of the
//! whole fleet an hour ago and one a minute ago both show.

use chrono::{DateTime, Duration, Utc};

/// The most points kept.
pub(crate) const POINTS: usize = 64;
/// The spacing of points at the start of a session.
pub(crate) const FIRST_BUCKET: Duration = Duration::seconds(10);
/// Readings in the session's first minute are left out: a rate over a few seconds is noise
/// that would set the chart's scale.
pub(crate) const WARM_UP: Duration = Duration::seconds(60);

/// One point of the pace history.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PacePoint {
    pub(crate) at: DateTime<Utc>,
    /// 0.0–1.0, the latest in the bucket.
    pub(crate) readable_share: f64,
    /// Documents completed, and minutes elapsed, over the polls in the bucket.
    documents: f64,
    minutes: f64,
}

impl PacePoint {
    /// Documents per minute over the point's bucket: a dip inside it still counts.
    pub(crate) fn documents_per_minute(&self) -> f64 {
        if self.minutes > 0.0 {
            self.documents / self.minutes
        } else {
            0.0
        }
    }
}

/// The pace history.
#[derive(Debug, Clone, PartialEq)]
pub struct Pace {
    points: Vec<PacePoint>,
    bucket: Duration,
    /// The first reading of the session (see [`WARM_UP`]).
    first: Option<DateTime<Utc>>,
    /// The previous reading: its instant and the documents completed then.
    last: Option<(DateTime<Utc>, i64)>,
}

impl Default for Pace {
    fn default() -> Self {
        Self {
            points: Vec::new(),
            bucket: FIRST_BUCKET,
            first: None,
            last: None,
        }
    }
}

impl Pace {
    /// Records the rollout at `at`: `completed` documents in all, `readable_share` readable.
    /// The documents since the previous reading count toward the current point (a count that
    /// went down — a job reset — counts as none); a clock that went back starts over.
    pub fn record(&mut self, at: DateTime<Utc>, completed: i64, readable_share: f64) {
        if self.last.is_some_and(|(last, _)| at < last) {
            *self = Self::default();
        }
        let first = *self.first.get_or_insert(at);
        let previous = self.last.replace((at, completed));
        // The first minute only sets the baseline: the first poll loads the whole ledger.
        let Some((since, before)) = previous.filter(|_| at - first >= WARM_UP) else {
            return;
        };
        let documents = (completed - before).max(0) as f64;
        let minutes = (at - since).num_milliseconds() as f64 / 60_000.0;
        let share = readable_share.clamp(0.0, 1.0);
        match self.points.last_mut() {
            // Buckets start at their first reading.
            Some(point) if at - point.at < self.bucket => {
                point.documents += documents;
                point.minutes += minutes;
                point.readable_share = share;
            }
            _ => self.points.push(PacePoint {
                at,
                readable_share: share,
                documents,
                minutes,
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
            .map(|pair| PacePoint {
                at: pair[0].at,
                readable_share: pair[pair.len() - 1].readable_share,
                documents: pair.iter().map(|p| p.documents).sum(),
                minutes: pair.iter().map(|p| p.minutes).sum(),
            })
            .collect();
        self.bucket = self.bucket * 2;
    }

    pub(crate) fn points(&self) -> &[PacePoint] {
        &self.points
    }

    /// Documents per minute over the whole session in `width` columns (fewer while the
    /// session has fewer points), scaled to their maximum.
    pub(crate) fn rate_sparkline(&self, width: usize, ascii: bool) -> String {
        let values = self.resampled(width, PacePoint::documents_per_minute);
        let top = values.iter().copied().fold(0.0, f64::max);
        sparkline(&values, top, ascii)
    }

    /// The readable share over the whole session in `width` columns, on a fixed 0–100 % scale.
    pub(crate) fn readable_sparkline(&self, width: usize, ascii: bool) -> String {
        let values = self.resampled(width, |p| p.readable_share);
        sparkline(&values, 1.0, ascii)
    }

    /// The points spread over at most `width` columns, each column the mean of its points:
    /// the session's start stays in view.
    fn resampled(&self, width: usize, value: impl Fn(&PacePoint) -> f64) -> Vec<f64> {
        // The point being filled is left out until it spans half its bucket: one poll's worth
        // of documents is noise that would read as a spike or a dip.
        let bucket_minutes = self.bucket.num_milliseconds() as f64 / 60_000.0;
        let settled = match self.points.split_last() {
            Some((last, rest)) if !rest.is_empty() && last.minutes < bucket_minutes / 2.0 => rest,
            _ => &self.points[..],
        };
        let n = settled.len();
        let columns = width.min(n);
        (0..columns)
            .map(|column| {
                let (from, to) = (
                    column * n / columns,
                    ((column + 1) * n / columns).max(column * n / columns + 1),
                );
                let slice = &settled[from..to.min(n)];
                slice.iter().map(&value).sum::<f64>() / slice.len() as f64
            })
            .collect()
    }
}

/// Eight levels from nothing to `top`; a value of zero is the lowest glyph, so a stall reads
/// as a flat floor rather than a gap.
fn sparkline(values: &[f64], top: f64, ascii: bool) -> String {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    // No `.`: it is the ASCII form of the separator beside the chart.
    const ASCII: [char; 8] = ['_', ',', ':', '-', '=', '+', '*', '#'];
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

    /// Readings every `step` seconds from `from`, completing `per_reading[i]` documents each.
    fn feed(pace: &mut Pace, from: i64, step: i64, per_reading: &[i64]) {
        let mut completed = pace.last.map_or(0, |(_, c)| c);
        for (i, docs) in per_reading.iter().enumerate() {
            completed += docs;
            pace.record(at(from + i as i64 * step), completed, i as f64 / 10.0);
        }
    }

    #[test]
    fn the_first_minute_sets_the_baseline_and_a_bucket_sums_its_polls() {
        let mut pace = Pace::default();
        // The first poll loads the whole ledger: 5,000 documents done before the console came.
        pace.record(at(0), 5_000, 0.0);
        pace.record(at(30), 5_010, 0.0);
        assert!(pace.points().is_empty(), "warming up");
        // 20 documents over the next 10 s, then 10 over 2 s more in the same bucket.
        pace.record(at(60), 5_010, 0.1);
        pace.record(at(64), 5_020, 0.2);
        pace.record(at(66), 5_030, 0.3);
        assert_eq!(pace.points().len(), 1);
        let point = pace.points()[0];
        assert!((point.documents_per_minute() - 20.0 / 36.0 * 60.0).abs() < 1e-9);
        assert_eq!(point.readable_share, 0.3);
    }

    #[test]
    fn a_long_session_stays_bounded_and_keeps_its_start() {
        let mut pace = Pace::default();
        // Ten hours of polls every two seconds.
        feed(&mut pace, 0, 2, &[3; 18_000]);
        assert!(pace.points().len() <= POINTS, "{}", pace.points().len());
        assert_eq!(
            pace.points()[0].at,
            at(60),
            "the session's start is still in view"
        );
        assert!(pace.bucket >= Duration::minutes(10), "{}", pace.bucket);
        // 3 documents every 2 s, whatever the coarsening.
        for point in pace.points() {
            assert!((point.documents_per_minute() - 90.0).abs() < 1e-6);
        }
    }

    #[test]
    fn a_point_just_begun_is_not_drawn_until_it_spans_half_its_bucket() {
        let mut pace = Pace::default();
        // Polls every 2 s, 2 documents each; the poll at 90 s starts a point with a burst.
        let mut per_poll = vec![2; 45];
        per_poll.push(20);
        feed(&mut pace, 0, 2, &per_poll);
        assert_eq!(pace.points().len(), 4);
        assert_eq!(pace.rate_sparkline(8, false), "███");
    }

    #[test]
    fn a_stall_is_a_floor_at_the_next_point() {
        let mut pace = Pace::default();
        feed(&mut pace, 0, 10, &[0, 0, 0, 0, 0, 0, 0, 10, 20, 20, 0, 0]);
        // From 60 s: 0 (baseline point), 10, 20, 20 documents per 10 s, then nothing.
        assert_eq!(pace.rate_sparkline(8, false), "▁▅██▁▁");
        // Three columns for six points, each the mean of its two: the session's start stays.
        assert_eq!(pace.rate_sparkline(3, true), ":#_");
        assert_eq!(pace.readable_sparkline(6, false), "▅▆▇▇██");
    }
}
