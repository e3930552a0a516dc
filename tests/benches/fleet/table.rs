//! The result table: one line per figure, with its baseline, ratio and target.

use std::time::Duration;

/// One line of the result table.
pub struct Line {
    pub what: String,
    pub console: String,
    pub baseline: String,
    pub ratio: String,
    pub target: &'static str,
}

pub fn line(
    what: &str,
    console: String,
    baseline: String,
    ratio: String,
    target: &'static str,
) -> Line {
    Line {
        what: what.into(),
        console,
        baseline,
        ratio,
        target,
    }
}

pub fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

pub fn ratio(a: f64, b: f64) -> String {
    if b <= 0.0 {
        return "-".into();
    }
    let r = a / b;
    if r < 0.01 {
        format!("{r:.4}×")
    } else {
        format!("{r:.2}×")
    }
}

pub fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

pub fn percentile(mut values: Vec<Duration>, p: f64) -> Duration {
    values.sort();
    let i = ((values.len() as f64 - 1.0) * p).round() as usize;
    values.get(i).copied().unwrap_or_default()
}

pub fn print_table(table: &[Line]) {
    let width = |f: fn(&Line) -> &str| {
        table
            .iter()
            .map(|l| f(l).chars().count())
            .max()
            .unwrap_or(0)
    };
    let w = [
        width(|l| &l.what),
        width(|l| &l.console),
        width(|l| &l.baseline),
        width(|l| &l.ratio),
    ];
    println!();
    println!(
        "{:<a$}  {:<b$}  {:<c$}  {:<d$}  target",
        "what",
        "console",
        "baseline (same run)",
        "ratio",
        a = w[0],
        b = w[1],
        c = w[2],
        d = w[3]
    );
    for l in table {
        println!(
            "{:<a$}  {:<b$}  {:<c$}  {:<d$}  {}",
            l.what,
            l.console,
            l.baseline,
            l.ratio,
            l.target,
            a = w[0],
            b = w[1],
            c = w[2],
            d = w[3]
        );
    }
}
