//! The console's state. Everything on screen is derived from an [`App`]; only `update` changes it.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use uuid::Uuid;

use crate::domain::actions::{Action, Plan};
use crate::domain::board::{Board, BoardRow};
use crate::domain::model::{Checkpoint, RunState};
use crate::domain::session::Access;
use crate::domain::signals::{Attention, Thresholds};
use crate::poller::{Extra, PollStatus};

/// How long a changed row stays highlighted.
pub const CHANGE_HIGHLIGHT: Duration = Duration::from_secs(4);
/// How long a message stays in the status line.
pub const MESSAGE_TTL: Duration = Duration::from_secs(8);
/// The smallest terminal the console draws into.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

/// Fixed facts shown in the header.
#[derive(Debug, Clone)]
pub struct Header {
    /// `user@host:port/db`, never with a password.
    pub target: String,
    /// `--label` (e.g. `prod`), drawn prominently.
    pub label: Option<String>,
    /// A private simulated database.
    pub sandbox: bool,
    pub tenant_scope: Option<String>,
    pub access: Access,
}

/// Display options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Display {
    /// Draw with ASCII only (no box drawing, no block characters).
    pub ascii: bool,
    /// Use colour (off with `NO_COLOR`).
    pub color: bool,
}

/// The main views, in Tab order (detail is entered from the board).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    Board,
    Detail(Uuid),
    Leases,
    Audit,
}

/// Quick filters: by attention class or run state, cycled with `f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quick {
    All,
    NeedsAttention,
    Class(Attention),
}

impl Quick {
    pub fn cycle() -> Vec<Quick> {
        let mut all = vec![Quick::All, Quick::NeedsAttention];
        all.extend(Attention::ALL.iter().map(|a| Quick::Class(*a)));
        all
    }

    pub fn label(self) -> String {
        match self {
            Quick::All => "all".into(),
            Quick::NeedsAttention => "needs attention".into(),
            Quick::Class(a) => a.label().into(),
        }
    }

    pub fn matches(self, row: &BoardRow) -> bool {
        match self {
            Quick::All => true,
            Quick::NeedsAttention => row.signals.attention.needs_attention(),
            Quick::Class(a) => row.signals.attention == a,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Attention,
    Tenant,
    Progress,
    Idle,
}

impl SortKey {
    pub const ALL: [SortKey; 4] = [Self::Attention, Self::Tenant, Self::Progress, Self::Idle];

    pub fn label(self) -> &'static str {
        match self {
            Self::Attention => "attention",
            Self::Tenant => "tenant",
            Self::Progress => "progress",
            Self::Idle => "idle",
        }
    }
}

/// The text filter being typed (while open) and applied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub text: String,
    pub editing: bool,
}

impl Filter {
    /// Case-insensitive substring match on tenant, space id, worker and error code.
    pub fn matches(&self, row: &BoardRow) -> bool {
        if self.text.is_empty() {
            return true;
        }
        let needle = self.text.to_lowercase();
        let b = &row.bootstrap;
        b.tenant_id.to_lowercase().contains(&needle)
            || b.knowledge_space_id.to_string().contains(&needle)
            || b.id.to_string().contains(&needle)
            || b.worker
                .as_ref()
                .is_some_and(|w| w.worker_id.to_lowercase().contains(&needle))
            || b.last_error_code
                .as_ref()
                .is_some_and(|c| c.to_lowercase().contains(&needle))
    }
}

/// A status-line message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub error: bool,
    pub at: Instant,
}

/// Which input of a dialog has the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Reason,
    Confirm,
}

/// Where a dialog is in its life.
#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// Waiting for the plans.
    Planning,
    /// Plans shown; the operator types the reason (and the confirmation).
    Editing,
    /// Plans could not be made (database error).
    Broken(String),
    Applying,
    /// One line per action: (applied, sentence).
    Done(Vec<(bool, String)>),
}

/// The action dialog: the plan, the reason, the confirmation, then the results.
#[derive(Debug, Clone, PartialEq)]
pub struct Dialog {
    /// Matches results to the dialog that asked for them.
    pub id: u64,
    pub title: String,
    pub actions: Vec<Action>,
    pub plans: Vec<Plan>,
    pub stage: Stage,
    pub reason: String,
    pub confirm: String,
    pub field: Field,
    /// What must be typed to confirm: the lease id's first 8 characters, or the bulk count.
    pub confirm_expected: Option<String>,
    pub confirm_prompt: String,
    /// Set when the request exceeds the bulk cap: the dialog only explains.
    pub blocked: Option<String>,
}

impl Dialog {
    pub fn is_bulk(&self) -> bool {
        self.actions.len() > 1
    }

    /// Actions whose plan says they would apply.
    pub fn applicable(&self) -> Vec<Action> {
        self.plans
            .iter()
            .filter(|p| p.verdict.is_ok())
            .map(|p| p.action.clone())
            .collect()
    }

    /// Why Enter would not apply yet; `None` when it would.
    pub fn not_ready(&self) -> Option<String> {
        if let Some(blocked) = &self.blocked {
            return Some(blocked.clone());
        }
        match &self.stage {
            Stage::Editing => {}
            Stage::Planning => return Some("waiting for the plan".into()),
            _ => return Some("nothing to apply".into()),
        }
        if self.applicable().is_empty() {
            return Some("nothing would apply".into());
        }
        if self.reason.trim().is_empty() {
            return Some("type a reason".into());
        }
        match &self.confirm_expected {
            Some(expected) if self.confirm.trim() != expected => {
                Some(format!("type {} to confirm", self.confirm_prompt))
            }
            _ => None,
        }
    }
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
    pub status: PollStatus,
    /// Local monotonic time of the last event, for "N s ago".
    pub now: Instant,
    pub filter: Filter,
    pub quick: Quick,
    pub sort: SortKey,
    pub sort_reverse: bool,
    /// Indices into the board's rows, filtered and sorted.
    pub visible: Vec<usize>,
    pub cursor: usize,
    pub offset: usize,
    /// Id of the bootstrap under the cursor, so it stays selected as rows move.
    pub selected: Option<Uuid>,
    pub list_cursor: usize,
    pub list_offset: usize,
    pub detail_scroll: u16,
    pub marked: BTreeSet<Uuid>,
    /// Rows whose state changed in a recent snapshot, and when.
    pub changed: HashMap<Uuid, Instant>,
    /// (run state, checkpoint, row version) per bootstrap in the previous snapshot.
    pub previous: HashMap<Uuid, (RunState, Checkpoint, i32)>,
    pub message: Option<Message>,
    pub size: (u16, u16),
    pub bulk_cap: usize,
    /// What the signals were assessed with (the views judge lease ages by the same).
    pub thresholds: Thresholds,
    pub next_dialog_id: u64,
    pub should_quit: bool,
}

impl App {
    pub fn new(header: Header, display: Display, interval: Duration, size: (u16, u16)) -> Self {
        Self {
            header,
            display,
            view: View::Board,
            overlay: Overlay::None,
            status: PollStatus {
                interval,
                ..PollStatus::default()
            },
            now: Instant::now(),
            filter: Filter::default(),
            quick: Quick::All,
            sort: SortKey::Attention,
            sort_reverse: false,
            visible: Vec::new(),
            cursor: 0,
            offset: 0,
            selected: None,
            list_cursor: 0,
            list_offset: 0,
            detail_scroll: 0,
            marked: BTreeSet::new(),
            changed: HashMap::new(),
            previous: HashMap::new(),
            message: None,
            size,
            bulk_cap: 100,
            thresholds: Thresholds::default(),
            next_dialog_id: 1,
            should_quit: false,
        }
    }

    pub fn board(&self) -> Option<&Board> {
        self.status.snapshot.as_ref().map(|s| &s.board)
    }

    pub fn extra(&self) -> Option<&Extra> {
        self.status.snapshot.as_ref().map(|s| &s.extra)
    }

    /// The visible rows, in order.
    pub fn visible_rows(&self) -> impl Iterator<Item = &BoardRow> {
        let rows = self.board().map(|b| b.rows.as_slice()).unwrap_or(&[]);
        self.visible.iter().filter_map(move |i| rows.get(*i))
    }

    /// The bootstrap id of the visible row at `position`.
    pub fn id_at(&self, position: usize) -> Option<Uuid> {
        self.visible_rows().nth(position).map(|r| r.bootstrap.id)
    }

    pub fn selected_row(&self) -> Option<&BoardRow> {
        let board = self.board()?;
        let id = self.selected?;
        board.rows.iter().find(|r| r.bootstrap.id == id)
    }

    pub fn too_small(&self) -> bool {
        self.size.0 < MIN_WIDTH || self.size.1 < MIN_HEIGHT
    }

    /// Whether a row changed recently enough to be highlighted.
    pub fn recently_changed(&self, id: &Uuid) -> bool {
        self.changed
            .get(id)
            .is_some_and(|at| self.now.saturating_duration_since(*at) < CHANGE_HIGHLIGHT)
    }

    /// Seconds since the last good snapshot (local clock: this is about our own polling).
    pub fn snapshot_age(&self) -> Option<Duration> {
        self.status
            .received_at
            .map(|at| self.now.saturating_duration_since(at))
    }

    pub fn failing_for(&self) -> Option<Duration> {
        self.status
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
