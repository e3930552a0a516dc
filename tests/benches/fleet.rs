//! The fleet-scale benchmark: every figure of the scale table at 100,000 spaces, measured on a
//! private PostgreSQL (with `pg_stat_statements`) holding the scale fixture while simulated
//! workers keep writing, each against a baseline measured in the same run, printed as ratios.
//!
//! `cargo bench --bench fleet` (about 15 minutes; `-- --quick` for a shorter run with
//! shorter windows, `-- --spaces N --tenants T` for another size, `-- --minutes M` for the
//! memory watch).
//!
//! Every client measured runs under a login role of its own, so the database's own accounting
//! (`pg_stat_statements`, planning plus execution) tells their costs apart.

// The tests play the platform and psql, which talk to the database directly: the console's
// rule that every statement is unnamed (src/store/sql.rs) is the console's, not theirs.
#![allow(clippy::disallowed_methods)]

#[path = "fleet/child.rs"]
mod child;
#[path = "fleet/clients.rs"]
mod clients;
#[path = "fleet/lab.rs"]
mod lab;
#[allow(dead_code)]
#[path = "../it/common/pty.rs"]
mod pty;
#[allow(dead_code)]
#[path = "../it/common/svg.rs"]
mod svg;
#[path = "fleet/table.rs"]
mod table;
#[path = "fleet/ui.rs"]
mod ui;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bootstrap_console::domain::signals::Thresholds;
use bootstrap_console::poller::{self, Instruction, PollStatus};
use bootstrap_console::sandbox::fixture::FixtureConfig;
use bootstrap_console::sandbox::sim::{RunConfig, Simulation};
use clients::{
    enter_detail, optional_index, pool_as, repeat, rss_mb, session, start_poller, type_filter,
    watch_poller,
};
use lab::Lab;
use table::{Line, line, median, ms, percentile, print_table, ratio};

const BINARY: &str = env!("CARGO_BIN_EXE_bootstrap-console");

/// The first release's board query: every row and its lease, on every poll.
const FULL_BOARD: &str = "SELECT clock.db_now, x.* FROM (SELECT now() AS db_now) clock \
    LEFT JOIN (SELECT b.id, b.tenant_id, b.knowledge_space_id, b.idempotency_key, \
      b.checkpoint, b.run_state, b.total_documents, b.completed_documents, b.worker_id, \
      b.lease_token, b.lease_expires_at, b.heartbeat_at, b.last_error_code, \
      b.last_error_message, b.row_version, b.published_publication_id, \
      b.published_fingerprint, b.published_head_revision, b.snapshot_metadata, b.created_at, \
      b.updated_at, b.completed_at, l.id AS lease_id, l.operation AS lease_operation, \
      l.acquired_at AS lease_acquired_at \
    FROM legacy_space_publication_bootstraps b \
    LEFT JOIN knowledge_space_mutation_leases l \
      ON l.tenant_id = b.tenant_id AND l.knowledge_space_id = b.knowledge_space_id) x ON true";

/// A board an operator would write by hand: progress counted from the items.
const ITEMS_BOARD: &str = "SELECT b.id, b.tenant_id, b.run_state, b.checkpoint, \
      count(i.bootstrap_id) AS items, count(*) FILTER (WHERE i.status = 'succeeded') AS done, \
      min(l.id::text) AS lease \
    FROM legacy_space_publication_bootstraps b \
    LEFT JOIN legacy_space_publication_bootstrap_items i ON i.bootstrap_id = b.id \
    LEFT JOIN knowledge_space_mutation_leases l \
      ON l.tenant_id = b.tenant_id AND l.knowledge_space_id = b.knowledge_space_id \
    GROUP BY b.id";

const PLAIN: &str = "SELECT * FROM legacy_space_publication_bootstraps";

/// The same rows `status --json` reports, for psql.
const STATUS_ROWS: &str = "SELECT b.*, l.id, l.operation, l.acquired_at \
    FROM legacy_space_publication_bootstraps b LEFT JOIN knowledge_space_mutation_leases l \
      ON l.tenant_id = b.tenant_id AND l.knowledge_space_id = b.knowledge_space_id";
const FAILED_ROWS: &str =
    "SELECT * FROM legacy_space_publication_bootstraps WHERE run_state = 'failed'";

struct Args {
    fixture: FixtureConfig,
    /// How long the memory watch runs.
    minutes: u64,
    /// Measurement windows.
    window: Duration,
    quick: bool,
}

fn args() -> Args {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some(child::WRAPPER) {
        child::wrapper(&argv[1..]);
    }
    let value = |name: &str| {
        argv.iter()
            .position(|a| a == name)
            .and_then(|i| argv.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let quick = argv.iter().any(|a| a == "--quick");
    Args {
        fixture: FixtureConfig {
            spaces: value("--spaces").unwrap_or(100_000) as u32,
            tenants: value("--tenants").unwrap_or(1_000) as u32,
            ..FixtureConfig::default()
        },
        minutes: value("--minutes").unwrap_or(if quick { 2 } else { 10 }),
        window: Duration::from_secs(if quick { 15 } else { 60 }),
        quick,
    }
}

fn main() {
    let args = args();
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(run(args));
}

async fn run(args: Args) {
    println!(
        "fleet benchmark: {} spaces over {} tenants{}",
        args.fixture.spaces,
        args.fixture.tenants,
        if args.quick { " (quick)" } else { "" }
    );
    let lab = Lab::start(&args.fixture).await;
    let mut table: Vec<Line> = Vec::new();

    // The simulated platform writes throughout (until the idle measurement).
    lab.role("bc_sim").await;
    let sim_pool = lab
        .target("bc_sim")
        .simulator_pool(12)
        .await
        .expect("the simulator's pool");
    let simulation = Simulation::start(
        sim_pool,
        RunConfig {
            workers: 8,
            ..RunConfig::default()
        },
        Vec::new(),
    );

    // The console an operator keeps open, in a pseudo-terminal: its memory is watched to the end.
    lab.role("bc_watch").await;
    let watch_url = lab.url("bc_watch");
    let mut watched = pty::Console::start(
        &["watch", "--database-url", &watch_url, "--interval", "1"],
        &[],
        80,
        24,
    );
    let watch_started = Instant::now();
    watched.wait_until("the board", 120, |s| s.contains(" spaces"));
    let watched_pid = watched.pid().expect("the console's pid");
    println!("  the console in a pty is up (pid {watched_pid})");

    // 1. The incremental poller, as the console runs it: cost per poll, period, UI work.
    let poller = start_poller(&lab, "bc_console", Duration::from_secs(1)).await;
    let incremental = watch_poller(&lab, "bc_console", &poller, args.window).await;
    let per_poll = incremental.db.millis / incremental.polls.max(1) as f64;
    println!(
        "  incremental: {} polls, {:.2} ms database time per poll",
        incremental.polls, per_poll
    );

    println!("  measured the poller; now a change of interval");
    // 2. A change of interval takes effect at once.
    poller.send(Instruction::Interval(Duration::from_secs(60)));
    tokio::time::sleep(Duration::from_secs(4)).await;
    let asked = Instant::now();
    poller.send(Instruction::Interval(Duration::from_secs(2)));
    let mut status = poller.status.clone();
    let last = status.borrow_and_update().polling.polled_at;
    let next_poll = tokio::time::timeout(Duration::from_secs(70), async {
        loop {
            status.changed().await.expect("the poller runs");
            let polled = status.borrow_and_update().polling.polled_at;
            if polled != last {
                return polled.map(|p| p.saturating_duration_since(asked));
            }
        }
    })
    .await
    .ok()
    .flatten();

    // 3. Typing a filter: each key until the filtered board is on screen.
    poller.send(Instruction::Interval(Duration::from_secs(1)));
    let tenant: String = sqlx::query_scalar(
        "SELECT DISTINCT tenant_id FROM legacy_space_publication_bootstraps ORDER BY 1 \
         LIMIT 1 OFFSET (SELECT LEAST(42, count(DISTINCT tenant_id) - 1) \
                         FROM legacy_space_publication_bootstraps)",
    )
    .fetch_one(&lab.admin)
    .await
    .expect("a tenant");
    let (typing, typing_baseline, shown) = type_filter(&poller, &tenant).await;
    println!(
        "  filter keys ({tenant}): {}",
        typing.iter().map(|d| ms(*d)).collect::<Vec<_>>().join(", ")
    );

    println!("  typed a filter; now Enter → detail in the console");
    // 4. Enter → the detail on screen, in the real console.
    let detail_session = session(&lab, "bc_detail").await;
    let (enter, detail_query) = enter_detail(&mut watched, &detail_session).await;

    println!("  now the baselines of one poll");
    // 5. Baselines of one poll's database time, under the same load.
    let full_pool = pool_as(&lab, "bc_full", 1).await;
    let (full_db, full_runs, _) = lab
        .cost_of(
            "bc_full",
            repeat(
                &full_pool,
                FULL_BOARD,
                Duration::from_secs(1),
                args.window / 3,
                1000,
            ),
        )
        .await;
    let plain_pool = pool_as(&lab, "bc_plain", 1).await;
    let (plain_db, plain_runs, _) = lab
        .cost_of(
            "bc_plain",
            repeat(
                &plain_pool,
                PLAIN,
                Duration::from_secs(1),
                args.window / 3,
                1000,
            ),
        )
        .await;
    let items_pool = pool_as(&lab, "bc_items", 1).await;
    let (items_db, items_runs, _) = lab
        .cost_of(
            "bc_items",
            repeat(
                &items_pool,
                ITEMS_BOARD,
                Duration::ZERO,
                Duration::from_secs(600),
                3,
            ),
        )
        .await;
    let full_per = full_db.millis / full_runs.max(1) as f64;
    let plain_per = plain_db.millis / plain_runs.max(1) as f64;
    let items_per = items_db.millis / items_runs.max(1) as f64;
    table.push(line(
        "database time per poll",
        format!("{per_poll:.2} ms"),
        format!("today's full board query {full_per:.0} ms"),
        ratio(per_poll, full_per),
        "≤ 10 ms mean",
    ));
    table.push(line(
        "",
        String::new(),
        format!("a board joining items {items_per:.0} ms"),
        ratio(per_poll, items_per),
        "",
    ));
    table.push(line(
        "",
        String::new(),
        format!("plain SELECT * (same driver) {plain_per:.0} ms"),
        ratio(per_poll, plain_per),
        "",
    ));
    let period = median(incremental.periods.clone());
    table.push(line(
        "poll period with --interval 1",
        format!(
            "median {} p95 {}",
            ms(period),
            ms(percentile(incremental.periods.clone(), 0.95))
        ),
        "the interval, 1000 ms".into(),
        ratio(period.as_secs_f64(), 1.0),
        "the interval, start to start",
    ));
    table.push(line(
        "interval 60 s → 2 s, 4 s after a poll",
        next_poll.map_or("no poll within 70 s".into(), |d| {
            format!("next poll after {}", ms(d))
        }),
        "due at once (2 s < 4 s)".into(),
        String::new(),
        "takes effect at once",
    ));
    let ui_median = median(incremental.ui.clone());
    let ui_baseline = median(incremental.baseline_ui.clone());
    table.push(line(
        "UI-thread work per new snapshot",
        format!(
            "median {} max {}",
            ms(ui_median),
            ms(incremental.ui.iter().max().copied().unwrap_or_default())
        ),
        format!("old rebuild of every row {}", ms(ui_baseline)),
        ratio(ui_median.as_secs_f64(), ui_baseline.as_secs_f64()),
        "≤ 5 ms",
    ));
    table.push(line(
        "filter typing, per key",
        format!(
            "median {} max {} ({shown} rows)",
            ms(median(typing.clone())),
            ms(typing.iter().max().copied().unwrap_or_default())
        ),
        format!(
            "old filter and sort {}",
            ms(median(typing_baseline.clone()))
        ),
        ratio(
            median(typing).as_secs_f64(),
            median(typing_baseline).as_secs_f64(),
        ),
        "≤ 10 ms",
    ));
    table.push(line(
        "Enter → detail on screen (pty)",
        format!("median {}", ms(median(enter.clone()))),
        format!(
            "the detail query alone {}",
            ms(median(detail_query.clone()))
        ),
        ratio(
            median(enter).as_secs_f64(),
            median(detail_query).as_secs_f64(),
        ),
        "≤ 100 ms",
    ));
    drop(poller);

    println!("  now status against psql");
    // 6. status against psql, time and peak memory (three runs each, medians).
    let status_url = lab.url("bc_status");
    lab.role("bc_status").await;
    let psql_url = lab.url("bc_psql");
    lab.role("bc_psql").await;
    // psql's peak memory holding every row: the memory baseline of the console as well.
    let mut psql_rows_rss = 0.0;
    for (what, status_args, psql_sql, target) in [
        (
            "status --json",
            vec!["status", "--json"],
            STATUS_ROWS,
            "≤ 1.5× psql",
        ),
        (
            "status --attention failed",
            vec!["status", "--attention", "failed"],
            FAILED_ROWS,
            "≤ 2× psql",
        ),
    ] {
        let mut console = Vec::new();
        let mut psql = Vec::new();
        for _ in 0..3 {
            let mut with_url = status_args.clone();
            with_url.extend(["--database-url", &status_url]);
            let ran = child::measure(BINARY, &with_url);
            // status exits 1 when something needs attention: that is a report, not a failure.
            assert!(matches!(ran.exit, 0 | 1), "{what} failed: {ran:?}");
            console.push(ran);
            let ran = child::measure(
                "psql",
                &["-X", "-A", "-t", "-q", "-d", &psql_url, "-c", psql_sql],
            );
            assert_eq!(ran.exit, 0, "psql failed");
            psql.push(ran);
        }
        let time = |c: &[child::Cost]| median(c.iter().map(|c| c.wall).collect());
        let rss = |c: &[child::Cost]| {
            let mut v: Vec<f64> = c.iter().map(|c| c.peak_rss_mb).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        if psql_sql == STATUS_ROWS {
            psql_rows_rss = rss(&psql);
        }
        table.push(line(
            what,
            format!("{} {:.0} MB", ms(time(&console)), rss(&console)),
            format!("psql {} {:.0} MB", ms(time(&psql)), rss(&psql)),
            format!(
                "{} time, {} memory",
                ratio(time(&console).as_secs_f64(), time(&psql).as_secs_f64()),
                ratio(rss(&console), rss(&psql))
            ),
            target,
        ));
    }

    println!("  now five consoles, then five first-release consoles");
    // 7. Five consoles at once, against five first-release consoles.
    let five_window = args.window;
    let mut five = Vec::new();
    for _ in 0..5 {
        five.push(start_poller(&lab, "bc_five", Duration::from_secs(1)).await);
    }
    let before = lab.db_time("bc_five").await;
    tokio::time::sleep(five_window).await;
    let five_db = lab.db_time("bc_five").await - before;
    drop(five);
    let old_pool = pool_as(&lab, "bc_five_old", 5).await;
    let (old_db, old_runs, old_took) = lab
        .cost_of("bc_five_old", async {
            let runs = (0..5).map(|_| {
                repeat(
                    &old_pool,
                    FULL_BOARD,
                    Duration::from_secs(1),
                    five_window,
                    10_000,
                )
            });
            futures::future::join_all(runs).await.iter().sum::<usize>()
        })
        .await;
    let five_share = five_db.millis / five_window.as_millis() as f64 * 100.0;
    let old_share = old_db.millis / old_took.as_millis() as f64 * 100.0;
    table.push(line(
        "5 consoles watching: database busy",
        format!("{five_share:.1}% of one core"),
        format!("5 × full board query {old_share:.0}% ({old_runs} polls)"),
        ratio(five_share, old_share),
        "polite",
    ));

    // An optional index the platform team could add: what it would save on changed rows.
    println!("  now an optional index on updated_at");
    table.push(optional_index(&lab).await);

    println!("  now waiting for the memory watch to finish");
    // 8. The watched console's memory over time.
    let mut samples = Vec::new();
    let marks: Vec<u64> = if args.minutes <= 2 {
        vec![1, args.minutes]
    } else {
        vec![1, 5, args.minutes]
    };
    for minute in marks {
        let at = watch_started + Duration::from_secs(minute * 60);
        if let Some(wait) = at.checked_duration_since(Instant::now()) {
            tokio::time::sleep(wait).await;
        }
        samples.push((minute, rss_mb(watched_pid)));
    }
    let last_rss = samples.last().map_or(0.0, |s| s.1);
    table.push(line(
        "console RSS (pty, --interval 1)",
        samples
            .iter()
            .map(|(m, mb)| format!("{m} min {mb:.0} MB"))
            .collect::<Vec<_>>()
            .join(", "),
        format!("psql holding every row {psql_rows_rss:.0} MB"),
        ratio(last_rss, psql_rows_rss),
        "≤ 150 MB after 10 min",
    ));
    drop(watched);

    println!("  now idle output");
    // 9. Idle output: the platform stops writing; once the simulated workers' leases ran out
    // (12 s), a fresh console idles at 80×24.
    simulation.stop().await;
    tokio::time::sleep(Duration::from_secs(15)).await;
    lab.role("bc_idle").await;
    let idle_url = lab.url("bc_idle");
    let idle_console = pty::Console::start(&["watch", "--database-url", &idle_url], &[], 80, 24);
    idle_console.wait_until("the board", 120, |s| s.contains(" spaces"));
    tokio::time::sleep(Duration::from_secs(if args.quick { 5 } else { 15 })).await;
    let idle_window = Duration::from_secs(if args.quick { 20 } else { 60 });
    let start_bytes = idle_console.raw_output().len();
    tokio::time::sleep(idle_window).await;
    let raw = idle_console.raw_output();
    let window_bytes = &raw[start_bytes..];
    let idle_rate = window_bytes.len() as f64 / idle_window.as_secs_f64();
    let hides = window_bytes
        .windows(6)
        .filter(|w| w == b"\x1b[?25l")
        .count();
    drop(idle_console);
    let idle_session = session(&lab, "bc_idle2").await;
    let fleet = idle_session
        .reads()
        .load_fleet(Thresholds::default())
        .await
        .expect("a fleet")
        .snapshot()
        .expect("a snapshot");
    let mut app = ui::app((80, 24));
    let at = Instant::now();
    app.now = at;
    bootstrap_console::tui::update::update(
        &mut app,
        bootstrap_console::tui::update::Event::Poll(Box::new(PollStatus {
            fleet: Some(Arc::new(fleet)),
            fleet_at: Some(at),
            focused: None,
            messages: None,
            polling: poller::PollHealth {
                interval: Duration::from_secs(2),
                period: Some(Duration::from_secs(2)),
                poll_time: Some(Duration::from_millis(3)),
                polled_at: Some(at),
                ..poller::PollHealth::default()
            },
            sequence: 1,
        })),
    );
    let (plain_rate, quiet_rate) = ui::idle_bytes_per_second(&mut app, 120);
    table.push(line(
        "idle terminal output (pty, 80×24)",
        format!("{idle_rate:.1} B/s, {hides} cursor hides"),
        format!("first release's backend {plain_rate:.0} B/s (same frames: {quiet_rate:.0})"),
        ratio(idle_rate, plain_rate),
        "≤ 50 B/s",
    ));

    print_table(&table);
}
