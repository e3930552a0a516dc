//! Logs go to a file, never onto the screen the console draws on.

use std::path::PathBuf;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

/// Each line's time, then the process id: several consoles share one log, and after an
/// incident each one's lines must be told apart.
struct StampWithPid {
    pid: u32,
}

impl FormatTime for StampWithPid {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
        write!(w, "{now} [{}]", self.pid)
    }
}

/// `$BOOTSTRAP_CONSOLE_LOG_DIR`, else `$XDG_STATE_HOME/bootstrap-console`, else
/// `~/.local/state/bootstrap-console`, else the temp directory.
pub(crate) fn log_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("BOOTSTRAP_CONSOLE_LOG_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(state) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(state).join("bootstrap-console");
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(home).join(".local/state/bootstrap-console");
    }
    std::env::temp_dir().join("bootstrap-console")
}

/// Makes `dir` (0700) and `console.log` in it (0600): the log holds reasons, tenants and
/// hosts, which other users of a shared jump host must not read (see [`private_file`]).
fn private_log(dir: &std::path::Path) -> std::io::Result<()> {
    let mut append = std::fs::OpenOptions::new();
    append.create(true).append(true);
    private_file(dir, "console.log", &mut append).map(drop)
}

/// Opens `name` in `dir` with `options`, as the console keeps its state: `dir` made 0700 and
/// the file created 0600. A directory or file of ours made wider by an earlier version is
/// narrowed; a directory named by `BOOTSTRAP_CONSOLE_LOG_DIR` that already exists is the
/// operator's, and is left as it is. Never through a link someone planted, never into a file
/// someone else owns, nor a default directory someone else made (the temp directory's, say).
pub(crate) fn private_file(
    dir: &std::path::Path,
    name: &str,
    options: &mut std::fs::OpenOptions,
) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
    let existed = dir.is_dir();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let chosen = std::env::var_os("BOOTSTRAP_CONSOLE_LOG_DIR").is_some_and(|d| !d.is_empty());
    let ours = |meta: &std::fs::Metadata| meta.uid() == nix::unistd::geteuid().as_raw();
    let refused = |what: &str| std::io::Error::other(format!("{what} belongs to another user"));
    if existed && !chosen {
        if !ours(&std::fs::metadata(dir)?) {
            return Err(refused("the state directory"));
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let file = options
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(name))?;
    let meta = file.metadata()?;
    if !ours(&meta) {
        return Err(refused(name));
    }
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// Starts writing `console.log` in [`log_dir`] (see [`private_log`]); keep the guard until the process ends so the
/// last lines are flushed. `RUST_LOG` overrides the default filter. Returns `None` (logging
/// off) when the directory cannot be created.
pub fn init() -> Option<WorkerGuard> {
    let dir = log_dir();
    private_log(&dir).ok()?;
    let appender = tracing_appender::rolling::never(&dir, "console.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("bootstrap_console=info,sqlx=warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_timer(StampWithPid {
            pid: std::process::id(),
        })
        .with_ansi(false)
        .try_init()
        .ok()?;
    Some(guard)
}
