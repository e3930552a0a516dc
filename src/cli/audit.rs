//! `audit verify` (the hash chain, recomputed) and `grants` (the SQL for a least-privilege
//! role, printed for review).

use std::io::IsTerminal;
use std::process::ExitCode;

use super::args::{AuditVerifyArgs, GrantsArgs, ReadArgs};
use super::{Failure, exit, outln};
use crate::domain::audit_chain::{self, HEAD_PREFIX, Start, is_head_hex};
use crate::domain::session::Session;
use crate::domain::signals::Thresholds;
use crate::store::grants::{self, Duty, GrantsFor};
use crate::topology::OpenError;

pub(super) async fn verify(args: &AuditVerifyArgs) -> Result<ExitCode, Failure> {
    let expected = args.expect_head.as_deref().map(str::trim);
    if let Some(head) = expected
        && !is_head_hex(head)
    {
        return Err(Failure::Usage(format!(
            "--expect-head takes a sha256 in hexadecimal, whole (64 digits, as the `audit chain \
             head:` lines print it) or its first {HEAD_PREFIX} digits or more, not {:?}",
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
    let start = Start {
        expect_head: expected.map(str::to_string),
        ..Start::default()
    };
    let found = audit_chain::verify(session, &start, |records| {
        if bar {
            super::say_in_place(&format!("verifying the audit chain: {records} records"));
        }
    })
    .await;
    if bar {
        super::say("");
    }
    let found = found?;
    let owner = session
        .topology()
        .capabilities()
        .audit_owner
        .as_deref()
        .map(|o| crate::domain::text::clean(o, 64))
        .unwrap_or_default();
    match &found.broken {
        None => {
            outln!("audit chain intact: {} records", found.records);
            match &found.verified {
                Some(head) => outln!("head: {head}"),
                None => outln!("head: none (the audit log is empty)"),
            }
            if let Some(expected) = expected {
                outln!(
                    "contains the expected head {}",
                    expected.to_ascii_lowercase()
                );
            } else if !found.end_checked {
                outln!(
                    "its end was not checked: this role may not read the head the database \
                     keeps (bootstrap_console.audit_chain_head); give a head kept elsewhere \
                     with --expect-head"
                );
            }
        }
        Some(broken) => {
            outln!("audit chain BROKEN: {broken}");
            match &found.verified {
                Some(head) => outln!("sound up to {head}"),
                None => outln!("no record before it is sound"),
            }
        }
    }
    for missing in &found.unprotected {
        outln!(
            "audit log UNPROTECTED: {}",
            crate::domain::text::clean(missing, 400)
        );
    }
    outln!(
        "the audit log is owned by role {owner}: that role, its members and superusers can \
         disable its guards"
    );
    Ok(ExitCode::from(if found.intact() {
        exit::DONE
    } else {
        exit::NEEDS_ATTENTION
    }))
}

/// The chain can be read: the log can be read ([`log_readable`]), and it is chained.
fn chain_readable(session: &Session) -> Result<(), Failure> {
    log_readable(session)?;
    let topology = session.topology();
    let caps = topology.capabilities();
    let target = topology.primary().host();
    if !caps.audit_chain {
        return Err(Failure::ConsoleSchema(format!(
            "the audit log at {target} has no hash chain yet: its owner must run \
             `bootstrap-console migrate`"
        )));
    }
    Ok(())
}

/// The audit log can be read: the table is there, and this role may read it.
pub(super) fn log_readable(session: &Session) -> Result<(), Failure> {
    let topology = session.topology();
    let caps = topology.capabilities();
    let target = topology.primary().host();
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
    Ok(())
}

pub(super) fn grants(args: &GrantsArgs) -> Result<ExitCode, Failure> {
    check_name("--role", &args.role)?;
    check_name("--schema", &args.schema)?;
    if let Some(database) = &args.database {
        check_name("--database", database)?;
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

/// A name the printed SQL can hold safely and a reviewer can read as it is: no control,
/// bidirectional or invisible character, no `$` (the script's blocks are `$grants$`-quoted)
/// and no backslash (read as an escape where `standard_conforming_strings` is off).
fn check_name(what: &str, name: &str) -> Result<(), Failure> {
    let refuse = |why: String| Err(Failure::Usage(format!("{what} {why}")));
    if name.is_empty() {
        return refuse("must not be empty".into());
    }
    if name.len() > 63 {
        return refuse(format!(
            "is {} bytes long; PostgreSQL names are at most 63",
            name.len()
        ));
    }
    if what == "--role" && (name.eq_ignore_ascii_case("public") || name.starts_with("pg_")) {
        return refuse(format!(
            "{name} is reserved (PUBLIC is every role; pg_ roles are the server's own): \
             name a role of your own"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|&c| crate::domain::text::is_hidden(c) || c == '$' || c == '\\')
    {
        return refuse(format!(
            "contains {}: choose a plain name",
            crate::domain::text::clean(&c.to_string(), 16)
        ));
    }
    Ok(())
}
