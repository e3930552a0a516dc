//! The command line: clap definitions and the dispatch from subcommands to the library.

mod act;
mod args;
mod audit;
mod audit_list;
mod check;
mod exit;
mod gate;
mod json;
mod rehearsal;
mod schema_commands;
mod scope;
mod status;
mod values;
mod watch;

use std::process::ExitCode;

use clap::Parser;

pub use args::Cli;
pub(crate) use args::{
    AuditCommand, ConnectArgs, DisplayArgs, LeaseCommand, RolloutArgs, Subcommand, WatchArgs,
};

use crate::domain::actions::BootstrapKind;
use crate::sandbox::SandboxFailure;
use crate::sandbox::sim::SeedError;
use crate::store::StoreError;
use crate::store::connect::ConnectError;
use crate::store::schema::SchemaError;
use crate::topology::OpenError;

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
    /// The simulated platform cannot work on this database.
    #[error("{0}")]
    Simulation(String),
    /// The console's own schema is missing or older than this console.
    #[error("{0}")]
    ConsoleSchema(String),
    #[error("{0}")]
    Refused(String),
    /// The split-brain guard refused the primary (see `topology::lineage`).
    #[error("{0}")]
    PrimaryInDoubt(String),
    /// The role may not run this command at all (the sentence says who may).
    #[error("{0}")]
    NotPermitted(String),
    #[error("{0}")]
    NothingInScope(String),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A database failure during an action is "unreachable" (4); an unreadable row is a refusal.
impl From<crate::domain::actions::ActionError> for Failure {
    fn from(error: crate::domain::actions::ActionError) -> Self {
        use crate::domain::actions::ActionError;
        match error {
            ActionError::Store(e) => Self::Store(e),
            ActionError::Connect(e) => Self::Connect(e),
            ActionError::Row(e) => Self::Refused(e.to_string()),
            ActionError::PrimaryInDoubt(doubt) => Self::PrimaryInDoubt(doubt.to_string()),
        }
    }
}

impl From<crate::domain::detail::DetailError> for Failure {
    fn from(error: crate::domain::detail::DetailError) -> Self {
        use crate::domain::detail::DetailError;
        match error {
            DetailError::Store(e) => Self::Store(e),
            DetailError::Row(e) => Self::Refused(e.to_string()),
        }
    }
}

impl Failure {
    /// A failure of the connection (the database did not answer, or ended the session), which
    /// may mend by itself — not a refusal or a missing grant, which will not.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Store(crate::store::StoreError::Database(e)) => {
                let pooler = e
                    .as_database_error()
                    .and_then(crate::store::connect::pooler_said);
                if let Some(said) = pooler {
                    return crate::store::connect::pooler_may_mend(&said);
                }
                matches!(
                    e,
                    sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed
                ) || matches!(
                    e.as_database_error().and_then(|d| d.code()).as_deref(),
                    // shutdowns, a server starting, a conflict with recovery on a standby
                    Some("57P01" | "57P02" | "57P03" | "40001" | "40P01")
                )
            }
            Self::Connect(e) | Self::Open(OpenError::Connect(e)) => e.may_mend(),
            _ => false,
        }
    }

    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(match self {
            Self::Connect(ConnectError::BadUrl { .. } | ConnectError::MissingFile { .. })
            | Self::Open(OpenError::Connect(
                ConnectError::BadUrl { .. } | ConnectError::MissingFile { .. },
            ))
            | Self::Open(OpenError::EmptyTenant | OpenError::PrimaryNotListed(_))
            | Self::Usage(_) => exit::USAGE,
            Self::Store(e) if e.sqlstate().as_deref() == Some(INSUFFICIENT_PRIVILEGE) => {
                exit::MISSING_PRIVILEGE
            }
            Self::Connect(_)
            | Self::Open(OpenError::Connect(_))
            | Self::Store(_)
            | Self::Simulation(_) => exit::UNREACHABLE,
            Self::Open(OpenError::MissingPrivilege { .. }) | Self::NotPermitted(_) => {
                exit::MISSING_PRIVILEGE
            }
            Self::Schema(_)
            | Self::ConsoleSchema(_)
            | Self::Open(OpenError::MissingLedger { .. }) => exit::SCHEMA,
            Self::Refused(_) => exit::REFUSED,
            Self::PrimaryInDoubt(_) => exit::PRIMARY_IN_DOUBT,
            Self::NothingInScope(_) => exit::NOTHING_IN_SCOPE,
            Self::Sandbox(_) | Self::Seed(_) | Self::Io(_) => 1,
        })
    }
}

/// SQLSTATE of a missing privilege.
const INSUFFICIENT_PRIVILEGE: &str = "42501";

pub async fn run(cli: Cli) -> Result<ExitCode, Failure> {
    match cli.command {
        Some(Subcommand::Migrate(args)) => schema_commands::migrate(&args).await,
        Some(Subcommand::Audit {
            command: AuditCommand::Verify(args),
        }) => audit::verify(&args).await,
        Some(Subcommand::Audit {
            command: AuditCommand::List(args),
        }) => audit_list::list(&args).await,
        Some(Subcommand::Grants(args)) => audit::grants(&args),
        Some(Subcommand::Sandbox {
            platform_only,
            replica,
        }) => schema_commands::sandbox(platform_only, replica).await,
        Some(Subcommand::Demo(args)) => rehearsal::demo(&args).await,
        Some(Subcommand::Simulate(args)) => rehearsal::simulate(&args).await,
        Some(Subcommand::Fixture(args)) => rehearsal::fixture(&args).await,
        Some(Subcommand::Watch(args)) => watch::watch(&args).await,
        Some(Subcommand::Status(args)) => status::status(&args).await,
        Some(Subcommand::Check(args)) => check::check(&args).await,
        Some(Subcommand::Retry(args)) => act::bootstrap_action(&args, BootstrapKind::Retry).await,
        Some(Subcommand::Cancel(args)) => act::bootstrap_action(&args, BootstrapKind::Cancel).await,
        Some(Subcommand::Lease {
            command: LeaseCommand::Remove(args),
        }) => act::remove_lease(&args).await,
        Some(Subcommand::Completions { shell }) => {
            use clap::CommandFactory;
            let mut command = Cli::command();
            clap_complete::generate(
                shell,
                &mut command,
                "bootstrap-console",
                &mut std::io::stdout(),
            );
            Ok(ExitCode::SUCCESS)
        }
        None => watch::watch(&cli.watch).await,
    }
}

/// Set once standard output is a closed pipe (`status | head`): later output is dropped and the
/// command finishes normally, with its own exit code, instead of panicking.
static STDOUT_GONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes to standard output, tolerating a reader that went away.
pub(crate) fn emit(text: &str) {
    if ascii_output() {
        emit_raw(&crate::domain::text::to_ascii(text));
    } else {
        emit_raw(text);
    }
}

/// Whether the locale's character set is not UTF-8: then what the commands write is ASCII,
/// as the live console draws (JSON aside: it is UTF-8 by definition).
fn ascii_output() -> bool {
    static ASCII: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ASCII.get_or_init(|| !crate::tui::terminal::locale_is_utf8(|name| std::env::var(name).ok()))
}

/// [`emit`] without the ASCII transliteration (JSON).
pub(crate) fn emit_raw(text: &str) {
    use std::io::Write;
    let _ = Stdout
        .write_all(text.as_bytes())
        .and_then(|()| Stdout.flush());
}

/// The width a command's table is laid out for: `COLUMNS` where the shell sets it, else the
/// terminal's when standard output is one, else 80 — so output piped to a file or a script
/// keeps one stable layout. Between 60 and 400.
pub(crate) fn table_width() -> u16 {
    use std::io::IsTerminal;
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok());
    let from_terminal = || {
        std::io::stdout()
            .is_terminal()
            .then(|| crossterm::terminal::size().ok().map(|(w, _)| w))
            .flatten()
    };
    from_env.or_else(from_terminal).unwrap_or(80).clamp(60, 400)
}

/// Standard output for the commands: once its reader went away (`status | head`), what
/// follows is dropped without an error, and the command finishes with its own exit code.
pub(crate) struct Stdout;

impl std::io::Write for Stdout {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes).map(|()| bytes.len())
    }

    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.gone_on_broken_pipe(|out| out.write_all(bytes))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.gone_on_broken_pipe(|out| out.flush())
    }
}

impl Stdout {
    fn gone_on_broken_pipe(
        &self,
        write: impl FnOnce(&mut std::io::StdoutLock<'static>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        use std::sync::atomic::Ordering;
        if STDOUT_GONE.load(Ordering::Relaxed) {
            return Ok(());
        }
        match write(&mut std::io::stdout().lock()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                STDOUT_GONE.store(true, Ordering::Relaxed);
                Ok(())
            }
            written => written,
        }
    }
}

/// Writes a line to standard error, tolerating a terminal that went away (a dropped ssh
/// session): `eprintln!` would panic there, and a panic with no terminal aborts.
pub(crate) fn say(text: &str) {
    use std::io::Write;
    let text = if ascii_output() {
        crate::domain::text::to_ascii(text)
    } else {
        text.to_string()
    };
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Redraws the current line of standard error with `text` (a progress bar on a terminal).
pub(crate) fn say_in_place(text: &str) {
    use std::io::Write;
    let _ = write!(std::io::stderr().lock(), "\r\x1b[K{text}");
}

/// Opens the session a command runs on, and says at once what the operator should know of
/// whom it is connected as (a pooler entry that forced another user).
pub(crate) async fn open_session(
    target: &crate::store::connect::Target,
    options: crate::domain::session::SessionOptions,
) -> Result<crate::domain::session::Session, Failure> {
    let session = crate::domain::session::Session::open(target, options).await?;
    let topology = session.topology();
    for warning in [topology.login_warning(), topology.doubt_warning()]
        .into_iter()
        .flatten()
    {
        say(&format!("bootstrap-console: {warning}"));
    }
    Ok(session)
}

/// `println!` through [`emit`].
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::emit(&format!("{}\n", format!($($arg)*)))
    };
}
pub(crate) use outln;

/// Parses the process arguments (kept here so `main` stays thin).
/// The command line, or the process ends: a value a parser of ours refused (a number out of
/// range, a blank tenant) is said as one sentence of ours, exit 2; other usage errors and
/// `--help` are clap's.
pub fn parse() -> Cli {
    let error = match Cli::try_parse() {
        Ok(cli) => return cli,
        Err(error) => error,
    };
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let ours = (error.kind() == ErrorKind::ValueValidation)
        .then(|| std::error::Error::source(&error).map(ToString::to_string))
        .flatten();
    let (Some(said), Some(ContextValue::String(arg))) = (ours, error.get(ContextKind::InvalidArg))
    else {
        error.exit()
    };
    let flag = arg.split(' ').next().unwrap_or(arg);
    say(&format!("bootstrap-console: {flag}: {said}"));
    std::process::exit(i32::from(exit::USAGE))
}

/// Ctrl-C, SIGTERM, SIGQUIT or SIGHUP (a dropped ssh session). Installed before anything is
/// announced, so a signal that arrives right after the announcement is never missed (the
/// default action would kill the process without cleaning up — SIGQUIT's would leave the
/// terminal in the console's screen and dump core).
pub(crate) struct StopSignals {
    term: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
}

impl StopSignals {
    pub(crate) fn install() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            term: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
            interrupt: signal(SignalKind::interrupt())?,
            quit: signal(SignalKind::quit())?,
        })
    }

    /// The next stop signal, by name (the log says why the console ended).
    pub(crate) async fn wait(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.hangup.recv() => "SIGHUP",
            _ = self.interrupt.recv() => "SIGINT",
            _ = self.quit.recv() => "SIGQUIT",
        }
    }
}
