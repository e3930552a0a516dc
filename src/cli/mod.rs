//! The command line: clap definitions and the dispatch from subcommands to the library.

mod args;
mod rehearsal;
mod schema_commands;
mod watch;

use std::process::ExitCode;

use clap::Parser;

pub use args::{Cli, Command, ConnectArgs, DisplayArgs, RolloutArgs, WatchArgs};

use crate::domain::session::OpenError;
use crate::sandbox::SandboxFailure;
use crate::sandbox::sim::SeedError;
use crate::store::StoreError;
use crate::store::connect::ConnectError;
use crate::store::schema::SchemaError;

/// An expected failure: one sentence on stderr and a documented exit code, no backtrace.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error(transparent)]
    Schema(#[from] SchemaError),
    #[error(transparent)]
    Sandbox(#[from] SandboxFailure),
    #[error(transparent)]
    Seed(#[from] SeedError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Failure {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Self::Connect(ConnectError::BadUrl { .. }) => ExitCode::from(2),
            Self::Connect(_) | Self::Open(OpenError::Connect(_)) | Self::Store(_) => {
                ExitCode::from(4)
            }
            Self::Schema(_) | Self::Open(OpenError::MissingLedger { .. }) => ExitCode::from(5),
            Self::Refused(_) => ExitCode::from(3),
            Self::Usage(_) => ExitCode::from(2),
            Self::Sandbox(_) | Self::Seed(_) | Self::Io(_) => ExitCode::FAILURE,
        }
    }
}

pub async fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Some(Command::Migrate(args)) => schema_commands::migrate(&args).await,
        Some(Command::Sandbox { platform_only }) => schema_commands::sandbox(platform_only).await,
        Some(Command::Demo(args)) => rehearsal::demo(&args).await,
        Some(Command::Simulate(args)) => rehearsal::simulate(&args).await,
        Some(Command::Watch(args)) => watch::watch(&args).await,
        None => watch::watch(&cli.watch).await,
    }
}

/// Parses the process arguments (kept here so `main` stays thin).
pub fn parse() -> Cli {
    Cli::parse()
}

/// Ctrl-C, SIGTERM or SIGHUP (a dropped ssh session). Installed before anything is announced,
/// so a signal that arrives right after the announcement is never missed (the default action
/// would kill the process without cleaning up).
pub(crate) struct StopSignals {
    term: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

impl StopSignals {
    pub(crate) fn install() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    pub(crate) async fn wait(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.hangup.recv() => {}
            _ = self.interrupt.recv() => {}
        }
    }
}
