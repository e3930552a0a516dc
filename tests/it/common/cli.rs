//! Running the real binary as a script does: output, exit code, one sentence on errors.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use super::TestDb;

pub const BINARY: &str = env!("CARGO_BIN_EXE_bootstrap-console");

pub fn run(args: &[&str]) -> Output {
    run_in_locale(args, "C.UTF-8")
}

/// [`run`] with `LANG` set to `lang` (and nothing overriding it).
pub fn run_in_locale(args: &[&str], lang: &str) -> Output {
    command(args, lang).output().expect("run the binary")
}

/// [`run`] without any `PG*` variable but `envs`, and with `HOME` where `envs` says (a home
/// with no `.pgpass` or service file, unless the test put one there).
pub fn run_with_env(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = command(args, "C.UTF-8");
    for (name, _) in std::env::vars() {
        if name.starts_with("PG") {
            command.env_remove(name);
        }
    }
    command
        .envs(envs.iter().copied())
        .output()
        .expect("run the binary")
}

/// The binary with `args`, under `lang`, with the environment a test controls.
fn command(args: &[&str], lang: &str) -> Command {
    let mut command = Command::new(BINARY);
    command
        .args(args)
        .env("LANG", lang)
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env_remove("DATABASE_URL")
        // Tables are laid out for 80 columns unless a test sets a width.
        .env_remove("COLUMNS")
        // The log's default level: tests read what the console logs.
        .env_remove("RUST_LOG")
        .env("BOOTSTRAP_CONSOLE_LOG_DIR", super::pty::console_log_dir())
        .stdin(std::process::Stdio::null());
    command
}

pub fn on(db: &TestDb, args: &[&str]) -> Output {
    on_url(&db.url(), args)
}

/// `args` against the database `url` names.
pub fn on_url(url: &str, args: &[&str]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--database-url", url]);
    run(&all)
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// An expected failure: exactly one sentence on stderr, no backtrace.
pub fn assert_one_sentence(output: &Output) -> String {
    let err = stderr(output);
    assert_eq!(err.trim().lines().count(), 1, "one line on stderr: {err}");
    assert!(err.starts_with("bootstrap-console: "), "{err}");
    assert!(
        !err.contains("BACKTRACE") && !err.contains("panicked"),
        "{err}"
    );
    err
}

/// `on`, with `input` on standard input.
pub fn on_with_input(db: &TestDb, args: &[&str], input: &str) -> Output {
    let url = db.url();
    let mut child = Command::new(BINARY)
        .args(args)
        .args(["--database-url", url.as_str()])
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env_remove("DATABASE_URL")
        .env("BOOTSTRAP_CONSOLE_LOG_DIR", super::pty::console_log_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the binary");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("wait for the binary")
}
