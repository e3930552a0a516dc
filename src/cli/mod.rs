//! The command line: clap definitions and the dispatch from subcommands to the library.

mod args;
mod rehearsal;
mod schema_commands;

use std::process::ExitCode;

use clap::Parser;

pub use args::{Cli, Command, ConnectArgs, RolloutArgs};

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
        None => {
            use clap::CommandFactory;
            Cli::command().print_help()?;
            Ok(ExitCode::from(2))
        }
    }
}

/// Parses the process arguments (kept here so `main` stays thin).
pub fn parse() -> Cli {
    Cli::parse()
}

/// Ctrl-C, SIGTERM or SIGHUP (a dropped ssh session).
pub(crate) async fn wait_for_stop_signal() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result,
        _ = term.recv() => Ok(()),
        _ = hangup.recv() => Ok(()),
    }
}
