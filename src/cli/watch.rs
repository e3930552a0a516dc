//! `watch` (and no subcommand): the live console on a database.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use super::{DisplayArgs, Failure, StopSignals, WatchArgs, exit};
use crate::domain::session::{Session, SessionOptions};
use crate::domain::text;
use crate::topology::OpenError;
use crate::tui;

pub(super) async fn watch(args: &WatchArgs) -> Result<ExitCode, Failure> {
    require_terminal()?;
    // Bad flags are refused before anything is connected.
    let mut options = tui_options(&args.display, args.label.clone(), false)?;
    options.thresholds = args.thresholds.thresholds().map_err(Failure::Usage)?;
    let mut signals = StopSignals::install()?;
    let target = args.connect.target()?;
    let read = args.read.target()?;
    let mut session = Session::open(
        &target,
        SessionOptions {
            tenant: args.tenant.clone(),
            read_only: args.read_only,
            thresholds: options.thresholds,
            primary: None,
        },
    )
    .await?;
    if let Some(read) = read {
        match session.add_reader(&read).await {
            Ok(()) => {}
            // A standby that is down now is waited for, as one lost later is: the console
            // starts on the primary and says so.
            Err(OpenError::Connect(e)) if e.is_unreachable() => {
                tracing::warn!("{e}; polls read the primary until it answers");
                session.add_reader_not_answering(&read).await;
            }
            Err(e) => {
                session.close().await;
                return Err(e.into());
            }
        }
    }
    if let (Some(tenant), Some(found)) =
        (session.tenant_scope(), session.reads().scope_match().await?)
    {
        options.scope_note = found.sentence(tenant);
    }
    run_console(session, options, signals.wait()).await
}

/// The live console, then what it left to say: the fate of an action that was being applied
/// when it was told to quit (exit 6 when that stays unknown). Its connections are closed
/// before the process ends.
pub(super) async fn run_console(
    session: Session,
    options: tui::Options,
    stop: impl std::future::Future<Output = &'static str>,
) -> Result<ExitCode, Failure> {
    let ascii = options.ascii;
    let ended = tui::run(session.clone(), options, stop).await;
    session.close().await;
    let ended = ended?;
    for line in &ended.unfinished {
        // The terminal's character set still holds after the screen is left.
        let line = text::in_ascii(ascii, || text::clean(line, 1000));
        super::say(&format!("bootstrap-console: {line}"));
    }
    Ok(ExitCode::from(if ended.unknown {
        exit::OUTCOME_UNKNOWN
    } else if let Some(signal) = ended.signal() {
        exit::by_signal(signal)
    } else {
        exit::DONE
    }))
}

/// The console draws on a terminal; anything else gets a sentence instead of garbage.
pub(super) fn require_terminal() -> Result<(), Failure> {
    let term = std::env::var("TERM").ok();
    if !tui::terminal::term_can_draw(term.as_deref()) {
        return Err(Failure::Usage(format!(
            "TERM is {}: this terminal cannot draw the live console; `bootstrap-console status` \
             prints the board as text (or set TERM to your terminal's type)",
            term.map_or("not set".to_string(), |t| format!("{t:?}"))
        )));
    }
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        Ok(())
    } else {
        Err(Failure::Usage(
            "the live console needs a terminal on stdin and stdout; for scripts use the \
             command-line subcommands (see --help)"
                .into(),
        ))
    }
}

pub(super) fn tui_options(
    display: &DisplayArgs,
    label: Option<String>,
    sandbox: bool,
) -> Result<tui::Options, Failure> {
    // Both were checked when parsed (see `args`): never clamped behind the operator's back.
    let interval = Duration::from_secs_f64(display.interval);
    let slack = display.delta_slack_secs;
    Ok(tui::Options {
        label,
        sandbox,
        // ASCII when asked, and whenever the locale is not UTF-8 (the terminal would show the
        // console's glyphs as garbage).
        ascii: display.ascii || !tui::terminal::locale_is_utf8(|name| std::env::var(name).ok()),
        color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        interval,
        bulk_cap: display.bulk_cap,
        scope_note: None,
        apply_deadline: super::args::deadline(display.apply_deadline_secs)
            .map_err(Failure::Usage)?,
        thresholds: crate::domain::signals::Thresholds::default(),
        sync: crate::store::sync::SyncSettings {
            slack: Duration::from_secs_f64(slack),
            ..crate::store::sync::SyncSettings::default()
        },
    })
}
