//! Cleanup for the private clusters that no destructor will stop: clusters kept until process
//! exit, and directories left behind by a process that was killed.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant, SystemTime};

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// Where private clusters live: a directory each, named with [`DIR_PREFIX`], holding the
/// owning process's pid in [`OWNER_FILE`] (what tells an abandoned one from a live one).
pub(super) const PARENT_DIR: &str = "/tmp";
pub(super) const DIR_PREFIX: &str = "bc-pg-";
pub(super) const OWNER_FILE: &str = "owner.pid";

/// Clusters to stop when the process exits: (postmaster pid, directory).
static AT_EXIT: Mutex<Vec<(u32, PathBuf)>> = Mutex::new(Vec::new());
static REGISTER: Once = Once::new();

/// A directory younger than this without an owner file may be one being created right now.
const CREATION_GRACE: Duration = Duration::from_secs(120);

/// Stops the server and deletes `dir` when the process exits.
pub(super) fn stop_at_exit(server_pid: u32, dir: PathBuf) {
    if let Ok(mut list) = AT_EXIT.lock() {
        list.push((server_pid, dir));
    }
    REGISTER.call_once(register_exit_hook);
}

#[allow(unsafe_code)]
fn register_exit_hook() {
    // SAFETY: `atexit` only stores the function pointer; `run_exit_hook` is an `extern "C"`
    // function that never unwinds (it catches nothing that could panic: all errors are ignored).
    let status = unsafe { libc::atexit(run_exit_hook) };
    if status != 0 {
        tracing::warn!("could not register the private PostgreSQL exit hook");
    }
}

extern "C" fn run_exit_hook() {
    let clusters = match AT_EXIT.lock() {
        Ok(mut list) => std::mem::take(&mut *list),
        Err(_) => return,
    };
    for (pid, dir) in clusters {
        stop_child(Pid::from_raw(pid as i32));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Stops a server that is our child and reaps it, escalating like the keeper does.
fn stop_child(pid: Pid) {
    for (signal, patience) in [
        (Signal::SIGINT, Duration::from_secs(15)),
        (Signal::SIGQUIT, Duration::from_secs(5)),
        (Signal::SIGKILL, Duration::from_secs(5)),
    ] {
        if kill(pid, signal).is_err() {
            return;
        }
        let deadline = Instant::now() + patience;
        while Instant::now() < deadline {
            match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(10)),
                _ => return,
            }
        }
    }
}

/// Deletes cluster directories under `parent` whose owning process is gone, stopping any
/// server still running in one (the parent-death signal normally stopped it already).
pub(super) fn sweep_abandoned(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let is_cluster = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(DIR_PREFIX));
        if is_cluster && is_abandoned(&entry.path()) {
            if let Some(server) = read_pid(&entry.path().join("data/postmaster.pid"))
                && is_alive(server)
            {
                let _ = kill(server, Signal::SIGQUIT);
            }
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn is_abandoned(dir: &Path) -> bool {
    match read_pid(&dir.join(OWNER_FILE)) {
        Some(owner) => !is_alive(owner),
        None => older_than(dir, CREATION_GRACE),
    }
}

fn read_pid(file: &Path) -> Option<Pid> {
    let text = std::fs::read_to_string(file).ok()?;
    let pid = text.lines().next()?.trim().parse::<i32>().ok()?;
    (pid > 0).then(|| Pid::from_raw(pid))
}

/// Signal 0 probes for existence; EPERM still means the process exists.
fn is_alive(pid: Pid) -> bool {
    !matches!(kill(pid, None), Err(nix::errno::Errno::ESRCH))
}

fn older_than(dir: &Path, age: Duration) -> bool {
    std::fs::metadata(dir)
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|modified| SystemTime::now().duration_since(modified).ok())
        .is_some_and(|elapsed| elapsed > age)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_whose_owner_is_dead_is_swept_and_a_live_one_is_kept() {
        let parent = tempfile::tempdir().expect("temp dir");
        let dead = parent.path().join(format!("{DIR_PREFIX}dead"));
        let live = parent.path().join(format!("{DIR_PREFIX}live"));
        let unrelated = parent.path().join("someone-else");
        for dir in [&dead, &live, &unrelated] {
            std::fs::create_dir(dir).expect("mkdir");
        }
        // A pid that cannot exist (above the kernel's pid_max ceiling of 2^22).
        std::fs::write(dead.join(OWNER_FILE), "4194305").expect("write");
        std::fs::write(live.join(OWNER_FILE), std::process::id().to_string()).expect("write");
        std::fs::write(unrelated.join(OWNER_FILE), "4194305").expect("write");

        sweep_abandoned(parent.path());

        assert!(!dead.exists(), "the dead owner's directory is swept");
        assert!(live.exists(), "a live owner's directory is kept");
        assert!(unrelated.exists(), "only cluster directories are touched");
    }

    #[test]
    fn a_fresh_directory_without_owner_file_is_kept() {
        let parent = tempfile::tempdir().expect("temp dir");
        let young = parent.path().join(format!("{DIR_PREFIX}young"));
        std::fs::create_dir(&young).expect("mkdir");
        sweep_abandoned(parent.path());
        assert!(young.exists());
    }
}
