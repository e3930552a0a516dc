//! Running a server program (PostgreSQL, PgBouncer) for the sandbox: as the unprivileged
//! `postgres` account when this process is root (neither will run as root), as a child of a
//! keeper thread that outlives it, and dying with that thread if this process is killed.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, User, geteuid};

use super::SandboxError;
use super::reaper::OWNER_FILE;

/// The account servers run as when this process is root; also the cluster's superuser.
pub(super) const SERVER_ACCOUNT: &str = "postgres";

/// The thread that spawned the server. The parent-death signal fires when the *spawning thread*
/// exits, so this thread must outlive the server: it parks until asked to stop.
pub(super) struct Keeper {
    pub(super) stop: mpsc::Sender<()>,
    pub(super) thread: JoinHandle<()>,
}

/// The unprivileged account the server runs as, when we are root.
#[derive(Clone)]
pub(super) struct RunAs {
    pub(super) uid: u32,
    pub(super) gid: u32,
    name: String,
    home: PathBuf,
}

pub(super) fn unprivileged_account() -> Result<Option<RunAs>, SandboxError> {
    if !geteuid().is_root() {
        return Ok(None);
    }
    let user = User::from_name(SERVER_ACCOUNT)
        .ok()
        .flatten()
        .ok_or(SandboxError::NoUnprivilegedUser)?;
    Ok(Some(RunAs {
        uid: user.uid.as_raw(),
        gid: user.gid.as_raw(),
        name: user.name,
        home: user.dir,
    }))
}

/// Records who owns the directory (for the sweep) and hands it to the server's account.
pub(super) fn prepare_directory(dir: &Path, run_as: Option<&RunAs>) -> Result<(), SandboxError> {
    fs::write(dir.join(OWNER_FILE), std::process::id().to_string())
        .map_err(|e| SandboxError::io("write the owner file", e))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .map_err(|e| SandboxError::io("restrict the cluster directory", e))?;
    if let Some(account) = run_as {
        std::os::unix::fs::chown(dir, Some(account.uid), Some(account.gid))
            .map_err(|e| SandboxError::io("hand the cluster directory to postgres", e))?;
    }
    Ok(())
}

/// A command for a server binary, run as the unprivileged account when there is one.
pub(super) fn server_command(program: &Path, dir: &Path, run_as: Option<&RunAs>) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(dir)
        .env("LC_ALL", "C")
        .env_remove("PGDATA")
        .stdin(Stdio::null());
    if let Some(account) = run_as {
        command
            .uid(account.uid)
            .gid(account.gid)
            .env("USER", &account.name)
            .env("HOME", &account.home);
    }
    command
}

/// Spawns `command` from a keeper thread named `name`, waits until `ready` says it is up (it
/// is given the child to watch for an early exit), and returns its pid and the keeper, which
/// stops it when told to or when dropped.
pub(super) fn spawn_kept(
    name: &str,
    mut command: Command,
    ready: impl FnOnce(&mut Child) -> Result<(), SandboxError> + Send + 'static,
) -> Result<(u32, Keeper), SandboxError> {
    command
        .stdin(Stdio::null())
        // Its own process group: a Ctrl-C on our terminal must not reach the server directly;
        // we stop it ourselves, in order.
        .process_group(0);
    die_with_spawning_thread(&mut command);
    let (ready_tx, ready_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let what = name.to_string();
    let thread = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let mut child = match command.spawn() {
                Ok(child) => child,
                Err(e) => {
                    let _ = ready_tx.send(Err(SandboxError::io(&format!("start {what}"), e)));
                    return;
                }
            };
            match ready(&mut child) {
                Ok(()) => {
                    let _ = ready_tx.send(Ok(child.id()));
                }
                Err(e) => {
                    stop_server(&mut child);
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            }
            // Either a stop request or the handle going away ends the wait.
            let _ = stop_rx.recv();
            stop_server(&mut child);
        })
        .map_err(|e| SandboxError::io("start a keeper thread", e))?;
    let pid = ready_rx
        .recv()
        .map_err(|_| SandboxError::Stop("a keeper thread died".into()))??;
    Ok((
        pid,
        Keeper {
            stop: stop_tx,
            thread,
        },
    ))
}

/// Makes the kernel send `SIGQUIT` (immediate shutdown) to the server when the thread that
/// spawned it dies, so a killed console never leaves a server running.
#[allow(unsafe_code)]
fn die_with_spawning_thread(command: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only makes the prctl
    // system call, which is async-signal-safe; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| {
            nix::sys::prctl::set_pdeathsig(Signal::SIGQUIT).map_err(std::io::Error::from)
        });
    }
}

/// Fast shutdown (`SIGINT`), escalating to immediate (`SIGQUIT`) and then `SIGKILL`.
fn stop_server(child: &mut Child) {
    let pid = Pid::from_raw(child.id() as i32);
    for (signal, patience) in [
        (Signal::SIGINT, Duration::from_secs(15)),
        (Signal::SIGQUIT, Duration::from_secs(5)),
        (Signal::SIGKILL, Duration::from_secs(5)),
    ] {
        if kill(pid, signal).is_err() {
            break;
        }
        let deadline = Instant::now() + patience;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let _ = child.wait();
}
