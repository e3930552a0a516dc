//! The private PostgreSQL: it starts, serves, stops, and leaves no process or directory behind —
//! after a drop, a panicking owner, a process that exits without dropping it, a SIGTERM to the
//! binary and a SIGKILL to the binary. It runs as root by running the server unprivileged.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bootstrap_console::sandbox::{BINDIR_OVERRIDE, PrivateCluster};
use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, geteuid};
use sqlx::{ConnectOptions, Connection};

const BINARY: &str = env!("CARGO_BIN_EXE_bootstrap-console");
const CHILD_MODE: &str = "BC_TEST_KEPT_CLUSTER_CHILD";

/// Gone, or a zombie nobody has reaped yet (it holds no resources and serves nothing).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn process_uid(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let line = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .expect("Uid line");
    line.split_whitespace()
        .nth(1)
        .expect("uid")
        .parse()
        .expect("number")
}

#[tokio::test]
async fn a_cluster_starts_serves_over_its_socket_only_and_stops_without_a_trace() {
    let cluster = PrivateCluster::start().expect("start");
    let pid = cluster.server_pid();
    let dir = cluster.socket_dir().to_path_buf();

    let mut conn = cluster
        .connect_options("postgres")
        .connect()
        .await
        .expect("connect");
    let (user, listen): (String, String) =
        sqlx::query_as("SELECT current_user::text, current_setting('listen_addresses')")
            .fetch_one(&mut conn)
            .await
            .expect("query");
    assert_eq!(user, "postgres");
    assert_eq!(listen, "", "no TCP listener");
    conn.close().await.expect("close");
    if geteuid().is_root() {
        assert_ne!(process_uid(pid), 0, "the server never runs as root");
    }

    cluster.stop().expect("stop");
    assert!(process_gone(pid), "postmaster {pid} is gone");
    assert!(!dir.exists(), "{} is deleted", dir.display());
}

#[tokio::test]
async fn two_clusters_run_side_by_side_without_colliding() {
    let first = PrivateCluster::start().expect("first");
    let second = PrivateCluster::start().expect("second");
    assert_eq!(
        first.port(),
        second.port(),
        "same port name, different sockets"
    );
    for cluster in [&first, &second] {
        let mut conn = cluster
            .connect_options("postgres")
            .connect()
            .await
            .expect("connect");
        let dir: String = sqlx::query_scalar("SELECT current_setting('unix_socket_directories')")
            .fetch_one(&mut conn)
            .await
            .expect("query");
        assert_eq!(Path::new(&dir), cluster.socket_dir());
    }
}

#[test]
fn a_panicking_owner_still_stops_the_server_and_deletes_the_directory() {
    let (tx, rx) = std::sync::mpsc::channel();
    let owner = std::thread::spawn(move || {
        let cluster = PrivateCluster::start().expect("start");
        tx.send((cluster.server_pid(), cluster.socket_dir().to_path_buf()))
            .expect("send");
        panic!("the owning test fails while the cluster runs");
    });
    assert!(owner.join().is_err(), "the owner panicked");
    let (pid, dir) = rx.recv().expect("cluster details");
    assert!(process_gone(pid), "postmaster {pid} is gone");
    assert!(!dir.exists(), "{} is deleted", dir.display());
}

/// In a child process (started by the test named `test`, with [`CHILD_MODE`] set): starts a
/// cluster kept until exit, prints it, and ends as `mode` says. Returns `false` in the parent.
fn kept_cluster_child_body() -> bool {
    let Ok(mode) = std::env::var(CHILD_MODE) else {
        return false;
    };
    let kept = PrivateCluster::start().expect("start").keep_until_exit();
    println!("KEPT {} {}", kept.server_pid(), kept.socket_dir().display());
    if mode == "panic" {
        panic!("the owning test panics after starting a kept cluster");
    }
    true
}

/// Runs the test `test` (this module's) again in a child process, as its child body in `mode`.
fn run_kept_cluster_child(test: &str, mode: &str) -> (u32, PathBuf, bool) {
    let output = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            &format!("{}::{test}", module_path!().trim_start_matches("it::")),
            "--nocapture",
        ])
        .env(CHILD_MODE, mode)
        .output()
        .expect("run child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("KEPT "))
        .unwrap_or_else(|| panic!("child printed no cluster: {stdout}"));
    let (pid, dir) = line.split_once(' ').expect("pid and dir");
    (
        pid.parse().expect("pid"),
        PathBuf::from(dir),
        output.status.success(),
    )
}

#[test]
fn a_cluster_kept_until_exit_is_stopped_when_the_process_exits() {
    if kept_cluster_child_body() {
        return;
    }
    let test = "a_cluster_kept_until_exit_is_stopped_when_the_process_exits";
    let (pid, dir, succeeded) = run_kept_cluster_child(test, "pass");
    assert!(succeeded);
    assert!(process_gone(pid), "postmaster {pid} is gone");
    assert!(!dir.exists(), "{} is deleted", dir.display());
}

#[test]
fn a_cluster_kept_until_exit_is_stopped_when_its_test_panics() {
    if kept_cluster_child_body() {
        return;
    }
    let test = "a_cluster_kept_until_exit_is_stopped_when_its_test_panics";
    let (pid, dir, succeeded) = run_kept_cluster_child(test, "panic");
    assert!(!succeeded, "the child test failed");
    assert!(process_gone(pid), "postmaster {pid} is gone");
    assert!(!dir.exists(), "{} is deleted", dir.display());
}

/// Starts `bootstrap-console sandbox` and reads the server pid and directory it prints.
fn start_sandbox_binary() -> (Child, u32, PathBuf) {
    let mut child = Command::new(BINARY)
        .arg("sandbox")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the binary");
    let stdout = child.stdout.take().expect("stdout");
    let (mut pid, mut dir) = (None, None);
    let mut lines = BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        let line = line.expect("line");
        if let Some(rest) = line.strip_prefix("server pid ") {
            pid = Some(rest.trim().parse::<u32>().expect("pid"));
        }
        if let Some(rest) = line.strip_prefix("directory ") {
            dir = Some(PathBuf::from(rest.trim()));
            break;
        }
    }
    // Keep reading, as a terminal would, so the command never writes into a closed pipe.
    std::thread::spawn(move || for _ in lines {});
    (
        child,
        pid.expect("server pid printed"),
        dir.expect("directory printed"),
    )
}

#[test]
fn the_sandbox_command_cleans_up_on_sigterm() {
    let (mut child, pid, dir) = start_sandbox_binary();
    assert!(!process_gone(pid) && dir.exists());
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).expect("SIGTERM");
    let status = child.wait().expect("wait");
    assert!(status.success(), "a clean stop: {status}");
    assert!(process_gone(pid), "postmaster {pid} is gone");
    assert!(!dir.exists(), "{} is deleted", dir.display());
}

#[test]
fn a_killed_sandbox_takes_its_server_down_and_the_next_start_sweeps_its_directory() {
    let (mut child, pid, dir) = start_sandbox_binary();
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).expect("SIGKILL");
    child.wait().expect("wait");
    eventually("the orphaned postmaster exits", || process_gone(pid));
    assert!(dir.exists(), "nobody could delete it yet");
    let next = PrivateCluster::start().expect("start another");
    assert!(!dir.exists(), "the abandoned {} was swept", dir.display());
    next.stop().expect("stop");
}

#[test]
fn without_server_binaries_the_user_is_told_what_to_install() {
    let empty = tempfile::tempdir().expect("temp dir");
    let output = Command::new(BINARY)
        .arg("sandbox")
        .env(BINDIR_OVERRIDE, empty.path())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("install the PostgreSQL server package"),
        "{stderr}"
    );
    assert!(stderr.contains("--database-url"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one sentence: {stderr}");
}

#[test]
fn the_demo_runs_a_labelled_rollout_and_cleans_up_on_sigterm() {
    let logs = tempfile::tempdir().expect("log dir");
    let mut child = Command::new(BINARY)
        .env("BOOTSTRAP_CONSOLE_LOG_DIR", logs.path())
        .args([
            "demo",
            "--tenants",
            "1",
            "--spaces",
            "4",
            "--report-every",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the demo");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a line").expect("text");
    let url = first
        .strip_prefix("SANDBOX private PostgreSQL at ")
        .unwrap_or_else(|| panic!("labelled SANDBOX: {first}"));
    let dir = PathBuf::from(
        url.trim_start_matches("postgres://postgres@")
            .split(':')
            .next()
            .expect("host")
            .replace("%2F", "/"),
    );
    assert!(dir.exists());
    let summary = lines
        .by_ref()
        .map(|l| l.expect("text"))
        .find(|l| l.starts_with("SANDBOX ") && l.contains("readable"))
        .expect("a rollout summary");
    assert!(summary.contains("/"), "{summary}");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).expect("SIGTERM");
    // Keep reading so the demo never blocks on a full pipe while it stops.
    for _ in lines {}
    let status = child.wait().expect("wait");
    // Ended by SIGTERM, cleanly: 128 + 15, so a supervisor tells it from an ordinary end.
    assert_eq!(status.code(), Some(143), "{status}");
    eventually("the sandbox directory is deleted", || !dir.exists());
    // The text report logs its life as the live console does, its ending last.
    let log = std::fs::read_to_string(logs.path().join("console.log")).expect("the log");
    assert!(log.contains("text report started"), "{log}");
    let last = log.lines().last().unwrap_or_default();
    assert!(last.contains("text report ended: SIGTERM"), "{log}");
}
