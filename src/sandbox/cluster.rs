//! A private, throwaway PostgreSQL cluster: the embedded default for `demo`, `sandbox` and tests.
//!
//! The cluster lives in a fresh directory under `/tmp` and listens only on a Unix socket inside
//! it (`listen_addresses` is empty), so there is no TCP port and two clusters never collide.
//! PostgreSQL refuses to run as root, so when this process is root the server runs as the
//! unprivileged `postgres` user.
//!
//! Cleanup, from the most to the least orderly exit:
//! * drop (normal exit, `?`, a panicking test unwinding): fast shutdown, then the directory goes;
//! * process exit without drop (a cluster kept for a whole test binary): an `atexit` hook does
//!   the same;
//! * the process is killed: the server gets `SIGQUIT` through the parent-death signal, and the
//!   next cluster started on this machine sweeps the directory left behind.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use sqlx::postgres::PgConnectOptions;

use super::SandboxError;
use super::binaries::ServerBinaries;
use super::process::{
    self, Keeper, RunAs, prepare_directory, server_command, unprivileged_account,
};
use super::reaper::{self, DIR_PREFIX, PARENT_DIR};

/// The port only names the socket file inside the private directory; it never binds TCP.
const SOCKET_PORT: u16 = 5432;
/// Unix socket paths are limited to 107 bytes, so the cluster sits directly under `/tmp`.
const SUPERUSER: &str = process::SERVER_ACCOUNT;
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A running private cluster. Dropping it stops the server and deletes its directory.
pub struct PrivateCluster {
    dir: Option<tempfile::TempDir>,
    socket_dir: PathBuf,
    server_pid: u32,
    keeper: Option<Keeper>,
    binaries: ServerBinaries,
    run_as: Option<RunAs>,
    /// Server settings beyond the defaults (`-c name=value`).
    settings: Vec<(String, String)>,
}

impl PrivateCluster {
    /// Finds the server binaries and starts a cluster with them.
    pub fn start() -> Result<Self, SandboxError> {
        Self::start_with(&ServerBinaries::locate()?)
    }

    /// Creates, starts and waits for a cluster using `binaries`.
    pub(crate) fn start_with(binaries: &ServerBinaries) -> Result<Self, SandboxError> {
        Self::start_configured(binaries, &[])
    }

    /// A hot standby of this cluster in a private directory of its own: a base backup taken
    /// over this cluster's socket, then a server streaming its WAL (Unix sockets only, cleaned
    /// up like any private cluster). Promote it with `SELECT pg_promote()`.
    pub fn start_standby(&self) -> Result<Self, SandboxError> {
        self.standby_recipe().start()
    }

    /// What starting a standby of this cluster takes, to be done off an async thread.
    pub(crate) fn standby_recipe(&self) -> StandbyRecipe {
        StandbyRecipe {
            primary_socket: self.socket_dir.clone(),
            binaries: self.binaries.clone(),
            run_as: self.run_as.clone(),
            settings: self.settings.clone(),
        }
    }
}

/// How to start a standby of a private cluster (see [`PrivateCluster::standby_recipe`]).
#[derive(Clone)]
pub struct StandbyRecipe {
    primary_socket: PathBuf,
    binaries: ServerBinaries,
    run_as: Option<RunAs>,
    settings: Vec<(String, String)>,
}

impl StandbyRecipe {
    /// Takes the base backup and starts the standby on it.
    pub fn start(self) -> Result<PrivateCluster, SandboxError> {
        reaper::sweep_abandoned(Path::new(PARENT_DIR));
        let dir = tempfile::Builder::new()
            .prefix(DIR_PREFIX)
            .tempdir_in(PARENT_DIR)
            .map_err(|e| SandboxError::io("create the standby directory", e))?;
        let socket_dir = dir.path().to_path_buf();
        prepare_directory(&socket_dir, self.run_as.as_ref())?;
        let output = server_command(
            &self.binaries.pg_basebackup(),
            &socket_dir,
            self.run_as.as_ref(),
        )
        .args(["-D", "data", "-h"])
        .arg(&self.primary_socket)
        .args(["-p", &SOCKET_PORT.to_string(), "-U", SUPERUSER])
        .args(["-X", "stream", "-R", "-c", "fast", "--no-sync"])
        .output()
        .map_err(|e| SandboxError::io("run pg_basebackup", e))?;
        if !output.status.success() {
            return Err(SandboxError::Start(format!(
                "pg_basebackup failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let (server_pid, keeper) = spawn_server(
            &self.binaries,
            &socket_dir,
            self.run_as.clone(),
            &self.settings,
        )?;
        Ok(PrivateCluster {
            dir: Some(dir),
            socket_dir,
            server_pid,
            keeper: Some(keeper),
            binaries: self.binaries,
            run_as: self.run_as,
            settings: self.settings,
        })
    }
}

impl PrivateCluster {
    /// A cluster with extra server settings, e.g. `("shared_preload_libraries",
    /// "pg_stat_statements")` for the benchmark.
    pub fn start_configured(
        binaries: &ServerBinaries,
        settings: &[(&str, &str)],
    ) -> Result<Self, SandboxError> {
        let settings: Vec<(String, String)> = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        reaper::sweep_abandoned(Path::new(PARENT_DIR));
        let run_as = unprivileged_account()?;
        let dir = tempfile::Builder::new()
            .prefix(DIR_PREFIX)
            .tempdir_in(PARENT_DIR)
            .map_err(|e| SandboxError::io("create the cluster directory", e))?;
        let socket_dir = dir.path().to_path_buf();
        prepare_directory(&socket_dir, run_as.as_ref())?;
        run_initdb(binaries, &socket_dir, run_as.as_ref())?;
        let (server_pid, keeper) = spawn_server(binaries, &socket_dir, run_as.clone(), &settings)?;
        Ok(Self {
            dir: Some(dir),
            socket_dir,
            server_pid,
            keeper: Some(keeper),
            binaries: binaries.clone(),
            run_as,
            settings,
        })
    }

    /// The directory holding the data, the log and the socket.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    pub fn port(&self) -> u16 {
        SOCKET_PORT
    }

    /// Process id of the postmaster.
    pub fn server_pid(&self) -> u32 {
        self.server_pid
    }

    /// Connection options for `database` as the superuser, over the private socket.
    pub fn connect_options(&self, database: &str) -> PgConnectOptions {
        PgConnectOptions::new()
            .host(&self.socket_dir.to_string_lossy())
            .port(SOCKET_PORT)
            .username(SUPERUSER)
            .database(database)
    }

    /// A `postgres://` URL for `database` (the socket directory percent-encoded as the host),
    /// accepted by sqlx, `psql` and `DATABASE_URL`.
    pub fn url(&self, database: &str) -> String {
        socket_url(&self.socket_dir, database)
    }

    /// Stops the server but keeps its data, as a database outage would (see `start_server`).
    pub fn stop_server(&mut self) -> Result<(), SandboxError> {
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.stop.send(());
            keeper
                .thread
                .join()
                .map_err(|_| SandboxError::Stop("the server keeper thread panicked".into()))?;
        }
        Ok(())
    }

    /// Starts the server again on the same data after `stop_server`.
    pub fn start_server(&mut self) -> Result<(), SandboxError> {
        if self.keeper.is_some() {
            return Ok(());
        }
        let (server_pid, keeper) = spawn_server(
            &self.binaries,
            &self.socket_dir,
            self.run_as.clone(),
            &self.settings,
        )?;
        self.server_pid = server_pid;
        self.keeper = Some(keeper);
        Ok(())
    }

    /// Stops the server and deletes the directory now, reporting what went wrong.
    pub fn stop(mut self) -> Result<(), SandboxError> {
        self.shutdown()
    }

    /// Keeps the cluster running until this process exits, then stops it and deletes its
    /// directory from an `atexit` hook. For a cluster shared by a whole test binary, which no
    /// destructor would ever stop (Rust runs no destructors for statics).
    pub fn keep_until_exit(mut self) -> KeptCluster {
        let dir = self.dir.take().map(tempfile::TempDir::keep);
        let keeper = self.keeper.take();
        let kept = KeptCluster {
            socket_dir: self.socket_dir.clone(),
            server_pid: self.server_pid,
        };
        if let Some(dir) = dir {
            reaper::stop_at_exit(self.server_pid, dir);
        }
        // The keeper thread must stay parked for the rest of the process (its exit would fire
        // the parent-death signal), so its stop channel is leaked on purpose.
        if let Some(keeper) = keeper {
            std::mem::forget(keeper.stop);
            drop(keeper.thread);
        }
        kept
    }

    fn shutdown(&mut self) -> Result<(), SandboxError> {
        let mut outcome = Ok(());
        if let Some(keeper) = self.keeper.take() {
            // A send error means the keeper is already gone; joining still reaps it.
            let _ = keeper.stop.send(());
            if keeper.thread.join().is_err() {
                outcome = Err(SandboxError::Stop(
                    "the server keeper thread panicked".into(),
                ));
            }
        }
        if let Some(dir) = self.dir.take() {
            let path = dir.path().to_path_buf();
            if let Err(e) = dir.close() {
                outcome = outcome.and(Err(SandboxError::io(
                    &format!("delete {}", path.display()),
                    e,
                )));
            }
        }
        outcome
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            tracing::warn!("private PostgreSQL cleanup: {e}");
        }
    }
}

/// A cluster that lives until the process exits (see [`PrivateCluster::keep_until_exit`]).
#[derive(Debug, Clone)]
pub struct KeptCluster {
    socket_dir: PathBuf,
    server_pid: u32,
}

impl KeptCluster {
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    pub fn server_pid(&self) -> u32 {
        self.server_pid
    }

    pub fn connect_options(&self, database: &str) -> PgConnectOptions {
        PgConnectOptions::new()
            .host(&self.socket_dir.to_string_lossy())
            .port(SOCKET_PORT)
            .username(SUPERUSER)
            .database(database)
    }

    pub fn url(&self, database: &str) -> String {
        socket_url(&self.socket_dir, database)
    }
}

fn socket_url(socket_dir: &Path, database: &str) -> String {
    let host = socket_dir.to_string_lossy().replace('/', "%2F");
    format!("postgres://{SUPERUSER}@{host}:{SOCKET_PORT}/{database}")
}

fn run_initdb(
    binaries: &ServerBinaries,
    dir: &Path,
    run_as: Option<&RunAs>,
) -> Result<(), SandboxError> {
    let output = server_command(&binaries.initdb(), dir, run_as)
        .args(["-D", "data", "-A", "trust", "-U", SUPERUSER, "-E", "UTF8"])
        .args(["--locale=C", "--no-sync", "--no-instructions"])
        .output()
        .map_err(|e| SandboxError::io("run initdb", e))?;
    if output.status.success() {
        return Ok(());
    }
    Err(SandboxError::Initdb(
        String::from_utf8_lossy(&output.stderr).trim().to_string(),
    ))
}

fn spawn_server(
    binaries: &ServerBinaries,
    dir: &Path,
    run_as: Option<RunAs>,
    settings: &[(String, String)],
) -> Result<(u32, Keeper), SandboxError> {
    let log = fs::File::create(dir.join("server.log"))
        .map_err(|e| SandboxError::io("create server.log", e))?;
    if let Some(account) = &run_as {
        // Best effort: only for reading the log as the server's own user.
        let _ = std::os::unix::fs::chown(dir.join("server.log"), Some(account.uid), None);
    }
    let mut command = server_command(&binaries.postgres(), dir, run_as.as_ref());
    command
        .args(["-D", "data", "-p", &SOCKET_PORT.to_string()])
        .arg("-k")
        .arg(dir)
        .args(["-c", "listen_addresses="])
        .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
        .args(["-c", "full_page_writes=off", "-c", "max_connections=200"]);
    for (name, value) in settings {
        command.arg("-c").arg(format!("{name}={value}"));
    }
    command.stdout(Stdio::null()).stderr(log);
    let data_dir = dir.join("data");
    let log_path = dir.join("server.log");
    process::spawn_kept("private-postgres", command, move |child| {
        wait_until_ready(child, &data_dir, &log_path)
    })
}

/// Waits until `postmaster.pid` reports `ready`, failing early (with the log) if the server dies.
fn wait_until_ready(child: &mut Child, data_dir: &Path, log: &Path) -> Result<(), SandboxError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return Err(SandboxError::Start(format!(
                    "postgres exited ({status}): {}",
                    log_tail(log)
                )));
            }
            Ok(None) => {}
            Err(e) => return Err(SandboxError::io("watch postgres", e)),
        }
        // A hot standby reports `standby` once it accepts connections.
        if matches!(
            server_status(data_dir).as_deref(),
            Some("ready" | "standby")
        ) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(SandboxError::Start(format!(
                "postgres was not ready after {}s: {}",
                READY_TIMEOUT.as_secs(),
                log_tail(log)
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Line 8 of `postmaster.pid`: `starting`, `ready`, `stopping`, …
fn server_status(data_dir: &Path) -> Option<String> {
    let text = fs::read_to_string(data_dir.join("postmaster.pid")).ok()?;
    text.lines().nth(7).map(|line| line.trim().to_string())
}

fn log_tail(log: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut file) = fs::File::open(log) {
        let _ = file.read_to_string(&mut text);
    }
    let lines: Vec<&str> = text.lines().rev().take(8).collect();
    let tail: Vec<&str> = lines.into_iter().rev().collect();
    if tail.is_empty() {
        "(server.log is empty)".into()
    } else {
        tail.join(" | ")
    }
}
