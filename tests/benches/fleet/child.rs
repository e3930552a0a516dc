//! Wall time and peak memory of a whole command (the console's `status`, or `psql` as the
//! baseline). The benchmark runs itself as a small wrapper process: the wrapper starts the
//! command, waits for it, and reads the peak resident size of its only child from
//! `getrusage(RUSAGE_CHILDREN)` — exact, with no sampling.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The argument that turns this binary into the wrapper.
pub const WRAPPER: &str = "--measure-child";

/// What a command cost.
#[derive(Debug, Clone, Copy)]
pub struct Cost {
    pub wall: Duration,
    pub peak_rss_mb: f64,
    pub exit: i32,
}

/// Runs `program args` with its output discarded, through the wrapper.
pub fn measure(program: &str, args: &[&str]) -> Cost {
    let output = Command::new(std::env::current_exe().expect("this benchmark"))
        .arg(WRAPPER)
        .arg(program)
        .args(args)
        .env_remove("DATABASE_URL")
        .stderr(Stdio::inherit())
        .output()
        .expect("run the wrapper");
    let text = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<f64> = text
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    let [wall_ms, rss_kb, exit] = fields[..] else {
        panic!("the wrapper said {text:?}");
    };
    Cost {
        wall: Duration::from_secs_f64(wall_ms / 1000.0),
        peak_rss_mb: rss_kb / 1024.0,
        exit: exit as i32,
    }
}

/// The wrapper's side: `<program> <args…>` → prints `wall_ms peak_rss_kb exit_code`.
pub fn wrapper(command: &[String]) -> ! {
    let started = Instant::now();
    let status = Command::new(&command[0])
        .args(&command[1..])
        .stdout(Stdio::null())
        .stdin(Stdio::null())
        .status()
        .expect("run the measured command");
    let wall = started.elapsed();
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    println!(
        "{} {} {}",
        wall.as_secs_f64() * 1000.0,
        usage.max_rss(),
        status.code().unwrap_or(-1)
    );
    std::process::exit(0);
}
