//! The UI thread's share of the work, measured on the real app with the real poller's
//! snapshots, and the old way of doing the same (every row rebuilt, re-filtered and re-sorted
//! on every snapshot and key) on the same rows, as the baseline.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bootstrap_console::domain::board::BoardRow;
use bootstrap_console::domain::fleet::FleetSnapshot;
use bootstrap_console::poller::PollStatus;
use bootstrap_console::topology::Access;
use bootstrap_console::tui::app::{App, Display, Header};
use bootstrap_console::tui::terminal::QuietBackend;
use bootstrap_console::tui::update::{self, Event};
use bootstrap_console::tui::view;
use ratatui::backend::{CrosstermBackend, TestBackend};
use ratatui::{Terminal, TerminalOptions, Viewport};
use uuid::Uuid;

pub fn app(size: (u16, u16)) -> App {
    let header = Header {
        target: "bench@fleet".into(),
        polls: String::new(),
        label: Some("bench".into()),
        sandbox: false,
        tenant_scope: None,
        access: Access::ReadWrite,
        needs_migrate: false,
    };
    let display = Display {
        ascii: false,
        color: true,
    };
    App::new(header, display, Duration::from_secs(1), size)
}

/// The UI thread's work for one new status: `update` takes it, then the frame is drawn.
pub fn absorb(app: &mut App, status: PollStatus, terminal: &mut Terminal<TestBackend>) -> Duration {
    let started = Instant::now();
    app.now = Instant::now();
    update::update(app, Event::Poll(Box::new(status)));
    terminal.draw(|frame| view::draw(frame, app)).expect("draw");
    started.elapsed()
}

/// The first release's filter: every field lower-cased and formatted again for every row.
fn old_filter_matches(row: &BoardRow, needle: &str) -> bool {
    row.tenant.to_lowercase().contains(needle)
        || row.space.to_string().contains(needle)
        || row.id.to_string().contains(needle)
        || row
            .worker
            .as_ref()
            .is_some_and(|w| w.worker_id.to_lowercase().contains(needle))
        || row
            .error_code
            .as_ref()
            .is_some_and(|c| c.to_lowercase().contains(needle))
}

/// The first release's work per snapshot and per filter key, on the same rows: a map of every
/// row's state for the change highlight, every row filtered, the survivors sorted.
pub fn old_refresh(snapshot: &FleetSnapshot, needle: &str) -> Duration {
    let started = Instant::now();
    let rows: Vec<BoardRow> = snapshot.rows.values().collect();
    let previous: HashMap<Uuid, (u8, u8, i32)> = rows
        .iter()
        .map(|r| {
            (
                r.id,
                (
                    r.run_state.index() as u8,
                    r.checkpoint.index() as u8,
                    r.row_version,
                ),
            )
        })
        .collect();
    let mut visible: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| needle.is_empty() || old_filter_matches(r, needle))
        .map(|(i, _)| i)
        .collect();
    // The first release's order: attention class, longest idle, id.
    let key = |r: &BoardRow| (r.signals.attention, r.updated_at, r.id);
    visible.sort_by(|a, b| key(&rows[*a]).cmp(&key(&rows[*b])));
    std::hint::black_box((previous.len(), visible.len()));
    started.elapsed()
}

/// A writer that only counts what it is given.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicUsize>);

impl Counter {
    pub fn bytes(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.fetch_add(buf.len(), Ordering::Relaxed);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Bytes written per second when the same, unchanging app is drawn on every 500 ms tick for
/// `ticks` ticks: through ratatui's plain crossterm backend (the first release), and through the
/// console's quiet backend.
pub fn idle_bytes_per_second(app: &mut App, ticks: u32) -> (f64, f64) {
    let plain = Counter::default();
    let quiet = Counter::default();
    // A fixed viewport: the counters are not terminals whose size could be asked.
    let options = || TerminalOptions {
        viewport: Viewport::Fixed(ratatui::layout::Rect::new(0, 0, app.size.0, app.size.1)),
    };
    let mut plain_terminal =
        Terminal::with_options(CrosstermBackend::new(plain.clone()), options())
            .expect("a terminal");
    let mut quiet_terminal = Terminal::with_options(
        QuietBackend::new(CrosstermBackend::new(quiet.clone())),
        options(),
    )
    .expect("a terminal");
    let mut draw = |app: &App| {
        plain_terminal.draw(|f| view::draw(f, app)).expect("draw");
        quiet_terminal.draw(|f| view::draw(f, app)).expect("draw");
    };
    draw(app);
    let (plain_start, quiet_start) = (plain.bytes(), quiet.bytes());
    for _ in 0..ticks {
        let now = app.now + Duration::from_millis(500);
        update::update(app, Event::Tick(now));
        draw(app);
    }
    let seconds = f64::from(ticks) / 2.0;
    (
        (plain.bytes() - plain_start) as f64 / seconds,
        (quiet.bytes() - quiet_start) as f64 / seconds,
    )
}
