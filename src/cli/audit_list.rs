//! `audit list`: the most recent audit records in scope, newest first — a table that fits the
//! terminal (80 columns when piped), or JSON (`bootstrap-console.audit/v1`, fields only ever added under that name).
//! Spaces are named by the same scope-wide unique forms the board and `status` print, which
//! every command takes back; the JSON has every id whole.

use std::process::ExitCode;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::args::{AuditListArgs, ReadArgs};
use super::{Failure, emit, json};
use crate::columns::{self, Column, Cut, Laid, Priority};
use crate::domain::ids::IdNames;
use crate::domain::model::AuditRecord;
use crate::domain::signals::Thresholds;
use crate::tui::view::format;

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
        let records = reads.recent_audit(i64::from(args.limit)).await?;
        // Only the spaces listed are named, by forms no other id in scope shares.
        let ids: Vec<uuid::Uuid> = records.iter().map(|r| r.knowledge_space_id).collect();
        let names = reads.names_around(&ids).await?;
        Ok::<_, Failure>((records, names))
    }
    .await;
    session.close().await;
    let (records, names) = result?;
    if args.json {
        // JSON goes out as written (escaped, valid), whatever the locale.
        super::emit_raw(&json::pretty(&JsonAudit {
            schema: SCHEMA,
            tenant_scope: args.tenant.as_deref(),
            records: records.iter().map(JsonRecord::from).collect(),
        }));
    } else {
        emit(&table(&records, &names, super::table_width()));
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

/// The table: one line per record within the output's width (see [`super::table_width`]),
/// laid out by [`crate::columns`] as the console's audit view is; what is cut ends in a mark.
/// From 100 columns on, times carry their year.
fn table(records: &[AuditRecord], names: &IdNames, width: u16) -> String {
    if records.is_empty() {
        return "no audit records in scope\n".to_string();
    }
    let (at_format, at_width) = if width >= 100 {
        ("%Y-%m-%d %H:%M:%S", 19)
    } else {
        ("%m-%d %H:%M:%S", 14)
    };
    let columns = [
        Column::new("AT (UTC)", Priority::Flag, at_width, at_width),
        Column::new("ACTION", Priority::Flag, 8, 12),
        Column::new("OUTCOME", Priority::Flag, 7, 16),
        columns::id_column("SPACE", names.widest()),
        Column::new("TENANT", Priority::Tenant, 6, 16).cut(Cut::Middle),
        Column::new("BY", Priority::Tenant, 6, 16),
        Column::new("REASON", Priority::Message, 8, 1000).filling(),
    ];
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            vec![
                r.at.format(at_format).to_string(),
                format::short_action(&r.action),
                format::short_outcome(&r.outcome),
                names.short(&r.knowledge_space_id),
                r.tenant_id.clone(),
                r.db_role.as_deref().unwrap_or(&r.actor).to_string(),
                r.reason.clone(),
            ]
        })
        .collect();
    let laid = Laid::out(&columns, &rows, width, 1);
    let line =
        |values: &[&str]| format!("{}\n", columns::text_line(&columns, &laid.widths, values));
    let titles: Vec<&str> = columns.iter().map(|c| c.title).collect();
    let mut out = line(&titles);
    for row in &rows {
        let values: Vec<&str> = row.iter().map(String::as_str).collect();
        out.push_str(&line(&values));
    }
    out
}
