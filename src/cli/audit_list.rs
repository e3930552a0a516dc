//! `audit list`: the most recent audit records in scope, newest first — a table that fits 80
//! columns, or JSON (`bootstrap-console.audit/v1`, fields only ever added under that name).
//! Spaces are named by the same scope-wide unique forms the board and `status` print, which
//! every command takes back; the JSON has every id whole.

use std::process::ExitCode;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::args::{AuditListArgs, ReadArgs};
use super::{Failure, emit, json};
use crate::domain::ids::IdNames;
use crate::domain::model::AuditRecord;
use crate::domain::signals::Thresholds;
use crate::domain::text;

const SCHEMA: &str = "bootstrap-console.audit/v1";

pub(super) async fn list(args: &AuditListArgs) -> Result<ExitCode, Failure> {
    // The primary: a record just written is there at once.
    let no_standby = ReadArgs { read_url: None };
    let session = super::status::open_to_read(
        &args.connect,
        &no_standby,
        args.tenant.clone(),
        Thresholds::default(),
    )
    .await?;
    let result = async {
        super::audit::log_readable(&session)?;
        let reads = session.reads();
        let (records, names) =
            tokio::join!(reads.recent_audit(i64::from(args.limit)), reads.names());
        Ok::<_, Failure>((records?, names?))
    }
    .await;
    session.close().await;
    let (records, names) = result?;
    if args.json {
        emit(&json::pretty(&JsonAudit {
            schema: SCHEMA,
            tenant_scope: args.tenant.as_deref(),
            records: records.iter().map(JsonRecord::from).collect(),
        }));
    } else {
        emit(&table(&records, &names));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct JsonAudit<'a> {
    schema: &'static str,
    tenant_scope: Option<&'a str>,
    /// Newest first.
    records: Vec<JsonRecord<'a>>,
}

#[derive(Serialize)]
struct JsonRecord<'a> {
    id: i64,
    at: DateTime<Utc>,
    action: &'a str,
    outcome: &'a str,
    tenant_id: &'a str,
    knowledge_space_id: uuid::Uuid,
    bootstrap_id: Option<uuid::Uuid>,
    lease_id: Option<uuid::Uuid>,
    /// The database role that wrote the record (null before console schema unit 0004).
    db_role: Option<&'a str>,
    /// What the client reported: the operating-system user, host and ssh client.
    actor: &'a str,
    host: &'a str,
    ssh_client: Option<&'a str>,
    reason: &'a str,
    row_before: Option<&'a serde_json::Value>,
    row_after: Option<&'a serde_json::Value>,
}

impl<'a> From<&'a AuditRecord> for JsonRecord<'a> {
    fn from(r: &'a AuditRecord) -> Self {
        Self {
            id: r.id,
            at: r.at,
            action: &r.action,
            outcome: &r.outcome,
            tenant_id: &r.tenant_id,
            knowledge_space_id: r.knowledge_space_id,
            bootstrap_id: r.bootstrap_id,
            lease_id: r.lease_id,
            db_role: r.db_role.as_deref(),
            actor: &r.actor,
            host: &r.host,
            ssh_client: r.ssh_client.as_deref(),
            reason: &r.reason,
            row_before: r.row_before.as_ref(),
            row_after: r.row_after.as_ref(),
        }
    }
}

/// The table: one line per record, 80 columns wide; what is cut ends in a mark.
fn table(records: &[AuditRecord], names: &IdNames) -> String {
    if records.is_empty() {
        return "no audit records in scope\n".to_string();
    }
    let space = names.widest().max("SPACE".len());
    let columns = [
        ("AT (UTC)", 14),
        ("ACTION", 12),
        ("OUTCOME", 8),
        ("SPACE", space),
        ("TENANT", 10),
        ("BY", 10),
    ];
    let used: usize = columns.iter().map(|(_, w)| w + 1).sum();
    let reason = 80usize.saturating_sub(used).max(12);
    let mut out = String::new();
    let head: Vec<String> = columns
        .iter()
        .map(|(name, width)| text::fit(name, *width))
        .chain(["REASON".to_string()])
        .collect();
    out.push_str(head.join(" ").trim_end());
    out.push('\n');
    for r in records {
        let by = r.db_role.as_deref().unwrap_or(&r.actor);
        let cells = [
            text::fit(&r.at.format("%m-%d %H:%M:%S").to_string(), 14),
            text::fit(&r.action, 12),
            text::fit(&r.outcome, 8),
            text::fit(&names.short(&r.knowledge_space_id), space),
            text::fit(&r.tenant_id, 10),
            text::fit(by, 10),
            text::fit(&r.reason, reason),
        ];
        out.push_str(cells.join(" ").trim_end());
        out.push('\n');
    }
    out
}
