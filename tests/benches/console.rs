//! Speed and memory of the console's in-process hot paths, as ratios against a baseline in the
//! same run (shared machines are noisy; ratios are what carry over):
//!
//! * loading 10 000 spaces into the model against 100 (linear: ~100×);
//! * one poll's changes (1% of the rows) applied at 10 000 spaces against 100 (only changed rows
//!   are re-placed: close to 1×);
//! * drawing the board at 160×48 with 10 000 spaces against 100 (only visible rows are laid
//!   out: ~1×);
//! * defusing a hostile error message against copying a clean one;
//! * building how ids are shown for 10 000 time-ordered ids against 100 (a sort: a little over
//!   100×), and a lease coming or going at 10 000 spaces against 100 (the bootstraps' layer is
//!   shared, not rebuilt: close to 1×).
//!
//! `cargo bench --bench console` (allocation counts and bytes per iteration are reported too).
//! The fleet-scale benchmark against a real PostgreSQL is `cargo bench --bench fleet`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bootstrap_console::domain::fleet::Fleet;
use bootstrap_console::domain::ids::IdNames;
use bootstrap_console::domain::signals::Thresholds;
use bootstrap_console::domain::text;
use bootstrap_console::poller::{PollHealth, PollStatus};
use bootstrap_console::store::rows::BoardRecord;
use bootstrap_console::store::sync::Changes;
use bootstrap_console::topology::Access;
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
fn records(n: usize) -> Vec<BoardRecord> {
    let states = ["queued", "running", "succeeded", "failed", "canceled"];
    (0..n)
        .map(|i| {
            let run_state = states[i % states.len()];
            let running = run_state == "running";
            let terminal = matches!(run_state, "succeeded" | "failed" | "canceled");
            BoardRecord {
                id: Uuid::from_u128(i as u128),
                tenant_id: format!("tenant-{}", i % 40),
                knowledge_space_id: Uuid::from_u128(i as u128),
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
                has_lease_token: running,
                lease_expires_at: running.then(|| now() + chrono::Duration::seconds(20)),
                heartbeat_at: running.then(now),
                last_error_code: (run_state == "failed").then(|| "compile_timeout".into()),
                last_error_message: (run_state == "failed").then(|| "exceeded 300s".into()),
                row_version: 3,
                updated_at: now(),
                completed_at: terminal.then(now),
                version: 1,
                page: 0,
            }
        })
        .collect()
}

fn load(n: usize) -> Changes {
    Changes {
        db_now: now(),
        replication: None,
        reset: true,
        upserts: records(n),
        ..Changes::default()
    }
}

#[divan::bench(args = SIZES)]
fn load_model(bencher: Bencher, n: usize) {
    bencher.with_inputs(|| load(n)).bench_values(|changes| {
        let mut fleet = Fleet::new(Thresholds::default());
        fleet.apply(changes);
        fleet
    });
}

/// One poll later: 1% of the rows (at least one) made progress.
fn one_poll(n: usize) -> Changes {
    let later = now() + chrono::Duration::seconds(2);
    let mut upserts = records(n);
    upserts.truncate((n / 100).max(1));
    for record in &mut upserts {
        record.completed_documents = (record.completed_documents + 1).min(record.total_documents);
        record.updated_at = later;
        record.version = 2;
    }
    Changes {
        db_now: later,
        replication: None,
        upserts,
        ..Changes::default()
    }
}

#[divan::bench(args = SIZES)]
fn apply_one_poll(bencher: Bencher, n: usize) {
    bencher
        .with_inputs(|| {
            let mut fleet = Fleet::new(Thresholds::default());
            fleet.apply(load(n));
            (fleet, one_poll(n))
        })
        .bench_values(|(mut fleet, changes)| {
            fleet.apply(changes);
            fleet
        });
}

fn app_with(n: usize) -> App {
    let mut fleet = Fleet::new(Thresholds::default());
    fleet.apply(load(n));
    let header = Header {
        target: "ops@db:5432/platform".into(),
        polls: String::new(),
        label: Some("prod".into()),
        sandbox: false,
        tenant_scope: None,
        access: Access::ReadWrite,
        needs_migrate: false,
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
    let at = Instant::now();
    let status = PollStatus {
        fleet: fleet.snapshot().map(Arc::new),
        fleet_at: Some(at),
        focused: None,
        messages: None,
        polling: PollHealth {
            interval: Duration::from_secs(2),
            poll_time: Some(Duration::from_millis(3)),
            polled_at: Some(at),
            ..PollHealth::default()
        },
        sequence: 1,
    };
    update::update(&mut app, Event::Poll(Box::new(status)));
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

/// `n` time-ordered ids the way UUIDv7 mints them in bulk: many share a millisecond.
fn v7_ids(n: usize) -> Vec<Uuid> {
    (0..n as u128)
        .map(|i| {
            let millis = 0x019e_7044_5a10 + i / 50;
            let random = i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
            Uuid::from_u128((millis << 80) | (0x7 << 76) | (random >> 52))
        })
        .collect()
}

#[divan::bench(args = SIZES)]
fn id_names_build(bencher: Bencher, n: usize) {
    let ids = v7_ids(n);
    bencher.bench_local(|| IdNames::new(ids.iter().copied()));
}

#[divan::bench(args = SIZES)]
fn id_names_lease_change(bencher: Bencher, n: usize) {
    let ids = v7_ids(n + 20);
    let rows = IdNames::new(ids[..n].iter().copied());
    bencher.bench_local(|| rows.with(ids[n..].iter().copied()));
}
