//! Speed and memory of the console's hot paths, as ratios against a baseline in the same run
//! (shared machines are noisy; ratios are what carry over):
//!
//! * assessing a board snapshot of 10 000 spaces against one of 100 (linear: ~100×);
//! * drawing the board at 160×48 with 10 000 spaces against 100 (only visible rows are laid
//!   out: ~1×);
//! * defusing a hostile error message against copying a clean one.
//!
//! `cargo bench --bench console` (allocation counts and bytes per iteration are reported too).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bootstrap_console::domain::board::Board;
use bootstrap_console::domain::progress::ProgressTracker;
use bootstrap_console::domain::session::Access;
use bootstrap_console::domain::signals::Thresholds;
use bootstrap_console::domain::text;
use bootstrap_console::poller::{Extra, Focus, PollStatus, Snapshot};
use bootstrap_console::store::read::{BoardLine, BoardRows};
use bootstrap_console::store::rows::BootstrapRow;
use bootstrap_console::tui::app::{App, Display, Header};
use bootstrap_console::tui::update::{self, Event};
use bootstrap_console::tui::view;
use chrono::{DateTime, Utc};
use divan::{AllocProfiler, Bencher};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use uuid::Uuid;

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [100, 1_000, 10_000];

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000, 0).expect("time")
}

/// `n` spaces in a realistic mix of states.
fn snapshot(n: usize) -> BoardRows {
    let states = ["queued", "running", "succeeded", "failed", "canceled"];
    let lines = (0..n)
        .map(|i| {
            let run_state = states[i % states.len()];
            let running = run_state == "running";
            let terminal = matches!(run_state, "succeeded" | "failed" | "canceled");
            BoardLine {
                bootstrap: BootstrapRow {
                    id: Uuid::from_u128(i as u128),
                    tenant_id: format!("tenant-{}", i % 40),
                    knowledge_space_id: Uuid::from_u128(i as u128),
                    idempotency_key: "legacy-space-publication-bootstrap-v1".into(),
                    checkpoint: if run_state == "succeeded" {
                        "published"
                    } else {
                        "rebuilding"
                    }
                    .into(),
                    run_state: run_state.into(),
                    total_documents: 100,
                    completed_documents: if run_state == "succeeded" {
                        100
                    } else {
                        (i % 100) as i32
                    },
                    worker_id: running.then(|| format!("worker-{}", i % 8)),
                    lease_token: running.then(|| Uuid::from_u128(1)),
                    lease_expires_at: running.then(|| now() + chrono::Duration::seconds(20)),
                    heartbeat_at: running.then(now),
                    last_error_code: (run_state == "failed").then(|| "compile_timeout".into()),
                    last_error_message: (run_state == "failed").then(|| "exceeded 300s".into()),
                    row_version: 3,
                    published_publication_id: (run_state == "succeeded")
                        .then(|| Uuid::from_u128(2)),
                    published_fingerprint: (run_state == "succeeded").then(|| "fp".into()),
                    published_head_revision: (run_state == "succeeded").then_some(1),
                    snapshot_metadata: serde_json::json!({}),
                    created_at: now(),
                    updated_at: now(),
                    completed_at: terminal.then(now),
                },
                lease: None,
            }
        })
        .collect();
    BoardRows {
        db_now: now(),
        lines,
    }
}

#[divan::bench(args = SIZES)]
fn assess_board(bencher: Bencher, n: usize) {
    let thresholds = Thresholds::default();
    bencher
        .with_inputs(|| (snapshot(n), ProgressTracker::new(thresholds.rate_window)))
        .bench_values(|(rows, mut tracker)| Board::assess(rows, &mut tracker, &thresholds));
}

fn app_with(n: usize) -> App {
    let thresholds = Thresholds::default();
    let mut tracker = ProgressTracker::new(thresholds.rate_window);
    let board = Board::assess(snapshot(n), &mut tracker, &thresholds);
    let header = Header {
        target: "ops@db:5432/platform".into(),
        label: Some("prod".into()),
        sandbox: false,
        tenant_scope: None,
        access: Access::ReadWrite,
    };
    let mut app = App::new(
        header,
        Display {
            ascii: false,
            color: true,
        },
        Duration::from_secs(2),
        (160, 48),
    );
    let status = PollStatus {
        snapshot: Some(Arc::new(Snapshot {
            board,
            extra: Extra::None,
            focus: Focus::Board,
        })),
        received_at: Some(Instant::now()),
        latency: Some(Duration::from_millis(10)),
        sequence: 1,
        interval: Duration::from_secs(2),
        ..PollStatus::default()
    };
    update::update(&mut app, Event::Poll(status));
    app
}

#[divan::bench(args = SIZES)]
fn draw_board_160x48(bencher: Bencher, n: usize) {
    let app = app_with(n);
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("terminal");
    bencher.bench_local(|| {
        terminal
            .draw(|frame| view::draw(frame, &app))
            .expect("draw");
    });
}

const HOSTILE: &str =
    "pdf parser: \u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mFATAL\u{1b}[0m page 3 \u{202e}gnp.exe";
const CLEAN: &str = "pdf parser: unexpected end of object stream in document 0aff2305 page 3";

#[divan::bench]
fn copy_clean_message_baseline() -> String {
    divan::black_box(CLEAN).to_string()
}

#[divan::bench]
fn defuse_hostile_message() -> String {
    text::clean(divan::black_box(HOSTILE), 200)
}
