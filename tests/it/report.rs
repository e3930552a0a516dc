//! `status` at scale against a real PostgreSQL: the summary from one SQL aggregate equals the
//! board's own judgement of the same ledger at the same instant, and the rows listed page by
//! page are exactly the board's, in the board's order, for every filter.

use crate::common;

use std::time::Duration;

use bootstrap_console::domain::board::{BoardRow, Summary};
use bootstrap_console::domain::fleet::{Fleet, FleetSnapshot};
use bootstrap_console::domain::model::{Checkpoint, RunState};
use bootstrap_console::domain::report::{self, AttentionFilter, ReportFilter, Rows};
use bootstrap_console::domain::session::{Session, SessionOptions};
use bootstrap_console::domain::signals::{Attention, Thresholds};
use bootstrap_console::store::sync::SyncSettings;
use chrono::{DateTime, Utc};
use common::TestDb;
use common::fixture::{self, JobSpec};
use uuid::Uuid;

/// Spaces in every attention class, several of each, some with leases, at varied ages.
async fn varied_ledger(db: &TestDb) {
    let states = ["queued", "running", "succeeded", "failed", "canceled"];
    for (i, state) in states.iter().cycle().take(45).enumerate() {
        let i = i as i64;
        // Each state in five variants: fresh, late, long quiet, expired past the reclaim
        // grace, just expired.
        let variant = ((i / 5) % 5) as usize;
        let spec = JobSpec {
            updated_ago_secs: [5, 30, 700, 40, 20][variant],
            lease_expires_in_secs: [25, 5, -10, -120, -10][variant],
            heartbeat_ago_secs: [2, 25, 40, 150, 50][variant],
            checkpoint: if i % 4 == 0 && *state != "succeeded" {
                "pending_snapshot"
            } else {
                JobSpec::new("x", state).checkpoint
            },
            ..JobSpec::new(["acme", "globex", "initech"][(i % 3) as usize], state)
        };
        let job = fixture::job(&db.pool, &spec).await;
        if i % 4 == 0 || i % 7 == 0 {
            fixture::lease(
                &db.pool,
                &job.tenant,
                job.space,
                // A writer at work or an orphan suspect, at `pending_snapshot` both.
                [60, 1800][((i / 4) % 2) as usize],
            )
            .await;
        }
    }
}

/// The board, loaded and judged at `now`.
async fn board_at(session: &Session, now: DateTime<Utc>) -> FleetSnapshot {
    let mut sync = session.ledger_sync(SyncSettings::default());
    let mut changes = session
        .reads()
        .sync(&mut sync, Duration::from_secs(1))
        .await
        .expect("load");
    changes.db_now = now;
    let mut fleet = Fleet::new(Thresholds::default());
    fleet.apply(changes);
    fleet.snapshot().expect("a snapshot")
}

/// The SQL summary at `now`, once it is held equal to the board's judgement at that instant.
async fn summary_equal_to_the_boards(
    session: &Session,
    now: DateTime<Utc>,
    what: &str,
) -> report::Report {
    let report = report::summarize_at(session, &Thresholds::default(), now)
        .await
        .expect("summary");
    let board = board_at(session, now).await;
    assert_eq!(
        without_rates(&report.summary),
        without_rates(&board.summary),
        "{what}"
    );
    report
}

fn without_rates(summary: &Summary) -> Summary {
    Summary {
        documents_per_minute: None,
        eta: None,
        ..summary.clone()
    }
}

async fn listed(session: &Session, now: DateTime<Utc>, filter: &ReportFilter) -> Vec<Uuid> {
    // Pages of three rows, so every class takes several.
    let mut rows = Rows::new(session, now, filter, &Thresholds::default()).page_size(3);
    let mut ids = Vec::new();
    while let Some(page) = rows.next_page().await.expect("a page") {
        ids.extend(page.iter().map(|r| r.id));
    }
    ids
}

fn board_ids(board: &FleetSnapshot, keep: impl Fn(&BoardRow) -> bool) -> Vec<Uuid> {
    board
        .board
        .window(0, board.board.len())
        .filter(|r| keep(r))
        .map(|r| r.id)
        .collect()
}

#[tokio::test]
async fn the_sql_summary_equals_the_boards_judgement() {
    let db = TestDb::migrated().await;
    varied_ledger(&db).await;
    let session = db.session(SessionOptions::default()).await;
    let now = session.reads().database_now().await.expect("clock");
    let thresholds = Thresholds::default();
    let report = summary_equal_to_the_boards(&session, now, "the whole ledger").await;
    for class in Attention::ALL {
        assert!(report.summary.count(class) > 0, "the ledger has {class:?}");
    }
    assert!(report.unreadable.is_empty());

    // A tenant's scope too.
    let scoped = db
        .session(SessionOptions {
            tenant: Some("globex".into()),
            ..SessionOptions::default()
        })
        .await;
    let report = report::summarize_at(&scoped, &thresholds, now)
        .await
        .expect("summary");
    assert_eq!(
        without_rates(&report.summary),
        without_rates(&board_at(&scoped, now).await.summary)
    );
}

#[tokio::test]
async fn listed_rows_are_the_boards_in_the_boards_order_for_every_filter() {
    let db = TestDb::migrated().await;
    varied_ledger(&db).await;
    let session = db.session(SessionOptions::default()).await;
    let now = session.reads().database_now().await.expect("clock");
    let board = board_at(&session, now).await;

    let all = ReportFilter::default();
    assert_eq!(
        listed(&session, now, &all).await,
        board_ids(&board, |_| true)
    );

    let attention = ReportFilter {
        attention: Some(AttentionFilter::Any),
        ..ReportFilter::default()
    };
    assert_eq!(
        listed(&session, now, &attention).await,
        board_ids(&board, |r| r.signals.attention.needs_operator())
    );
    let watched = ReportFilter {
        attention: Some(AttentionFilter::Watch),
        ..ReportFilter::default()
    };
    let expected = board_ids(&board, |r| {
        r.signals.attention.group() == bootstrap_console::domain::signals::Group::Watch
    });
    assert!(!expected.is_empty());
    assert_eq!(listed(&session, now, &watched).await, expected);
    for class in Attention::ALL {
        let filter = ReportFilter {
            attention: Some(AttentionFilter::Class(class)),
            ..ReportFilter::default()
        };
        assert_eq!(
            listed(&session, now, &filter).await,
            board_ids(&board, |r| r.signals.attention == class),
            "{class:?}"
        );
    }
    let narrowed = ReportFilter {
        states: vec![RunState::Canceled, RunState::Queued],
        checkpoints: vec![Checkpoint::PendingSnapshot],
        attention: None,
    };
    let expected = board_ids(&board, |r| {
        matches!(r.run_state, RunState::Canceled | RunState::Queued)
            && r.checkpoint == Checkpoint::PendingSnapshot
    });
    assert!(!expected.is_empty());
    assert_eq!(listed(&session, now, &narrowed).await, expected);
    // A canceled space blocked by a lease is listed as blocked, as on the board.
    let blocked = board_ids(&board, |r| {
        r.run_state == RunState::Canceled && r.signals.attention == Attention::Blocked
    });
    assert!(!blocked.is_empty());
}

#[tokio::test]
async fn rows_the_console_cannot_read_are_counted_and_named() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "queued")).await;
    fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    fixture::force_run_state(&db.pool, job.bootstrap, "paused").await;
    let session = db.session(SessionOptions::default()).await;
    let report = report::summarize(&session, &Thresholds::default())
        .await
        .expect("summary");
    assert_eq!(report.summary.spaces, 1, "the readable row is counted");
    assert_eq!(report.unreadable.len(), 1);
    assert!(
        report.unreadable[0]
            .to_string()
            .contains(&job.bootstrap.to_string())
    );
}

#[tokio::test]
async fn the_status_table_aligns_wide_and_combining_tenant_names() {
    use unicode_width::UnicodeWidthStr;
    let db = TestDb::migrated().await;
    let mut spaces = Vec::new();
    for tenant in ["acme", "株式会社アクメ商事", "e\u{301}cole-normale", "x"] {
        spaces.push(
            fixture::job(&db.pool, &JobSpec::new(tenant, "failed"))
                .await
                .space,
        );
    }
    for wide in [false, true] {
        let mut args = vec!["status"];
        if wide {
            args.push("--wide");
        }
        let output = common::cli::on(&db, &args);
        let text = common::cli::stdout(&output);
        // Where each row's space id starts, in terminal cells: the same on every row.
        let starts: Vec<usize> = text
            .lines()
            .filter_map(|line| {
                spaces.iter().find_map(|space| {
                    let shown = if wide {
                        space.to_string()
                    } else {
                        bootstrap_console::domain::ids::IdNames::EMPTY.short(space)
                    };
                    line.find(&shown).map(|at| line[..at].width())
                })
            })
            .collect();
        assert_eq!(starts.len(), spaces.len(), "{text}");
        assert!(
            starts.iter().all(|s| *s == starts[0]),
            "wide={wide}: {starts:?}\n{text}"
        );
    }
}

/// Where the lease table has heartbeats, an old lease kept live is a writer at work and one
/// whose heartbeat ran out is an orphan suspect, in the SQL summary as on the board; a table
/// with only one of the two columns is judged as one without heartbeats, by both.
#[tokio::test]
async fn lease_heartbeats_are_judged_alike_by_the_sql_summary_and_the_board() {
    for columns in [
        "ADD COLUMN heartbeat_at timestamptz, ADD COLUMN expires_at timestamptz",
        "ADD COLUMN expires_at timestamptz",
    ] {
        let db = TestDb::migrated().await;
        let sql = format!("ALTER TABLE knowledge_space_mutation_leases {columns}");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&db.pool)
            .await
            .expect("lease columns");
        for (age, live_for) in [(1800, 120), (1800, -60), (60, 120)] {
            let job = fixture::job(&db.pool, &JobSpec::new("acme", "queued")).await;
            let lease = fixture::lease(&db.pool, "acme", job.space, age).await;
            let set = if columns.contains("heartbeat_at") {
                "heartbeat_at = now(), expires_at = now() + $2 * interval '1 second'"
            } else {
                "expires_at = now() + $2 * interval '1 second'"
            };
            let sql = format!("UPDATE knowledge_space_mutation_leases SET {set} WHERE id = $1");
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(lease)
                .bind(live_for as f64)
                .execute(&db.pool)
                .await
                .expect("heartbeat");
        }
        let session = db.session(SessionOptions::default()).await;
        let now = session.reads().database_now().await.expect("clock");
        let report = summary_equal_to_the_boards(&session, now, columns).await;
        let (blocked, writing) = if columns.contains("heartbeat_at") {
            (1, 2)
        } else {
            (2, 1)
        };
        assert_eq!(
            report.summary.count(Attention::Blocked),
            blocked,
            "{columns}"
        );
        assert_eq!(
            report.summary.count(Attention::Writing),
            writing,
            "{columns}"
        );
    }
}
