//! Durations as the console writes and reads them, in one place. Every view, sentence and
//! command writes a duration with [`human`] (ages on the database clock, to the second),
//! [`interval`] (a polling interval or period) or [`compact`] (narrow columns), all on one
//! ladder of units, and reads what an operator typed with [`parse`].

/// `9s`, `4m12s`, `3h05m`, `2d04h`; a negative age reads as `-9s`.
pub(crate) fn human(duration: chrono::Duration) -> String {
    let seconds = duration.num_seconds();
    let sign = if seconds < 0 { "-" } else { "" };
    format!("{sign}{}", ladder(seconds.unsigned_abs()))
}

/// [`human`] of a `std` duration.
pub(crate) fn human_std(duration: std::time::Duration) -> String {
    ladder(duration.as_secs())
}

/// Like [`human`], without seconds once past ten minutes: `12m` instead of `12m05s`.
pub(crate) fn compact(duration: chrono::Duration) -> String {
    let seconds = duration.num_seconds();
    match seconds.unsigned_abs() {
        600..=3599 => format!(
            "{}{}m",
            if seconds < 0 { "-" } else { "" },
            seconds.unsigned_abs() / 60
        ),
        _ => human(duration),
    }
}

/// A polling interval as the `+`/`-` steps and `--interval` name it: `0.5s`, `2s`, `15s`,
/// `1m`, `1m30s` — one form for every setting, whatever its size.
pub(crate) fn interval(duration: std::time::Duration) -> String {
    let millis = duration.as_millis();
    if !millis.is_multiple_of(1000) && millis < 60_000 {
        let text = format!("{:.1}", duration.as_secs_f64());
        return format!("{}s", text.trim_end_matches('0').trim_end_matches('.'));
    }
    match duration.as_secs() {
        s @ 60..=3599 if s.is_multiple_of(60) => format!("{}m", s / 60),
        s => ladder(s),
    }
}

/// Whole seconds on the ladder of units.
fn ladder(s: u64) -> String {
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        3600..=86_399 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// The longest duration [`parse`] accepts: a deadline beyond a year is a typo.
const LONGEST_SECONDS: f64 = 366.0 * 86_400.0;

/// A duration as people write it: `90s`, `30m`, `2h`, `1h30m`, `1.5s`, or plain seconds.
pub(crate) fn parse(text: &str) -> Result<std::time::Duration, String> {
    let bad = || format!("{text:?} is not a duration (write 90s, 30m, 2h or 1h30m)");
    let within = |seconds: f64| {
        (seconds.is_finite() && seconds > 0.0 && seconds <= LONGEST_SECONDS)
            .then(|| std::time::Duration::from_secs_f64(seconds))
            .ok_or_else(bad)
    };
    if let Ok(seconds) = text.parse::<f64>() {
        return within(seconds);
    }
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(bad)?;
        let (number, after) = rest.split_at(split);
        let mut units = after.chars();
        let unit = match units.next() {
            Some('h') => 3600.0,
            Some('m') => 60.0,
            Some('s') => 1.0,
            _ => return Err(bad()),
        };
        let value: f64 = number.parse().map_err(|_| bad())?;
        total += value * unit;
        rest = units.as_str();
    }
    within(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn ages_read_in_the_largest_two_units() {
        assert_eq!(human(Duration::seconds(9)), "9s");
        assert_eq!(human(Duration::seconds(252)), "4m12s");
        assert_eq!(human(Duration::seconds(3 * 3600 + 300)), "3h05m");
        assert_eq!(human(Duration::seconds(2 * 86_400 + 4 * 3600)), "2d04h");
        assert_eq!(human(Duration::seconds(-9)), "-9s");
        assert_eq!(compact(Duration::seconds(725)), "12m");
        assert_eq!(compact(Duration::seconds(-725)), "-12m");
        assert_eq!(compact(Duration::seconds(59)), "59s");
    }

    #[test]
    fn every_interval_step_reads_in_one_form() {
        use std::time::Duration;
        let shown: Vec<String> = crate::poller::INTERVAL_STEPS
            .iter()
            .map(|d| interval(*d))
            .collect();
        assert_eq!(shown, ["0.5s", "1s", "2s", "5s", "10s", "15s", "30s", "1m"]);
        assert_eq!(interval(Duration::from_millis(1_500)), "1.5s");
        assert_eq!(interval(Duration::from_secs(90)), "1m30s");
    }

    #[test]
    fn durations_read_as_people_write_them() {
        use std::time::Duration;
        assert_eq!(parse("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse("45"), Ok(Duration::from_secs(45)));
        for bad in [
            "",
            "0",
            "-5",
            "2x",
            "5x",
            "h",
            "1h30",
            "1e20",
            "1e400",
            "400d",
            "99999999999999999999h",
            "nan",
            "inf",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
