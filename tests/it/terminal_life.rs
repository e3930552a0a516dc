//! The console's terminal over its life, in a real pseudo-terminal: a dropped connection
//! (the master side closed, as sshd does), SIGQUIT, and job control with Ctrl-Z or SIGTSTP
//! then SIGCONT.

use crate::common;

use std::time::{Duration, Instant};

use common::TestDb;
use common::pty::Console;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

fn signal(console: &Console, signal: Signal) {
    let pid = Pid::from_raw(console.pid().expect("pid") as i32);
    kill(pid, signal).expect("signal");
}

/// The process state letter from /proc (`T` when stopped).
fn state(console: &Console) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", console.pid().expect("pid")))
        .expect("stat");
    let after = stat.rsplit_once(") ").expect("stat format").1;
    after.chars().next().expect("state")
}

/// The one child process of `pid` (the console a shell started).
fn child_of(pid: u32) -> u32 {
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).expect("children");
    children
        .split_whitespace()
        .next()
        .and_then(|c| c.parse().ok())
        .expect("a child")
}

/// The session a process belongs to (field 6 of /proc/PID/stat).
fn session_of(pid: u32) -> i64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let after = stat.rsplit_once(") ").expect("stat format").1;
    after
        .split_whitespace()
        .nth(3)
        .and_then(|s| s.parse().ok())
        .expect("session")
}

fn log_of(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("console.log")).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_terminal_ends_the_console_cleanly_and_says_so_in_the_log() {
    let db = TestDb::migrated().await;
    let logs = tempfile::tempdir().expect("log dir");
    let log_dir = logs.path().to_str().expect("utf-8");
    let mut console = Console::start(
        &["watch", "--database-url", &db.url()],
        &[("BOOTSTRAP_CONSOLE_LOG_DIR", log_dir)],
        80,
        24,
    );
    console.wait_ready("READ-WRITE", 20);
    console.hang_up();
    // No panic, no abort: a clean exit that says it was a hang-up (128 + SIGHUP).
    let status = console.wait_status(20);
    assert_eq!(
        (status.exit_code(), status.signal()),
        (129, None),
        "{}",
        log_of(logs.path())
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while !log_of(logs.path()).contains("console ended: hang-up") {
        assert!(Instant::now() < deadline, "{}", log_of(logs.path()));
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = log_of(logs.path());
    assert!(!log.contains("panicked"), "{log}");
    assert!(
        log.contains("console started: version")
            && log.contains("terminal 80x24")
            && log.contains("TERM=\"xterm-256color\""),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_that_fails_without_a_sighup_ends_the_console_cleanly_too() {
    // The console in a session of its own (`setsid`), under a shell that ignores the
    // hang-up: closing the master side sends the console no SIGHUP; only its terminal fails
    // (EIO), as behind a relay or in an orphaned process group.
    let db = TestDb::migrated().await;
    let logs = tempfile::tempdir().expect("log dir");
    let log_dir = logs.path().to_str().expect("utf-8");
    let status_file = logs.path().join("status");
    let script = format!(
        "trap '' HUP; setsid -w {} watch --database-url '{}'; echo $? > '{}'",
        Console::binary(),
        db.url(),
        status_file.display()
    );
    let mut console = Console::start_program(
        "bash",
        &["-c", &script],
        &[("BOOTSTRAP_CONSOLE_LOG_DIR", log_dir)],
        80,
        24,
    );
    console.wait_ready("READ-WRITE", 20);
    // The console is in a session of its own, not the terminal's: no SIGHUP will reach it.
    let shell = console.pid().expect("the shell's pid");
    assert_ne!(session_of(child_of(shell)), session_of(shell));
    console.hang_up();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        match std::fs::read_to_string(&status_file) {
            Ok(status) if status.ends_with('\n') => break status,
            _ => {
                assert!(Instant::now() < deadline, "{}", log_of(logs.path()));
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    };
    // A clean exit that says how it ended: 128 + SIGHUP, as a dropped session ends a
    // process (not 134, an abort); the log shows it was the console's own ending.
    assert_eq!(status.trim(), "129", "{}", log_of(logs.path()));
    let log = log_of(logs.path());
    assert!(log.contains("console ended: hang-up"), "{log}");
    // Its ending is the last line: no poll is left running to log a closed pool after it.
    let last = log.lines().last().unwrap_or_default();
    assert!(last.contains("console ended"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_terminal_under_demo_stops_and_deletes_the_private_cluster() {
    let logs = tempfile::tempdir().expect("log dir");
    let log_dir = logs.path().to_str().expect("utf-8");
    let mut console = Console::start(
        &["demo", "--tenants", "1", "--spaces", "3", "--workers", "1"],
        &[("BOOTSTRAP_CONSOLE_LOG_DIR", log_dir)],
        80,
        24,
    );
    console.wait_for("SANDBOX", 60);
    let raw = String::from_utf8_lossy(&console.raw_output()).into_owned();
    let dir = raw
        .split("%2F")
        .nth(2)
        .and_then(|rest| rest.split(':').next())
        .map(|name| format!("/tmp/{name}"))
        .expect("the private cluster's socket directory in the announcement");
    assert!(std::path::Path::new(&dir).exists(), "{dir} while running");
    console.hang_up();
    let status = console.wait_status(60);
    assert_eq!(
        (status.exit_code(), status.signal()),
        (129, None),
        "{}",
        log_of(logs.path())
    );
    assert!(!std::path::Path::new(&dir).exists(), "{dir} is deleted");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigquit_restores_the_terminal() {
    let db = TestDb::migrated().await;
    let mut console = Console::start(&["watch", "--database-url", &db.url()], &[], 80, 24);
    console.wait_ready("READ-WRITE", 20);
    signal(&console, Signal::SIGQUIT);
    assert_eq!(console.wait_exit(10), 131, "128 + SIGQUIT");
    assert!(!console.alternate_screen(), "the terminal is restored");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_and_sigterm_from_elsewhere_end_it_cleanly() {
    let db = TestDb::migrated().await;
    for (sig, code) in [(Signal::SIGINT, 130), (Signal::SIGTERM, 143)] {
        let mut console = Console::start(&["watch", "--database-url", &db.url()], &[], 80, 24);
        console.wait_ready("READ-WRITE", 20);
        signal(&console, sig);
        assert_eq!(console.wait_exit(10), code, "{sig}: 128 + its number");
        assert!(
            !console.alternate_screen(),
            "{sig}: the terminal is restored"
        );
        assert!(!console.cursor_hidden(), "{sig}: with its cursor");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_z_suspends_to_the_shell_and_fg_takes_the_screen_back() {
    let db = TestDb::migrated().await;
    // An interactive shell with job control, as on a jump host.
    let mut shell = Console::start_program(
        "bash",
        &["--norc", "--noprofile", "-i"],
        &[("PS1", "prompt$ ")],
        80,
        24,
    );
    shell.wait_for("prompt$", 10);
    shell.send(&format!(
        "{} watch --database-url '{}'\r",
        Console::binary(),
        db.url()
    ));
    shell.wait_for("READ-WRITE", 20);
    assert!(shell.alternate_screen());
    shell.send("\x1a");
    shell.wait_until("the shell's prompt back", 10, |s| {
        s.contains("Stopped") && s.trim_end().ends_with("prompt$")
    });
    assert!(!shell.alternate_screen(), "the shell's screen is back");
    assert!(!shell.cursor_hidden(), "with its cursor");
    shell.send("fg\r");
    shell.wait_until("the console's screen again", 10, |s| {
        s.contains("READ-WRITE")
    });
    assert!(shell.alternate_screen(), "raw mode and the screen are back");
    // A SIGTSTP from elsewhere (`kill -TSTP`) suspends it the same way.
    let console = child_of(shell.pid().expect("the shell's pid"));
    kill(Pid::from_raw(console as i32), Signal::SIGTSTP).expect("SIGTSTP");
    shell.wait_until("the shell's prompt back again", 10, |s| {
        s.contains("Stopped") && s.trim_end().ends_with("prompt$")
    });
    assert!(!shell.alternate_screen() && !shell.cursor_hidden());
    shell.send("fg\r");
    shell.wait_until("the console's screen again", 10, |s| {
        s.contains("READ-WRITE")
    });
    // Raw mode is back: a single key acts, no Enter needed.
    shell.send("q");
    shell.wait_for("prompt$", 10);
    assert!(!shell.alternate_screen() && !shell.cursor_hidden());
    shell.send("exit\r");
    assert_eq!(shell.wait_exit(10), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_z_without_a_shell_to_come_back_to_says_so_instead_of_freezing() {
    let db = TestDb::migrated().await;
    // The console leads its own session (`ssh -t host bootstrap-console watch`).
    let mut console = Console::start(&["watch", "--database-url", &db.url()], &[], 80, 24);
    console.wait_ready("READ-WRITE", 20);
    console.send("\x1a");
    console.wait_for("cannot suspend", 5);
    assert_ne!(state(&console), 'T', "not stopped");
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}
