//! A private PgBouncer in front of a private cluster: how a deployment behind a connection
//! pooler is tried by the tests.
//!
//! It runs like the private PostgreSQL (see [`super::cluster`]): in a fresh directory under
//! `/tmp`, as the unprivileged `postgres` account when this process is root (PgBouncer refuses
//! to run as root), as a child of a keeper thread, and listening on a Unix socket inside its
//! directory and on a loopback port. Its configuration is PgBouncer's defaults but for what a private instance
//! needs: where the server is, the pooling mode, and `trust` for the users it is told of. In
//! particular `ignore_startup_parameters` is left empty, so any startup parameter PgBouncer
//! does not track is refused, as a stock installation refuses it.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::SandboxError;
use super::process::{self, Keeper, prepare_directory, server_command, unprivileged_account};
use super::reaper::{self, DIR_PREFIX, PARENT_DIR};

const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// How PgBouncer hands server connections to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolMode {
    /// A server connection per client, for as long as the client stays.
    Session,
    /// A server connection per transaction: the next transaction may run on another one.
    Transaction,
}

impl PoolMode {
    fn as_str(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::Transaction => "transaction",
        }
    }
}

/// What the pooler serves.
#[derive(Debug, Clone)]
pub struct PoolerConfig {
    pub mode: PoolMode,
    /// The users it accepts (`trust`, as the private cluster does).
    pub users: Vec<String>,
    /// Database entries that force a user: (name clients ask for, database, user). Any
    /// other name is passed through to the database of that name, as the client's user.
    pub forced_users: Vec<(String, String, String)>,
    /// Server connections per database and user (PgBouncer's `default_pool_size`, 10 when
    /// `None`): fewer make clients share them more.
    pub pool_size: Option<u32>,
    /// Further `[pgbouncer]` settings, as `name = value`.
    pub settings: Vec<(String, String)>,
}

impl PoolerConfig {
    pub fn new(mode: PoolMode, users: &[&str]) -> Self {
        Self {
            mode,
            users: users.iter().map(|u| u.to_string()).collect(),
            forced_users: Vec::new(),
            pool_size: None,
            settings: Vec::new(),
        }
    }
}

/// A running PgBouncer. Dropping it stops PgBouncer and deletes its directory.
pub struct PrivatePooler {
    dir: Option<tempfile::TempDir>,
    socket_dir: PathBuf,
    /// The loopback port it also listens on, as a deployed PgBouncer listens on TCP; its
    /// Unix socket is named after the same port.
    tcp_port: u16,
    keeper: Option<Keeper>,
}

impl PrivatePooler {
    /// Starts PgBouncer in front of the server at `host` (a name, an address or a socket
    /// directory) and `port`.
    pub fn start(host: &str, port: u16, config: &PoolerConfig) -> Result<Self, SandboxError> {
        // A port free a moment ago may be taken by the time PgBouncer binds it: try another.
        let mut attempts = 3;
        loop {
            match Self::start_once(host, port, config) {
                Err(SandboxError::PoolerStart(_)) if attempts > 1 => attempts -= 1,
                started => return started,
            }
        }
    }

    fn start_once(host: &str, port: u16, config: &PoolerConfig) -> Result<Self, SandboxError> {
        let program = locate().ok_or(SandboxError::NoPooler)?;
        let tcp_port = free_loopback_port()?;
        reaper::sweep_abandoned(Path::new(PARENT_DIR));
        let run_as = unprivileged_account()?;
        let dir = tempfile::Builder::new()
            .prefix(DIR_PREFIX)
            .tempdir_in(PARENT_DIR)
            .map_err(|e| SandboxError::io("create the pooler directory", e))?;
        let socket_dir = dir.path().to_path_buf();
        prepare_directory(&socket_dir, run_as.as_ref())?;
        fs::write(socket_dir.join("users.txt"), users_file(&config.users))
            .map_err(|e| SandboxError::io("write the pooler's users", e))?;
        fs::write(
            socket_dir.join("pgbouncer.ini"),
            ini(&socket_dir, (host, port), tcp_port, config),
        )
        .map_err(|e| SandboxError::io("write pgbouncer.ini", e))?;
        let mut command = server_command(&program, &socket_dir, run_as.as_ref());
        command
            .arg("pgbouncer.ini")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let socket = socket_dir.join(format!(".s.PGSQL.{tcp_port}"));
        let log = socket_dir.join("pgbouncer.log");
        let (_, keeper) = process::spawn_kept("private-pgbouncer", command, move |child| {
            wait_until_listening(child, &socket, &log)
        })?;
        Ok(Self {
            dir: Some(dir),
            socket_dir,
            tcp_port,
            keeper: Some(keeper),
        })
    }

    /// A `postgres://` URL for `database` as `user`, through the pooler's socket.
    pub fn url(&self, user: &str, database: &str) -> String {
        let host = self.socket_dir.to_string_lossy().replace('/', "%2F");
        format!("postgres://{user}@{host}:{}/{database}", self.tcp_port)
    }

    /// A `postgres://` URL for `database` as `user`, through the pooler's loopback port.
    pub fn tcp_url(&self, user: &str, database: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/{database}", self.tcp_port)
    }

    /// What PgBouncer logged, for a test that failed.
    pub fn log(&self) -> String {
        fs::read_to_string(self.socket_dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PrivatePooler {
    fn drop(&mut self) {
        if let Some(keeper) = self.keeper.take() {
            let _ = keeper.stop.send(());
            let _ = keeper.thread.join();
        }
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
    }
}

/// `pgbouncer` on `PATH`, else where Debian installs it.
fn locate() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|dir| dir.join("pgbouncer"))
        .find(|candidate| candidate.is_file())
}

/// A loopback port nothing listens on now.
fn free_loopback_port() -> Result<u16, SandboxError> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .map_err(|e| SandboxError::io("find a free loopback port", e))?;
    listener
        .local_addr()
        .map(|address| address.port())
        .map_err(|e| SandboxError::io("find a free loopback port", e))
}

/// `"user" ""` per user: `trust` still wants each user listed.
fn users_file(users: &[String]) -> String {
    users.iter().fold(String::new(), |mut text, user| {
        let _ = writeln!(text, "\"{}\" \"\"", user.replace('"', "\"\""));
        text
    })
}

fn ini(dir: &Path, (host, port): (&str, u16), tcp_port: u16, config: &PoolerConfig) -> String {
    let server = format!("host={host} port={port}");
    let mut text = String::from("[databases]\n");
    for (name, database, user) in &config.forced_users {
        let _ = writeln!(text, "{name} = {server} dbname={database} user={user}");
    }
    let _ = writeln!(text, "* = {server}");
    let _ = write!(
        text,
        "\n[pgbouncer]\n\
         unix_socket_dir = {dir}\n\
         listen_addr = 127.0.0.1\n\
         listen_port = {tcp_port}\n\
         auth_type = trust\n\
         auth_file = {dir}/users.txt\n\
         pool_mode = {mode}\n\
         logfile = {dir}/pgbouncer.log\n\
         max_client_conn = 500\n\
         default_pool_size = {pool_size}\n",
        dir = dir.display(),
        mode = config.mode.as_str(),
        pool_size = config.pool_size.unwrap_or(10),
    );
    for (name, value) in &config.settings {
        let _ = writeln!(text, "{name} = {value}");
    }
    text
}

/// Waits until PgBouncer's socket is there, failing early (with its log) if it exits.
fn wait_until_listening(child: &mut Child, socket: &Path, log: &Path) -> Result<(), SandboxError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let said = fs::read_to_string(log).unwrap_or_default();
            let tail: Vec<&str> = said.lines().rev().take(5).collect();
            return Err(SandboxError::PoolerStart(format!(
                "pgbouncer exited ({status}): {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            )));
        }
        if socket.exists() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(SandboxError::PoolerStart(format!(
                "pgbouncer was not listening after {}s",
                READY_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_keeps_pgbouncer_defaults_for_startup_parameters() {
        let mut config = PoolerConfig::new(PoolMode::Transaction, &["postgres", "ops"]);
        config
            .forced_users
            .push(("forced".into(), "db".into(), "ops".into()));
        let text = ini(Path::new("/tmp/p"), ("/tmp/s", 5432), 6543, &config);
        assert!(text.contains("pool_mode = transaction"));
        assert!(text.contains("forced = host=/tmp/s port=5432 dbname=db user=ops"));
        assert!(!text.contains("ignore_startup_parameters"));
        assert_eq!(
            users_file(&config.users),
            "\"postgres\" \"\"\n\"ops\" \"\"\n"
        );
    }
}
