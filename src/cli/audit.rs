//! `audit verify` (the hash chain, recomputed) and `grants` (the SQL for a least-privilege
//! role, printed for review).

use std::io::IsTerminal;
use std::process::ExitCode;

use super::args::{AuditVerifyArgs, GrantsArgs, ReadArgs};
use super::{Failure, exit, outln};
use crate::domain::audit_chain::{self, is_sha256_hex};
use crate::domain::session::{OpenError, Session};
use crate::domain::signals::Thresholds;
use crate::store::grants::{self, Duty, GrantsFor};

pub(super) async fn verify(args: &AuditVerifyArgs) -> Result<ExitCode, Failure> {
    let expected = args.expect_head.as_deref().map(str::trim);
    if let Some(head) = expected
        && !is_sha256_hex(head)
    {
        return Err(Failure::Usage(format!(
            "--expect-head takes a whole sha256 in hexadecimal (64 digits, as the `audit chain \
             head:` lines print it), not {:?}",
            crate::domain::text::clean(head, 80)
        )));
    }
    // The primary: a head just logged by an action must not look removed on a lagging standby.
    let no_standby = ReadArgs { read_url: None };
    let session =
        super::status::open_to_read(&args.connect, &no_standby, None, Thresholds::default())
            .await?;
    let result = run(&session, expected).await;
    session.close().await;
    result
}

async fn run(session: &Session, expected: Option<&str>) -> Result<ExitCode, Failure> {
    chain_readable(session)?;
    let bar = std::io::stderr().is_terminal();
    let found = audit_chain::verify(session, expected, |records| {
        if bar {
            use std::io::Write;
            let _ = write!(
                std::io::stderr().lock(),
                "\r\x1b[Kverifying the audit chain: {records} records"
            );
        }
    })
    .await;
    if bar {
        super::say("");
    }
    let found = found?;
    let owner = session
        .capabilities()
        .audit_owner
        .as_deref()
        .map(|o| crate::domain::text::clean(o, 64))
        .unwrap_or_default();
    match &found.broken {
        None => {
            outln!("audit chain intact: {} records", found.records);
            match &found.head {
                Some(head) => outln!("head: {head}"),
                None => outln!("head: none (the audit log is empty)"),
            }
            if let Some(expected) = expected {
                outln!(
                    "contains the expected head {}",
                    expected.to_ascii_lowercase()
                );
            }
            outln!("the audit log is owned by role {owner}: only it can disable the checks");
            Ok(ExitCode::from(exit::DONE))
        }
        Some(broken) => {
            outln!("audit chain BROKEN: {broken}");
            let intact = found.records.saturating_sub(1);
            match &found.head {
                Some(head) => outln!("the {intact} records before it are intact, up to {head}"),
                None => outln!("no record before it is intact"),
            }
            outln!("the audit log is owned by role {owner}: only it can have done this");
            Ok(ExitCode::from(exit::NEEDS_ATTENTION))
        }
    }
}

/// The chain can be read: the table is there, chained, and this role may read it.
fn chain_readable(session: &Session) -> Result<(), Failure> {
    let caps = session.capabilities();
    let target = session.store().target();
    if !caps.has_audit_table {
        return Err(Failure::ConsoleSchema(format!(
            "the database at {target} has no audit log: `bootstrap-console migrate` creates it"
        )));
    }
    let role = crate::domain::text::clean(&caps.current_user, 64);
    if !caps.console_schema_usage {
        return Err(Failure::Open(OpenError::MissingPrivilege {
            role,
            missing: vec!["USAGE on schema bootstrap_console".into()],
        }));
    }
    if !caps.can_read_audit {
        return Err(Failure::Open(OpenError::MissingPrivilege {
            role,
            missing: vec!["SELECT on bootstrap_console.audit_log".into()],
        }));
    }
    if !caps.audit_chain {
        return Err(Failure::ConsoleSchema(format!(
            "the audit log at {target} has no hash chain yet: its owner must run \
             `bootstrap-console migrate`"
        )));
    }
    Ok(())
}

pub(super) fn grants(args: &GrantsArgs) -> Result<ExitCode, Failure> {
    grants::check_name("--role", &args.role).map_err(Failure::Usage)?;
    grants::check_name("--schema", &args.schema).map_err(Failure::Usage)?;
    if let Some(database) = &args.database {
        grants::check_name("--database", database).map_err(Failure::Usage)?;
    }
    let sql = grants::script(&GrantsFor {
        role: &args.role,
        duty: if args.read_only {
            Duty::Observer
        } else {
            Duty::Operator
        },
        schema: &args.schema,
        database: args.database.as_deref(),
    });
    // The SQL as it is: a transliterated script would grant something else.
    super::emit_raw(&sql);
    Ok(ExitCode::from(exit::DONE))
}
