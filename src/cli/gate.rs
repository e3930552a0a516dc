//! `status --until CHECKPOINT`: a deployment pipeline waits on the rollout without parsing
//! output. One line per reading (a bar redrawn in place on a terminal); the exit code says how
//! it ended: 0 every space in scope reached the checkpoint, 1 something waiting will not fix
//! (unless `--keep-going`), 9 the timeout, 4 the database stopped answering.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use super::args::GateArgs;
use super::{Failure, exit, outln, say};
use crate::domain::duration;
use crate::domain::gate::{GateReading, GateVerdict};
use crate::domain::model::Checkpoint;
use crate::domain::report;
use crate::domain::session::Session;

/// Waits until every space in the session's scope has reached `until`.
pub(super) async fn wait(
    session: &Session,
    until: Checkpoint,
    args: &GateArgs,
) -> Result<ExitCode, Failure> {
    let started = Instant::now();
    let every = Duration::from_secs_f64(args.every);
    let in_place = std::io::stdout().is_terminal();
    let mut last: Option<GateReading>;
    loop {
        match read(session, until).await {
            Ok(reading) => {
                show(&reading, started, in_place);
                let verdict = reading.verdict(args.keep_going);
                last = Some(reading);
                match verdict {
                    GateVerdict::Done => {
                        end_line(in_place);
                        outln!("done: every space in scope has reached {}", until.as_str());
                        return Ok(ExitCode::from(exit::DONE));
                    }
                    GateVerdict::Stuck(why) => {
                        end_line(in_place);
                        outln!(
                            "stopped: {why} — waiting will not get there (see `bootstrap-console \
                             status --attention`; --keep-going waits anyway)"
                        );
                        return Ok(ExitCode::from(exit::NEEDS_ATTENTION));
                    }
                    GateVerdict::Waiting => {}
                }
            }
            // A pipeline's gate outlives a blip of the connection (the timeout bounds it);
            // anything else (a grant taken away, a statement the database refuses) will not
            // mend by waiting.
            Err(failure) if failure.is_transient() => {
                end_line(in_place);
                say(&format!(
                    "bootstrap-console: a reading failed ({failure}); trying again"
                ));
                last = None;
            }
            Err(failure) => {
                end_line(in_place);
                return Err(failure);
            }
        }
        if let Some(timeout) = args.timeout {
            let elapsed = started.elapsed();
            if elapsed >= timeout {
                end_line(in_place);
                let at = last.map_or("no reading".to_string(), |r| r.line());
                outln!("timed out after {}: {at}", duration::human_std(timeout));
                return Ok(ExitCode::from(exit::TIMED_OUT));
            }
            tokio::time::sleep(every.min(timeout - elapsed)).await;
        } else {
            tokio::time::sleep(every).await;
        }
    }
}

/// One reading: the summary (one aggregate statement) and the leases (a small table).
async fn read(session: &Session, until: Checkpoint) -> Result<GateReading, Failure> {
    let report = report::summarize(session, session.thresholds()).await?;
    let leases = session.reads().leases().await?;
    let unreadable = u32::try_from(report.unreadable.len()).unwrap_or(u32::MAX);
    Ok(GateReading::new(
        until,
        &report.summary,
        unreadable,
        &leases,
    ))
}

/// A line per reading; on a terminal, a bar redrawn in place.
fn show(reading: &GateReading, started: Instant, in_place: bool) {
    let elapsed = duration::human_std(started.elapsed());
    if in_place {
        const WIDTH: usize = 20;
        // Full only when done: 99 of 100 is not a full bar.
        let filled = ((reading.fraction() * WIDTH as f64).floor() as usize).min(WIDTH);
        // The elapsed time before the counts: at 80 columns the end of the line goes.
        let line = format!(
            "[{}{}] {elapsed} {}",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled),
            reading.short_line()
        );
        // Narrower than the terminal: a wrapped line could not be redrawn in place.
        let width = crossterm::terminal::size().map_or(80, |(w, _)| w as usize);
        let fitted = crate::domain::text::fit(&line, width.saturating_sub(1));
        super::emit(&format!("\r\x1b[K{}", fitted.trim_end()));
    } else {
        outln!("{} {} · {elapsed}", clock_now(), reading.line());
    }
}

/// Ends a bar drawn in place, so what follows starts on a line of its own.
fn end_line(in_place: bool) {
    if in_place {
        super::emit("\n");
    }
}

/// The local time of day, for log-like lines.
fn clock_now() -> String {
    chrono::Local::now().format("%H:%M:%S").to_string()
}
