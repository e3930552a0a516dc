//! Fixed fixture data for the console's views: a board with one space in every situation (and
//! hostile text from the database), a detail, leases and audit records — no database needed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bootstrap_console::domain::board::Board;
use bootstrap_console::domain::model::{AuditRecord, Bootstrap, Item, ItemStatus, MutationLease};
use bootstrap_console::domain::progress::ProgressTracker;
use bootstrap_console::domain::session::{Access, Detail};
use bootstrap_console::domain::signals::Thresholds;
use bootstrap_console::poller::{Extra, Focus, PollStatus, Snapshot};
use bootstrap_console::store::read::{BoardLine, BoardRows, LeaseLine, LeaseRows};
use bootstrap_console::store::rows::{BootstrapRow, LeaseRow};
use bootstrap_console::tui::app::{App, Display, Header};
use bootstrap_console::tui::update::{self, Event};
use chrono::{DateTime, Utc};
use uuid::Uuid;

pub const HOSTILE: &str = "pdf parser: \u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mFATAL\u{1b}[0m page 3 \u{202e}gnp.exe\nsecond line";

pub fn db_now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
        .expect("time")
        .with_timezone(&Utc)
}

fn secs(n: i64) -> chrono::Duration {
    chrono::Duration::seconds(n)
}

/// A fixed id: readable in snapshots, stable across runs.
pub fn id(n: u8) -> Uuid {
    Uuid::parse_str(&format!(
        "{n:02x}{n:02x}{n:02x}{n:02x}-0000-4000-8000-0000000000{n:02x}"
    ))
    .expect("uuid")
}

struct Spec {
    n: u8,
    tenant: &'static str,
    checkpoint: &'static str,
    run_state: &'static str,
    done: i32,
    total: i32,
    updated_ago: i64,
    /// Running: (worker, heartbeat ago, expires in).
    worker: Option<(&'static str, i64, i64)>,
    error: Option<(&'static str, &'static str)>,
    lease_age: Option<i64>,
}

fn row(spec: &Spec) -> BoardLine {
    let now = db_now();
    let terminal = matches!(spec.run_state, "succeeded" | "failed" | "canceled");
    let bootstrap = BootstrapRow {
        id: id(spec.n),
        tenant_id: spec.tenant.into(),
        knowledge_space_id: id(spec.n),
        idempotency_key: "legacy-space-publication-bootstrap-v1".into(),
        checkpoint: spec.checkpoint.into(),
        run_state: spec.run_state.into(),
        total_documents: spec.total,
        completed_documents: spec.done,
        worker_id: spec.worker.map(|w| w.0.to_string()),
        lease_token: spec.worker.map(|_| id(200)),
        lease_expires_at: spec.worker.map(|w| now + secs(w.2)),
        heartbeat_at: spec.worker.map(|w| now - secs(w.1)),
        last_error_code: spec.error.map(|e| e.0.to_string()),
        last_error_message: spec.error.map(|e| e.1.to_string()),
        row_version: 7,
        published_publication_id: (spec.run_state == "succeeded").then(|| id(201)),
        published_fingerprint: (spec.run_state == "succeeded").then(|| "fp-0123456789".to_string()),
        published_head_revision: (spec.run_state == "succeeded").then_some(1),
        snapshot_metadata: serde_json::json!({
            "schemaVersion": 1, "source": "migration-marker", "note": "\u{1b}[41mred\u{1b}[0m"
        }),
        created_at: now - secs(3600),
        updated_at: now - secs(spec.updated_ago),
        completed_at: terminal.then(|| now - secs(spec.updated_ago)),
    };
    let lease = spec.lease_age.map(|age| LeaseRow {
        id: id(100 + spec.n),
        tenant_id: spec.tenant.into(),
        knowledge_space_id: id(spec.n),
        operation: "bulk-upload".into(),
        acquired_at: now - secs(age),
        heartbeat_at: None,
        expires_at: None,
    });
    BoardLine { bootstrap, lease }
}

fn specs() -> Vec<Spec> {
    let base = Spec {
        n: 0,
        tenant: "acme",
        checkpoint: "rebuilding",
        run_state: "queued",
        done: 0,
        total: 0,
        updated_ago: 5,
        worker: None,
        error: None,
        lease_age: None,
    };
    vec![
        Spec {
            n: 1,
            checkpoint: "rebuilding",
            run_state: "failed",
            done: 120,
            total: 300,
            error: Some(("compile_timeout", HOSTILE)),
            ..base
        },
        Spec {
            n: 2,
            tenant: "globex\u{1b}[5m",
            checkpoint: "pending_snapshot",
            lease_age: Some(40 * 60),
            ..base
        },
        Spec {
            n: 3,
            tenant: "initech",
            run_state: "running",
            done: 10,
            total: 90,
            updated_ago: 40,
            worker: Some(("worker-2.1", 40, -5)),
            ..base
        },
        Spec {
            n: 4,
            tenant: "umbrella",
            checkpoint: "snapshot_captured",
            total: 12,
            updated_ago: 12 * 60,
            ..base
        },
        Spec {
            n: 5,
            tenant: "hooli",
            run_state: "running",
            done: 44,
            total: 200,
            updated_ago: 25,
            worker: Some(("worker-0.0", 25, 5)),
            ..base
        },
        Spec {
            n: 6,
            tenant: "stark",
            run_state: "running",
            done: 40,
            total: 80,
            updated_ago: 1,
            worker: Some(("worker-1.0", 1, 29)),
            ..base
        },
        Spec {
            n: 7,
            tenant: "wayne",
            checkpoint: "pending_snapshot",
            ..base
        },
        Spec {
            n: 8,
            tenant: "tyrell",
            run_state: "canceled",
            done: 3,
            total: 9,
            error: Some(("operator_canceled", "maintenance window")),
            ..base
        },
        Spec {
            n: 9,
            tenant: "acme",
            checkpoint: "published",
            run_state: "succeeded",
            done: 250,
            total: 250,
            updated_ago: 300,
            ..base
        },
    ]
}

/// The board, assessed after two snapshots a minute apart (so rates and ETAs exist).
pub fn board() -> Board {
    let lines: Vec<BoardLine> = specs().iter().map(row).collect();
    let mut earlier = lines.clone();
    for line in &mut earlier {
        let b = &mut line.bootstrap;
        b.completed_documents = (b.completed_documents - 20).max(0);
    }
    let mut tracker = ProgressTracker::new(chrono::Duration::minutes(5));
    let thresholds = Thresholds::default();
    Board::assess(
        BoardRows {
            db_now: db_now() - secs(60),
            lines: earlier,
        },
        &mut tracker,
        &thresholds,
    );
    Board::assess(
        BoardRows {
            db_now: db_now(),
            lines,
        },
        &mut tracker,
        &thresholds,
    )
}

pub fn detail() -> Detail {
    let b = Bootstrap::try_from(row(&specs()[0]).bootstrap).expect("valid");
    let item = |ordinal: i32, status: ItemStatus, error: Option<&str>| Item {
        bootstrap_id: b.id,
        document_asset_id: id((50 + ordinal % 100) as u8),
        document_version: 3,
        document_sha256: "a".repeat(64),
        ordinal,
        compilation_attempt_id: Some(id((150 + ordinal % 100) as u8)),
        status,
        last_error: error.map(str::to_string),
        updated_at: db_now() - secs(30),
    };
    Detail {
        db_now: db_now(),
        lease: None,
        item_counts: vec![
            (ItemStatus::Pending, 179),
            (ItemStatus::Succeeded, 120),
            (ItemStatus::Failed, 1),
        ],
        failed_items: vec![item(120, ItemStatus::Failed, Some(HOSTILE))],
        running_item: None,
        audit: Some(audits().into_iter().take(1).collect()),
        bootstrap: b,
    }
}

pub fn audits() -> Vec<AuditRecord> {
    let record = |n: u8, action: &str, reason: &str| AuditRecord {
        id: i64::from(n),
        at: db_now() - secs(600 * i64::from(n)),
        actor: "oncall".into(),
        host: "jump-1".into(),
        ssh_client: Some("10.1.2.3 52814".into()),
        action: action.into(),
        tenant_id: "acme".into(),
        knowledge_space_id: id(n),
        bootstrap_id: Some(id(n)),
        lease_id: None,
        reason: reason.into(),
        row_before: None,
        row_after: None,
        outcome: "applied".into(),
    };
    vec![
        record(1, "retry", "parser fixed in 4.2.1"),
        record(8, "cancel", "maintenance window \u{1b}[2J"),
    ]
}

pub fn leases() -> LeaseRows {
    let b = board();
    let lines = b
        .rows
        .iter()
        .filter_map(|r| r.lease.as_ref().map(|l| (r, l)))
        .map(|(r, l)| LeaseLine {
            lease: LeaseRow {
                id: l.id,
                tenant_id: l.tenant_id.clone(),
                knowledge_space_id: l.knowledge_space_id,
                operation: l.operation.clone(),
                acquired_at: l.acquired_at,
                heartbeat_at: None,
                expires_at: None,
            },
            bootstrap_id: Some(r.bootstrap.id),
            bootstrap_run_state: Some(r.bootstrap.run_state.as_str().into()),
            bootstrap_checkpoint: Some(r.bootstrap.checkpoint.as_str().into()),
        })
        .collect();
    LeaseRows {
        db_now: db_now(),
        lines,
    }
}

pub fn lease_of(row: u8) -> MutationLease {
    board()
        .row(&id(row))
        .and_then(|r| r.lease.clone())
        .expect("a lease on that row")
}

/// An app showing the fixture, as if the poller had just delivered it.
pub fn app(size: (u16, u16), extra: Extra, focus: Focus) -> App {
    let header = Header {
        target: "ops@db.internal:5432/platform".into(),
        label: Some("prod".into()),
        sandbox: false,
        tenant_scope: None,
        access: Access::ReadWrite,
    };
    let display = Display {
        ascii: false,
        color: true,
    };
    let mut app = App::new(header, display, Duration::from_secs(2), size);
    let now = Instant::now();
    app.now = now;
    let status = PollStatus {
        snapshot: Some(Arc::new(Snapshot {
            board: board(),
            extra,
            focus,
        })),
        received_at: Some(now),
        latency: Some(Duration::from_millis(12)),
        failing_since: None,
        last_error: None,
        sequence: 1,
        paused: false,
        interval: Duration::from_secs(2),
    };
    update::update(&mut app, Event::Poll(status));
    app
}
