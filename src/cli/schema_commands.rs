//! `migrate` and `sandbox`: the commands that set up schemas and databases.

use super::outln;
use std::process::ExitCode;

use super::{ConnectArgs, Failure, StopSignals};
use crate::sandbox::{SandboxDatabase, SandboxFailure, SandboxSchema};
use crate::store::schema;

pub(super) async fn migrate(args: &ConnectArgs) -> Result<ExitCode, Failure> {
    let target = args.target()?;
    let mut conn = target.connect().await?;
    let rights = schema::migrate_rights(&mut conn)
        .await
        .map_err(crate::store::StoreError::from)?;
    if let Some(sentence) = migrate_refusal(&rights) {
        return Err(Failure::NotPermitted(sentence));
    }
    let report = schema::migrate_console(&mut conn).await?;
    for unit in &report.applied {
        outln!("applied console schema unit {unit} to {target}");
    }
    for unit in &report.deferred {
        super::say(&format!(
            "bootstrap-console: console schema unit {unit} waits for the ledger tables, which \
             {target} lacks: actions stay unavailable until `bootstrap-console migrate` runs \
             again after the platform's migration 0009"
        ));
    }
    if report.applied.is_empty() {
        outln!(
            "console schema already up to date on {target} ({} unit(s) present); nothing to do",
            report.already_present.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Why this role may not run `migrate`, in a sentence that says who may; `None` when it may.
/// Whoever runs it owns the audit log, and a console role that owned it could disable the
/// triggers that keep it append-only: the ledger's owner (or a superuser) runs it, and once the
/// console's schema exists, only its owner.
fn migrate_refusal(rights: &schema::MigrateRights) -> Option<String> {
    if rights.rolsuper {
        return None;
    }
    let clean = |name: &str| crate::domain::text::clean(name, 64);
    let me = clean(&rights.name);
    if let Some(owner) = rights
        .console_owner
        .as_deref()
        .filter(|_| !rights.owns_console)
    {
        return Some(format!(
            "migrate must be run by role {}, the owner of schema bootstrap_console (or by a \
             superuser), not by role {me}",
            clean(owner)
        ));
    }
    if let Some(owner) = rights
        .ledger_owner
        .as_deref()
        .filter(|_| !rights.owns_ledger)
    {
        return Some(format!(
            "migrate must be run by role {}, the owner of the ledger tables (or by a \
             superuser), not by role {me}: whoever runs it owns the audit log",
            clean(owner)
        ));
    }
    if !rights.may_create_schema {
        return Some(format!(
            "migrate must be run by a role that may create schemas in database {} (the \
             ledger's owner, or a superuser); role {me} may not",
            clean(&rights.database)
        ));
    }
    None
}

pub(super) async fn sandbox(platform_only: bool, replica: bool) -> Result<ExitCode, Failure> {
    let level = if platform_only {
        SandboxSchema::PlatformStandIn
    } else {
        SandboxSchema::Full
    };
    let mut signals = StopSignals::install()?;
    let mut sandbox = SandboxDatabase::start(level).await?;
    if replica {
        sandbox.start_standby().await?;
    }
    outln!("SANDBOX private PostgreSQL is ready (Unix socket only, no TCP port).");
    outln!("DATABASE_URL={}", sandbox.url());
    if let Some(url) = sandbox.standby_url() {
        outln!("BOOTSTRAP_CONSOLE_READ_URL={url}");
    }
    outln!("server pid {}", sandbox.cluster().server_pid());
    outln!("directory {}", sandbox.cluster().socket_dir().display());
    if let Some(standby) = sandbox.standby() {
        outln!("standby server pid {}", standby.server_pid());
        outln!("standby directory {}", standby.socket_dir().display());
    }
    outln!("Press Ctrl-C to stop it and delete it.");
    signals.wait().await;
    sandbox
        .stop()
        .map_err(|e| Failure::Sandbox(SandboxFailure::Sandbox(e)))?;
    // stderr: the reader of stdout (a script that took the URL) may be gone by now.
    super::say("private PostgreSQL stopped and deleted.");
    Ok(ExitCode::SUCCESS)
}
