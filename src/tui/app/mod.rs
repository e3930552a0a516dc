//! The console's state. Everything on screen is derived from an [`App`]; only `update` changes
//! it. Each view owns its cursor and scroll; the rows themselves come from the poller's latest
//! snapshot, already ordered and filtered off the UI thread.

mod dialog;

pub use dialog::{Dialog, Field, REPLAN_EVERY, Stage};

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::board::{BoardQuery, BoardRow, BoardView};
use crate::domain::fleet::FleetSnapshot;
use crate::domain::ids::IdNames;
use crate::domain::signals::Thresholds;
use crate::poller::{Extra, Focus, PollHealth, PollStatus};
use crate::topology::Access;

/// How long a changed row stays highlighted.
pub(crate) const CHANGE_HIGHLIGHT: Duration = Duration::from_secs(4);
/// How long a message stays in the status line.
pub(crate) const MESSAGE_TTL: Duration = Duration::from_secs(8);
/// The smallest terminal the console draws into.
pub(crate) const MIN_WIDTH: u16 = 80;
pub(crate) const MIN_HEIGHT: u16 = 24;

/// Whether a terminal of `width` × `height` is below the smallest size the console draws in.
pub(crate) fn too_small(width: u16, height: u16) -> bool {
    width < MIN_WIDTH || height < MIN_HEIGHT
}

/// Fixed facts shown in the header.
#[derive(Debug, Clone)]
pub struct Header {
    /// `user@host:port/db`, never with a password: where actions go (until a failover moves
    /// the primary; the poller's health then names the new one).
    pub target: String,
    /// `, polls <standby>` when polls read a standby (`--read-url`), else empty.
    pub polls: String,
    /// `--label` (e.g. `prod`), drawn prominently.
    pub label: Option<String>,
    /// A private simulated database.
    pub sandbox: bool,
    pub tenant_scope: Option<String>,
    pub access: Access,
    /// The database lacks what actions write through (`migrate` has not run, or not since
    /// this version): the header says so for as long as the console runs.
    pub needs_migrate: bool,
}

/// Display options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Display {
    /// Draw with ASCII only (no box drawing, no block characters).
    pub ascii: bool,
    /// Use colour (off with `NO_COLOR`).
    pub color: bool,
}

/// The main views, in Tab order (detail is entered from the others).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    Board,
    Tenants,
    Detail(Uuid),
    Leases,
    Audit,
    Health,
}

impl View {
    /// What the poller must fetch for this view.
    pub(crate) fn focus(&self) -> Focus {
        match self {
            View::Board => Focus::Board,
            View::Tenants => Focus::Tenants,
            View::Detail(id) => Focus::Detail(*id),
            View::Leases => Focus::Leases,
            View::Audit => Focus::Audit,
            // The ledger check runs on demand, never with the polls.
            View::Health => Focus::Board,
        }
    }
}

/// The board's own state.
#[derive(Debug, Clone, Default)]
pub struct BoardState {
    /// What the operator asked for; the snapshot's view catches up a moment later.
    pub query: BoardQuery,
    /// The `/` filter is being typed.
    pub editing: bool,
    pub cursor: usize,
    pub offset: usize,
    /// The space under the cursor, so it stays selected as rows move.
    pub selected: Option<Uuid>,
    /// The selection is on the top row, the most urgent one, whatever space that is, until
    /// the operator moves (then it follows the chosen space); `g` follows the top again.
    pub following_top: bool,
    pub marked: BTreeSet<Uuid>,
    /// Error messages of rows that were on screen, by bootstrap id, with the row version
    /// they were read at (the model keeps no messages: a million of them would not fit).
    pub messages: HashMap<Uuid, (i32, Box<str>)>,
    /// The ids last asked for, asked again only after the next poll.
    pub messages_asked: Vec<Uuid>,
}

/// Messages held at most (about a megabyte); past it the cache starts again from the
/// rows on screen.
pub(crate) const MESSAGES_HELD: usize = 4096;

impl BoardState {
    /// The message of `row` as read at its row version, if held.
    pub fn message<'a>(&'a self, row: &'a BoardRow) -> Option<&'a str> {
        row.error_message.as_deref().or_else(|| {
            self.messages
                .get(&row.id)
                .filter(|(version, _)| *version == row.row_version)
                .map(|(_, text)| &**text)
        })
    }

    /// Takes the messages the poller read.
    pub(crate) fn learn_messages(&mut self, rows: &[crate::store::fleet::MessageRow]) {
        if self.messages.len() + rows.len() > MESSAGES_HELD {
            self.messages.clear();
        }
        for row in rows {
            self.messages.insert(
                row.id,
                (row.row_version, row.message.clone().into_boxed_str()),
            );
        }
    }
}

/// A cursor over a list (tenants, leases, audit records).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListState {
    pub(crate) cursor: usize,
    pub(crate) offset: usize,
}

/// The detail view's own state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DetailState {
    /// Lines scrolled past.
    pub scroll: u16,
}

/// A status-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub error: bool,
    pub at: Instant,
}

/// The Health view: the last ledger check (run on demand) and the stall outliers of the
/// latest poll.
#[derive(Debug, Clone, Default)]
pub struct HealthView {
    /// A check under way: (bootstraps checked, bootstraps in scope).
    pub running: Option<(i64, i64)>,
    /// The last check: when it ended, and what it found or why it failed.
    pub checked: Option<(Instant, Result<crate::domain::health::LedgerCheck, String>)>,
    /// Running spaces far slower than their peers, as of the latest poll.
    pub outliers: Vec<crate::domain::outliers::Outlier>,
    pub list: ListState,
}

/// The audit chain's verification, for the audit view. It runs in the background while that
/// view is shown, one run at a time, each at most [`ChainState::RUN_BUDGET`]: a long log is
/// verified over several runs, [`ChainState::PAUSE`] apart, each going on from the last sound
/// record. Once the whole chain is verified, later passes ([`ChainState::EVERY`]) read only
/// the records added since, starting from the head verified last: a head that is gone or
/// changed since is found at once. The whole chain is read again every
/// [`ChainState::WHOLE_EVERY`].
#[derive(Debug, Default)]
pub struct ChainState {
    /// A run under way: records read so far in it.
    pub running: Option<u64>,
    /// A pass not finished yet (between two runs, or in one).
    pub pass: Option<ChainPass>,
    /// The last pass that ended: when, and what it found or why it failed.
    pub checked: Option<(
        Instant,
        Result<crate::domain::audit_chain::Verification, String>,
    )>,
    /// The head of the last pass, when it found the chain intact, and the records verified up
    /// to it: the next pass goes on from there. A broken chain clears it, so the next pass reads
    /// it all again.
    pub intact: Option<(crate::domain::audit_chain::ChainHead, u64)>,
    /// The last head ever found intact (hex): a pass from the start must still find it, so
    /// records removed from the end since are found too.
    pub expected: Option<String>,
    /// When a pass last found the whole chain intact: records before the head are read again
    /// every [`ChainState::WHOLE_EVERY`], or a change to them would go unseen.
    pub whole_at: Option<Instant>,
    /// Ctrl-R came while a run was under way: a pass over the whole chain follows it.
    pub whole_asked: bool,
}

/// A verification of the chain that may take several runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainPass {
    /// Where the next run starts: the last record found sound.
    pub(crate) from: Option<crate::domain::audit_chain::ChainHead>,
    /// Records verified in this pass so far (with those verified before `from`).
    pub(crate) records: u64,
    /// When the next run may start.
    pub(crate) next_run: Instant,
    /// It reads the whole chain, from its start (not only what was added since a head).
    pub(crate) whole: bool,
    /// A head recorded earlier that the pass has not met yet (hex).
    pub(crate) expect: Option<String>,
}

impl ChainState {
    /// How often the chain is verified again while the audit view is shown.
    pub const EVERY: Duration = Duration::from_secs(60);
    /// How long one run may read.
    pub(crate) const RUN_BUDGET: Duration = Duration::from_secs(5);
    /// The rest between two runs of a pass, so a long log is never read without a break.
    pub const PAUSE: Duration = Duration::from_secs(5);

    /// How often the whole chain is read again while the audit view is shown.
    pub(crate) const WHOLE_EVERY: Duration = Duration::from_secs(600);

    /// Whether the next pass should read the whole chain.
    pub(crate) fn whole_due(&self, now: Instant) -> bool {
        self.whole_at
            .is_none_or(|at| now.saturating_duration_since(at) >= Self::WHOLE_EVERY)
    }

    /// Whether a new pass is due at `now`.
    pub(crate) fn due(&self, now: Instant) -> bool {
        self.running.is_none()
            && self.pass.is_none()
            && self
                .checked
                .as_ref()
                .is_none_or(|(at, _)| now.saturating_duration_since(*at) >= Self::EVERY)
    }
}

impl HealthView {
    /// The findings of the last check (none before one, or when it failed).
    pub(crate) fn findings(&self) -> &[crate::domain::health::Finding] {
        match &self.checked {
            Some((_, Ok(health))) => &health.findings,
            _ => &[],
        }
    }

    /// How many lines the list has: findings, then outliers.
    pub(crate) fn listed_len(&self) -> usize {
        self.findings().len() + self.outliers.len()
    }

    /// The bootstrap of the list's line `index`.
    pub(crate) fn listed(&self, index: usize) -> Option<Uuid> {
        let findings = self.findings();
        match findings.get(index) {
            Some(f) => Some(f.bootstrap_id),
            None => self.outliers.get(index - findings.len()).map(|o| o.id),
        }
    }
}

/// Waiting for the standby to replay an action's commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AwaitingReplica {
    pub(crate) since: Instant,
    /// The bounded wait is over and the standby had still not replayed it: the board shows
    /// the state before the action until a poll finds the standby caught up.
    pub(crate) gave_up: bool,
}

/// What covers the current view.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    None,
    Help,
    Dialog(Box<Dialog>),
}

/// The whole state of the console.
pub struct App {
    pub header: Header,
    pub display: Display,
    pub view: View,
    pub overlay: Overlay,
    /// The poller's latest status: data, focused view, health.
    pub status: PollStatus,
    /// Local monotonic time of the last event, for "N s ago".
    pub now: Instant,
    pub board: BoardState,
    pub tenants: ListState,
    pub leases: ListState,
    pub audit: ListState,
    pub health_view: HealthView,
    pub chain: ChainState,
    /// The rollout's pace over the session (the summary's sparklines).
    pub pace: crate::domain::pace::Pace,
    pub detail: DetailState,
    /// The list view the detail shown was opened from (leases, audit, health): Esc goes back
    /// there, to the same line.
    pub detail_from: Option<View>,
    pub message: Option<Message>,
    /// An action committed on the primary that the standby polls read has not replayed yet:
    /// until it has, the board may show the state before it, and says so.
    pub awaiting_replica: Option<AwaitingReplica>,
    pub size: (u16, u16),
    pub bulk_cap: usize,
    /// How long an action's answer is waited for before it is looked up by request id.
    pub apply_deadline: Duration,
    /// What the tenant scope matches when it matches no bootstrap (a typo, or a tenant with
    /// nothing to migrate): the empty board says so instead of looking all clear.
    pub scope_note: Option<String>,
    /// What the signals were assessed with (the views judge lease ages by the same).
    pub thresholds: Thresholds,
    pub next_dialog_id: u64,
    pub should_quit: bool,
    /// Ctrl-C was pressed once while an action was being applied: a second one quits.
    pub quit_armed: bool,
    /// Ctrl-Z: the event loop gives the terminal back and stops the process.
    pub suspend: bool,
    /// Ctrl-L: the event loop clears the terminal and draws everything again (after another
    /// program wrote over the screen).
    pub repaint: bool,
    /// Results whose outcome is still unknown, by (dialog, result): each line carries the
    /// command that settles it, printed when the console quits before they are looked up.
    pub unsettled: std::collections::BTreeMap<(u64, usize), String>,
    /// Keys that act on the board's rows, typed while its rows for the query the earlier keys
    /// set were still being computed: they wait here, in order (with every key after them),
    /// and run once those rows arrive — so each key acts on what the earlier ones produced,
    /// however fast they came.
    pub held_keys: std::collections::VecDeque<crossterm::event::KeyEvent>,
    /// When the first held key came (held keys still waiting after [`HOLD_KEYS_FOR`] are
    /// dropped, saying so).
    pub held_since: Option<Instant>,
    /// `p` was pressed and the poller has not said so yet: statuses published meanwhile show
    /// what the operator asked, not the state before it.
    pub pause_asked: Option<bool>,
}

/// How long keys wait for the board's rows before they are dropped (at a million spaces a new
/// order takes a few seconds).
pub(crate) const HOLD_KEYS_FOR: Duration = Duration::from_secs(15);

impl App {
    /// Ctrl-Z or SIGTSTP: the event loop suspends — unless an action is being applied, whose
    /// transaction would hold its row while the process is stopped.
    pub(crate) fn request_suspend(&mut self) {
        match &self.overlay {
            Overlay::Dialog(d) if d.stage == Stage::Applying => {
                self.say(
                    "an action is being applied: wait for it (or Esc) first",
                    true,
                );
            }
            _ => self.suspend = true,
        }
    }

    pub fn new(header: Header, display: Display, interval: Duration, size: (u16, u16)) -> Self {
        Self {
            header,
            display,
            view: View::Board,
            overlay: Overlay::None,
            status: PollStatus {
                polling: PollHealth {
                    interval,
                    ..PollHealth::default()
                },
                ..PollStatus::default()
            },
            now: Instant::now(),
            board: BoardState {
                following_top: true,
                ..BoardState::default()
            },
            tenants: ListState::default(),
            leases: ListState::default(),
            audit: ListState::default(),
            health_view: HealthView::default(),
            chain: ChainState::default(),
            pace: crate::domain::pace::Pace::default(),
            detail: DetailState::default(),
            detail_from: None,
            message: None,
            awaiting_replica: None,
            size,
            bulk_cap: 100,
            apply_deadline: Duration::from_secs(15),
            scope_note: None,
            thresholds: Thresholds::default(),
            next_dialog_id: 1,
            should_quit: false,
            quit_armed: false,
            suspend: false,
            repaint: false,
            unsettled: std::collections::BTreeMap::new(),
            held_keys: std::collections::VecDeque::new(),
            held_since: None,
            pause_asked: None,
        }
    }

    /// Whether the terminal is below the smallest size the console draws in (it then shows
    /// only a sentence saying so).
    pub(crate) fn too_small(&self) -> bool {
        too_small(self.size.0, self.size.1)
    }

    pub fn fleet(&self) -> Option<&FleetSnapshot> {
        self.status.fleet.as_deref()
    }

    /// How ids in scope are shown (their first digits until the first poll).
    pub fn names(&self) -> &IdNames {
        const NONE: &IdNames = &IdNames::EMPTY;
        self.fleet().map_or(NONE, |f| &f.names)
    }

    /// The rows the board shows, in order.
    pub fn board_view(&self) -> Option<&BoardView> {
        self.fleet().map(|f| &f.board)
    }

    /// The focused view's data, when it is for `focus`.
    pub(crate) fn extra_for(&self, focus: &Focus) -> Option<&Extra> {
        self.status
            .focused
            .as_ref()
            .filter(|f| f.focus == *focus)
            .map(|f| &f.extra)
    }

    /// The board's rows on screen are not yet those of the query the operator set (a new
    /// filter or order is being computed): keys that act on rows wait for them.
    pub fn board_pending(&self) -> bool {
        self.board_view()
            .is_some_and(|view| *view.query() != self.board.query)
    }

    /// The query of the rows on screen (the label says what the rows are, not what is asked).
    pub fn shown_query(&self) -> &BoardQuery {
        self.board_view()
            .map_or(&self.board.query, |view| view.query())
    }

    /// The board row at `position` of the board as shown.
    pub(crate) fn row_at(&self, position: usize) -> Option<BoardRow> {
        self.board_view()?.get(position)
    }

    /// A row by bootstrap id, whether the board shows it or not.
    pub fn row(&self, id: &Uuid) -> Option<BoardRow> {
        self.fleet()?.row(id)
    }

    pub(crate) fn selected_row(&self) -> Option<BoardRow> {
        self.row(&self.board.selected?)
    }

    /// The database clock now, estimated between polls from the local monotonic clock.
    pub fn db_now(&self) -> Option<DateTime<Utc>> {
        self.status.db_now_at(self.now)
    }

    /// Whether a row's run state or checkpoint changed recently enough to be highlighted.
    pub fn recently_changed(&self, row: &BoardRow) -> bool {
        let (Some(at), Some(now)) = (row.state_changed_at, self.db_now()) else {
            return false;
        };
        (now - at).to_std().is_ok_and(|age| age < CHANGE_HIGHLIGHT) || now < at
    }

    /// How long since the last good poll started (local clock: this is about our own polling).
    pub(crate) fn snapshot_age(&self) -> Option<Duration> {
        self.status
            .polling
            .polled_at
            .map(|at| self.now.saturating_duration_since(at))
    }

    pub(crate) fn failing_for(&self) -> Option<Duration> {
        self.status
            .polling
            .failing_since
            .map(|at| self.now.saturating_duration_since(at))
    }

    pub fn say(&mut self, text: impl Into<String>, error: bool) {
        self.message = Some(Message {
            text: text.into(),
            error,
            at: self.now,
        });
    }
}
