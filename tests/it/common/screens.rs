//! Fixed fixture data for the console's views: a board with one space in every situation (and
//! hostile text from the database), a detail, leases and audit records — no database needed.
//! The board is a real [`Fleet`] fed with rows as the sync would deliver them, and
//! [`Console`] plays the poller's model: it answers the board's queries like the model task.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bootstrap_console::domain::detail::Detail;
use bootstrap_console::domain::fleet::{Fleet, FleetSnapshot};
use bootstrap_console::domain::leases::LeaseBoard;
use bootstrap_console::domain::model::{AuditRecord, Bootstrap, Item, ItemStatus, MutationLease};
use bootstrap_console::domain::signals::Thresholds;
use bootstrap_console::poller::{self, Extra, Focus, Focused, PollHealth, PollStatus};
use bootstrap_console::store::read::{LeaseLine, LeaseRows};
use bootstrap_console::store::rows::{BoardRecord, BootstrapRow, LeaseRow};
use bootstrap_console::store::sync::Changes;
use bootstrap_console::topology::Access;
use bootstrap_console::tui::app::{App, Display, Header};
use bootstrap_console::tui::update::{self, Effect, Event};
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

fn row(spec: &Spec) -> (BootstrapRow, Option<LeaseRow>) {
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
    (bootstrap, lease)
}

/// The board's columns of a full row, as the sync reads them.
pub fn record(row: &BootstrapRow) -> BoardRecord {
    BoardRecord {
        id: row.id,
        tenant_id: row.tenant_id.clone(),
        knowledge_space_id: row.knowledge_space_id,
        checkpoint: row.checkpoint.clone(),
        run_state: row.run_state.clone(),
        total_documents: row.total_documents,
        completed_documents: row.completed_documents,
        worker_id: row.worker_id.clone(),
        has_lease_token: row.lease_token.is_some(),
        lease_expires_at: row.lease_expires_at,
        heartbeat_at: row.heartbeat_at,
        last_error_code: row.last_error_code.clone(),
        last_error_message: row.last_error_message.clone(),
        row_version: row.row_version,
        updated_at: row.updated_at,
        completed_at: row.completed_at,
        version: 1,
        page: 0,
    }
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
            worker: Some(("worker-2.1", 120, -90)),
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

/// The fixture's spaces as the sync delivers them at `now`, with `done_shift` fewer documents
/// done (an earlier poll).
pub fn changes(now: DateTime<Utc>, done_shift: i32) -> Changes {
    let rows: Vec<(BootstrapRow, Option<LeaseRow>)> = specs().iter().map(row).collect();
    Changes {
        db_now: now,
        replication: None,
        reset: false,
        upserts: rows
            .iter()
            .map(|(b, _)| {
                let mut record = record(b);
                record.completed_documents = (record.completed_documents - done_shift).max(0);
                record
            })
            .collect(),
        deletes: Vec::new(),
        leases: rows.iter().filter_map(|(_, l)| l.clone()).collect(),
        leases_gone: Vec::new(),
        report: Default::default(),
    }
}

/// The model after two polls a minute apart (so rates and ETAs exist).
pub fn fleet() -> Fleet {
    let mut fleet = Fleet::new(Thresholds::default());
    fleet.apply(changes(db_now() - secs(60), 20));
    fleet.apply(changes(db_now(), 0));
    fleet
}

/// The board as the model publishes it.
pub fn board() -> FleetSnapshot {
    fleet().snapshot().expect("a snapshot")
}

pub fn detail() -> Detail {
    let b = Bootstrap::try_from(row(&specs()[0]).0).expect("valid");
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
        audit: Ok(audits().into_iter().take(1).collect()),
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
        db_role: None,
    };
    vec![
        record(1, "retry", "parser fixed in 4.2.1"),
        record(8, "cancel", "maintenance window \u{1b}[2J"),
    ]
}

pub fn leases() -> LeaseBoard {
    let b = board();
    let mut rows: Vec<_> = b.rows.values().collect();
    rows.sort_by_key(|r| r.id);
    let lines = rows
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
            bootstrap_id: Some(r.id),
            bootstrap_run_state: Some(r.run_state.as_str().into()),
            bootstrap_checkpoint: Some(r.checkpoint.as_str().into()),
        })
        .collect();
    let rows = LeaseRows {
        db_now: db_now(),
        lines,
    };
    LeaseBoard::assess(rows, &Thresholds::default()).expect("valid lease rows")
}

pub fn lease_of(row: u8) -> MutationLease {
    board()
        .row(&id(row))
        .and_then(|r| r.lease.as_deref().cloned())
        .expect("a lease on that row")
}

/// A poll status carrying `snapshot`, as if the poller had just delivered it at `at`.
pub fn status(snapshot: FleetSnapshot, extra: Extra, focus: Focus, at: Instant) -> PollStatus {
    PollStatus {
        fleet: Some(Arc::new(snapshot)),
        fleet_at: Some(at),
        focused: Some(Arc::new(Focused { focus, extra })),
        messages: None,
        polling: PollHealth {
            interval: Duration::from_secs(2),
            period: Some(Duration::from_secs(2)),
            poll_time: Some(Duration::from_millis(3)),
            polled_at: Some(at),
            sync: Some(bootstrap_console::store::sync::SyncReport {
                cycles: 3,
                cycle_page: 1_030,
                table_pages: 4_120,
                cycle_estimate: Some(Duration::from_secs(103)),
                ..Default::default()
            }),
            ..PollHealth::default()
        },
        sequence: 1,
    }
}

/// An app showing the fixture, as if the poller had just delivered it.
pub fn app(size: (u16, u16), extra: Extra, focus: Focus) -> App {
    Console::new(size, extra, focus).app
}

/// The app with the poller's model beside it: queries the app sends are answered by a real
/// [`Fleet`], and its new view is delivered as the model task would.
pub struct Console {
    pub app: App,
    pub fleet: Fleet,
}

impl Console {
    pub fn new(size: (u16, u16), extra: Extra, focus: Focus) -> Self {
        let header = Header {
            target: "ops@db.internal:5432/platform".into(),
            polls: String::new(),
            label: Some("prod".into()),
            sandbox: false,
            tenant_scope: None,
            access: Access::ReadWrite,
            needs_migrate: false,
        };
        let display = Display {
            ascii: false,
            color: true,
        };
        let mut app = App::new(header, display, Duration::from_secs(2), size);
        let now = Instant::now();
        app.now = now;
        let mut fleet = fleet();
        let snapshot = fleet.snapshot().expect("a snapshot");
        let effects = update::update(
            &mut app,
            Event::Poll(Box::new(status(snapshot, extra, focus, now))),
        );
        let mut console = Self { app, fleet };
        console.answer(&effects);
        console
    }

    /// Runs one event through `update`, answering the board's queries like the model task.
    pub fn update(&mut self, event: Event) -> Vec<Effect> {
        let effects = update::update(&mut self.app, event);
        self.answer(&effects);
        effects
    }

    /// Like [`Console::update`], but the model is slow: a changed query is taken and
    /// answered only at the next [`Console::deliver`] (as at a million spaces, where a new
    /// order takes seconds).
    pub fn update_slow(&mut self, event: Event) -> Vec<Effect> {
        let effects = update::update(&mut self.app, event);
        for effect in &effects {
            if let Effect::Poller(poller::Instruction::Query(query)) = effect {
                self.fleet.set_query(query.clone());
            }
        }
        effects
    }

    fn answer(&mut self, effects: &[Effect]) {
        for effect in effects {
            match effect {
                Effect::Poller(poller::Instruction::Query(query)) => {
                    self.fleet.set_query(query.clone());
                    self.deliver();
                }
                // The messages of the rows on screen, read from the fixture's rows as the
                // poller reads them from the table (their first 240 characters).
                Effect::Poller(poller::Instruction::Messages(ids)) => {
                    let rows = changes(db_now(), 0)
                        .upserts
                        .into_iter()
                        .filter(|r| ids.contains(&r.id))
                        .filter_map(|r| {
                            Some(bootstrap_console::store::fleet::MessageRow {
                                id: r.id,
                                row_version: r.row_version,
                                message: r.last_error_message?.chars().take(240).collect(),
                            })
                        })
                        .collect();
                    let mut status = self.app.status.clone();
                    status.messages = Some(Arc::new(rows));
                    status.sequence += 1;
                    let effects = update::update(&mut self.app, Event::Poll(Box::new(status)));
                    self.answer(&effects);
                }
                _ => {}
            }
        }
    }

    /// Publishes the model's current state to the app (and answers what the keys that waited
    /// for it then ask).
    pub fn deliver(&mut self) -> Vec<Effect> {
        let mut status = self.app.status.clone();
        status.fleet = Some(Arc::new(self.fleet.snapshot().expect("a snapshot")));
        status.sequence += 1;
        let effects = update::update(&mut self.app, Event::Poll(Box::new(status)));
        self.answer(&effects);
        effects
    }
}

/// A model of `n` spaces (a fifth of them succeeded) over 1,000 tenants, judged at the fixture's
/// clock: counts as wide as a real rollout's.
pub fn many(n: usize) -> Fleet {
    let (template, _) = row(&specs()[0]);
    let upserts = (0..n)
        .map(|i| {
            let mut record = record(&template);
            record.id = Uuid::from_u128(i as u128 + 1);
            record.knowledge_space_id = record.id;
            record.tenant_id = format!("tenant-{:03}", i % 1000);
            if i % 5 == 0 {
                record.run_state = "succeeded".into();
                record.checkpoint = "published".into();
                record.completed_documents = record.total_documents;
                record.last_error_code = None;
                record.last_error_message = None;
            }
            record
        })
        .collect();
    let mut fleet = Fleet::new(Thresholds::default());
    fleet.apply(Changes {
        db_now: db_now(),
        replication: None,
        reset: true,
        upserts,
        ..Changes::default()
    });
    fleet
}

/// A plan for `action` in tenant acme, space 1, that would make `changes` (what, from, to).
pub fn plan_changing(
    action: bootstrap_console::domain::actions::Action,
    changes: &[(&str, &str, &str)],
) -> bootstrap_console::domain::actions::Plan {
    use bootstrap_console::domain::actions::{Change, Plan};
    Plan {
        action,
        tenant_id: Some("acme".into()),
        knowledge_space_id: Some(id(1)),
        now: None,
        meanwhile: None,
        evidence: Vec::new(),
        forced: false,
        applied_before: None,
        verdict: Ok(changes
            .iter()
            .map(|(what, from, to)| Change {
                what: (*what).into(),
                from: (*from).into(),
                to: (*to).into(),
            })
            .collect()),
    }
}

/// The screen `app` draws, row after row (each row one line).
pub fn render(app: &App) -> String {
    let (width, height) = app.size;
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height))
        .expect("terminal");
    terminal
        .draw(|frame| bootstrap_console::tui::view::draw(frame, app))
        .expect("draw");
    let buffer = terminal.backend().buffer();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
