//! `migrate` and `sandbox`: the commands that set up schemas and databases.

use std::process::ExitCode;

use super::{ConnectArgs, Failure, StopSignals};
use crate::sandbox::{SandboxDatabase, SandboxFailure, SandboxSchema};
use crate::store::schema;

pub(super) async fn migrate(args: &ConnectArgs) -> Result<ExitCode, Failure> {
    let target = args.target()?;
    let mut conn = target.connect().await?;
    let report = schema::migrate_console(&mut conn).await?;
    for unit in &report.applied {
        println!("applied console schema unit {unit} to {target}");
    }
    if report.applied.is_empty() {
        println!(
            "console schema already up to date on {target} ({} unit(s) present); nothing to do",
            report.already_present.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) async fn sandbox(platform_only: bool) -> Result<ExitCode, Failure> {
    let level = if platform_only {
        SandboxSchema::PlatformStandIn
    } else {
        SandboxSchema::Full
    };
    let mut signals = StopSignals::install()?;
    let sandbox = SandboxDatabase::start(level).await?;
    println!("SANDBOX private PostgreSQL is ready (Unix socket only, no TCP port).");
    println!("DATABASE_URL={}", sandbox.url());
    println!("server pid {}", sandbox.cluster().server_pid());
    println!("directory {}", sandbox.cluster().socket_dir().display());
    println!("Press Ctrl-C to stop it and delete it.");
    signals.wait().await;
    sandbox
        .stop()
        .map_err(|e| Failure::Sandbox(SandboxFailure::Sandbox(e)))?;
    // stderr: the reader of stdout (a script that took the URL) may be gone by now.
    eprintln!("private PostgreSQL stopped and deleted.");
    Ok(ExitCode::SUCCESS)
}
