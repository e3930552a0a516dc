//! The measured clients: the real poller watched as the UI would, baseline queries repeated at
//! a console's pace, keys typed into the board's filter, Enter pressed in the real console, and
//! the optional index compared with the shipped statement.

use std::time::{Duration, Instant};

use bootstrap_console::domain::board::BoardQuery;
use bootstrap_console::domain::session::{Session, SessionOptions};
use bootstrap_console::domain::signals::Thresholds;
use bootstrap_console::poller::{self, Instruction, PollStatus, PollerHandle, PollerOptions};
use bootstrap_console::store::sync::SyncSettings;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

use crate::lab::{DbTime, Lab};
use crate::table::{Line, line, median, ms, ratio};
use crate::{pty, ui};

pub fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

pub async fn session(lab: &Lab, role: &str) -> Session {
    lab.role(role).await;
    Session::open(&lab.target(role), SessionOptions::default())
        .await
        .expect("a console session")
}

/// Starts the real poller as `role` and waits for its first snapshot.
pub async fn start_poller(lab: &Lab, role: &str, interval: Duration) -> PollerHandle {
    let poller = poller::start(
        session(lab, role).await,
        PollerOptions {
            interval,
            thresholds: Thresholds::default(),
            sync: SyncSettings::default(),
        },
    );
    let mut status = poller.status.clone();
    tokio::time::timeout(Duration::from_secs(120), async {
        while status.borrow_and_update().fleet.is_none() {
            status.changed().await.expect("the poller runs");
        }
    })
    .await
    .expect("the first load");
    poller
}

/// What one poller did over a window.
pub struct PollerRun {
    pub polls: usize,
    pub periods: Vec<Duration>,
    pub ui: Vec<Duration>,
    pub baseline_ui: Vec<Duration>,
    pub db: DbTime,
}

/// Watches `poller` (as `role`) for `window`: counts polls and their spacing, and feeds every
/// new snapshot to a real app at 80×24, timing the UI thread's work (and the old way on the
/// same rows).
pub async fn watch_poller(
    lab: &Lab,
    role: &str,
    poller: &PollerHandle,
    window: Duration,
) -> PollerRun {
    let mut status = poller.status.clone();
    let mut app = ui::app((80, 24));
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    let mut last_poll = status.borrow().polling.polled_at;
    let mut run = PollerRun {
        polls: 0,
        periods: Vec::new(),
        ui: Vec::new(),
        baseline_ui: Vec::new(),
        db: DbTime::default(),
    };
    let before = lab.db_time(role).await;
    let deadline = tokio::time::Instant::now() + window;
    while let Ok(changed) = tokio::time::timeout_at(deadline, status.changed()).await {
        changed.expect("the poller runs");
        let current: PollStatus = status.borrow_and_update().clone();
        let polled = current.polling.polled_at;
        if polled != last_poll {
            if let (Some(a), Some(b)) = (last_poll, polled) {
                run.periods.push(b.saturating_duration_since(a));
            }
            run.polls += 1;
            last_poll = polled;
        }
        if let Some(fleet) = current.fleet.clone() {
            run.ui.push(ui::absorb(&mut app, current, &mut terminal));
            if run.baseline_ui.len() < 5 {
                run.baseline_ui.push(ui::old_refresh(&fleet, ""));
            }
        }
    }
    run.db = lab.db_time(role).await - before;
    run
}

/// Runs `query` through `pool` once per `interval` (start to start, at once when late) for
/// `window`; returns how many times it ran.
pub async fn repeat(
    pool: &PgPool,
    query: &str,
    interval: Duration,
    window: Duration,
    max: usize,
) -> usize {
    let deadline = Instant::now() + window;
    let mut runs = 0;
    while Instant::now() < deadline && runs < max {
        let started = Instant::now();
        sqlx::query(sqlx::AssertSqlSafe(query.to_string()))
            .fetch_all(pool)
            .await
            .expect("a baseline query");
        runs += 1;
        if let Some(rest) = interval.checked_sub(started.elapsed()) {
            tokio::time::sleep(rest).await;
        }
    }
    runs
}

pub async fn pool_as(lab: &Lab, role: &str, size: u32) -> PgPool {
    lab.role(role).await;
    PgPoolOptions::new()
        .max_connections(size)
        .connect_with(lab.target(role).options())
        .await
        .expect("a pool")
}

/// The changed-rows statement as shipped (the claim index) against the same question asked
/// through an optional index on `updated_at` alone, under the same load; the index is dropped
/// again afterwards. A recommendation to measure, never a requirement.
pub async fn optional_index(lab: &Lab) -> Line {
    use bootstrap_console::store::Layout;
    use bootstrap_console::store::fleet::{changed_by_claim_index_sql, changed_sql};
    let pool = pool_as(lab, "bc_index", 1).await;
    // The statement the console uses when it finds such an index at connect.
    let with_index = changed_sql(&Layout {
        lease_heartbeats: false,
        audit_table: true,
        updated_at_index: true,
    });
    sqlx::raw_sql(
        "CREATE INDEX bench_updated_at_idx ON legacy_space_publication_bootstraps (updated_at)",
    )
    .execute(&lab.admin)
    .await
    .expect("the optional index");
    let mut shipped = Vec::new();
    let mut indexed = Vec::new();
    for _ in 0..30 {
        for (sql, times) in [
            (changed_by_claim_index_sql(), &mut shipped),
            (with_index.clone(), &mut indexed),
        ] {
            let since = chrono::Utc::now() - chrono::Duration::seconds(7);
            let started = Instant::now();
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(None::<String>)
                .bind(since)
                .fetch_all(&pool)
                .await
                .expect("changed rows");
            times.push(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    sqlx::raw_sql("DROP INDEX bench_updated_at_idx")
        .execute(&lab.admin)
        .await
        .expect("drop the optional index");
    line(
        "changed rows, optional index on updated_at",
        format!("with the index {}", ms(median(indexed.clone()))),
        format!("claim index, as shipped {}", ms(median(shipped.clone()))),
        ratio(median(indexed).as_secs_f64(), median(shipped).as_secs_f64()),
        "a recommendation only",
    )
}

/// Types `text` into the board's filter one key at a time through the real poller's model;
/// returns the time from each key to the filtered board drawn, the first release's filter and
/// sort of the same rows for each key, and how many rows the last key left.
pub async fn type_filter(
    poller: &PollerHandle,
    text: &str,
) -> (Vec<Duration>, Vec<Duration>, usize) {
    let mut status = poller.status.clone();
    let mut app = ui::app((80, 24));
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    let mut typed = String::new();
    let mut latencies = Vec::new();
    let mut baselines = Vec::new();
    let mut shown = 0;
    for c in text.chars() {
        typed.push(c);
        let query = BoardQuery {
            text: typed.clone(),
            ..BoardQuery::default()
        };
        let started = Instant::now();
        poller.send(Instruction::Query(query.clone()));
        let current = loop {
            status.changed().await.expect("the poller runs");
            let current = status.borrow_and_update().clone();
            if current
                .fleet
                .as_ref()
                .is_some_and(|f| *f.board.query() == query)
            {
                break current;
            }
        };
        let fleet = current.fleet.clone().expect("a fleet");
        app.board.query = query;
        ui::absorb(&mut app, current, &mut terminal);
        latencies.push(started.elapsed());
        shown = fleet.board.len();
        baselines.push(ui::old_refresh(&fleet, &typed.to_lowercase()));
    }
    poller.send(Instruction::Query(BoardQuery::default()));
    (latencies, baselines, shown)
}

/// Opens the detail of a space in the real console five times; returns the time from Enter to
/// the detail on screen, and the detail query's own time.
pub async fn enter_detail(
    console: &mut pty::Console,
    session: &Session,
) -> (Vec<Duration>, Vec<Duration>) {
    let mut enter = Vec::new();
    for _ in 0..5 {
        console.send("j");
        let started = Instant::now();
        console.send_now("\r");
        loop {
            if console.screen().contains("── bootstrap") {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the detail never showed"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        enter.push(started.elapsed());
        console.send("\x1b");
        console.wait_until("the board again", 10, |s| !s.contains("── bootstrap"));
    }
    let topology = session.topology();
    let mut tx = topology
        .primary()
        .begin(bootstrap_console::store::db::TxKind::Read)
        .await
        .expect("a transaction");
    let ids: Vec<uuid::Uuid> =
        sqlx::query_scalar("SELECT id FROM legacy_space_publication_bootstraps LIMIT 5")
            .fetch_all(&mut *tx)
            .await
            .expect("ids");
    tx.commit().await.expect("commit");
    let mut query = Vec::new();
    for id in ids {
        let started = Instant::now();
        session.reads().detail(id).await.expect("a detail");
        query.push(started.elapsed());
    }
    (enter, query)
}
