//! The command line: clap definitions and the dispatch from subcommands to the library.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::sandbox::{SandboxDatabase, SandboxFailure, SandboxSchema};
use crate::store::connect::{ConnectError, Target};
use crate::store::schema::{self, SchemaError};

#[derive(Debug, Parser)]
#[command(name = "bootstrap-console", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Apply the console's own schema (the audit table) to the target database. Idempotent;
    /// never runs a platform migration.
    Migrate(ConnectArgs),
    /// Start a private PostgreSQL with the sandbox schema, print its URL and keep it running
    /// until Ctrl-C, SIGTERM or SIGHUP; then stop it and delete it.
    Sandbox {
        /// Create only the platform stand-in tables (no migration 0009, no console schema).
        #[arg(long)]
        platform_only: bool,
    },
}

/// Where to connect: `--database-url`, else `DATABASE_URL`, else the `PG*` variables.
#[derive(Debug, Clone, Args)]
pub struct ConnectArgs {
    /// PostgreSQL URL, e.g. postgres://user@host:5432/platform?sslmode=verify-full
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
}

impl ConnectArgs {
    fn target(&self) -> Result<Target, Failure> {
        Ok(Target::from_url_or_env(self.database_url.as_deref())?)
    }
}

/// An expected failure: one sentence on stderr and a documented exit code, no backtrace.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error(transparent)]
    Schema(#[from] SchemaError),
    #[error(transparent)]
    Sandbox(#[from] SandboxFailure),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Failure {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            Self::Connect(ConnectError::BadUrl { .. }) => ExitCode::from(2),
            Self::Connect(_) => ExitCode::from(4),
            Self::Schema(_) => ExitCode::from(5),
            Self::Sandbox(_) | Self::Io(_) => ExitCode::FAILURE,
        }
    }
}

pub async fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Some(Command::Migrate(args)) => migrate(&args).await,
        Some(Command::Sandbox { platform_only }) => sandbox(platform_only).await,
        None => {
            use clap::CommandFactory;
            Cli::command().print_help()?;
            Ok(ExitCode::from(2))
        }
    }
}

async fn migrate(args: &ConnectArgs) -> Result<ExitCode, Failure> {
    let target = args.target()?;
    let mut conn = target.connect().await?;
    let report = schema::migrate_console(&mut conn).await?;
    for unit in &report.applied {
        println!("applied console schema unit {unit} to {target}");
    }
    if report.applied.is_empty() {
        println!(
            "console schema already up to date on {target} ({} unit(s) present); nothing to do",
            report.already_present.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn sandbox(platform_only: bool) -> Result<ExitCode, Failure> {
    let level = if platform_only {
        SandboxSchema::PlatformStandIn
    } else {
        SandboxSchema::Full
    };
    let sandbox = SandboxDatabase::start(level).await?;
    println!("SANDBOX private PostgreSQL is ready (Unix socket only, no TCP port).");
    println!("DATABASE_URL={}", sandbox.url());
    println!("server pid {}", sandbox.cluster().server_pid());
    println!("directory {}", sandbox.cluster().socket_dir().display());
    println!("Press Ctrl-C to stop it and delete it.");
    wait_for_stop_signal().await?;
    sandbox
        .stop()
        .map_err(|e| Failure::Sandbox(SandboxFailure::Sandbox(e)))?;
    // stderr: the reader of stdout (a script that took the URL) may be gone by now.
    eprintln!("private PostgreSQL stopped and deleted.");
    Ok(ExitCode::SUCCESS)
}

/// Ctrl-C, SIGTERM or SIGHUP (a dropped ssh session).
async fn wait_for_stop_signal() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result,
        _ = term.recv() => Ok(()),
        _ = hangup.recv() => Ok(()),
    }
}
