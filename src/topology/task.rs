//! The task that owns one database's connections: it takes what polls and actions saw, asks the
//! servers what it needs to (does the standby answer, has it caught up, which listed host is
//! the primary, is the primary one), and publishes a new [`Topology`] when anything changed.
//! It runs beside the poller: a failover search or a slow standby never holds a poll.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};

use super::access::{self, Access};
use super::{Reader, Report, Topology, TopologyHandle};
use crate::store::connect::Target;
use crate::store::db::read_tx;
use crate::store::replica::{self, Lsn};
use crate::store::{Capabilities, Db, Opened};

/// How often a standby that stopped answering is asked again.
const READER_RETRY: Duration = Duration::from_secs(15);
/// How often the listed hosts are searched for a new primary while the primary is silent, and
/// how often the console asks whether its primary is one while that is in doubt.
const PRIMARY_SEARCH: Duration = Duration::from_secs(3);
/// How often the split-brain guard looks on its own while the console runs.
const LINEAGE_EVERY: Duration = Duration::from_secs(15);
/// How long a server has to answer one of the task's questions.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

pub(super) enum Message {
    Report(Report),
    /// Polls read this server from now on (or, when it is down, once it answers and has
    /// caught up); answered once it is published.
    AddReader(Box<Db>, bool, oneshot::Sender<()>),
    /// What the split-brain guard's look on its own found on the primary `host` (`None`:
    /// the primary did not answer, nothing learned).
    Lineage {
        host: String,
        doubt: Option<Option<super::Doubt>>,
    },
}

struct Task {
    /// Every host `--database-url` lists (the one in use is `primary`).
    listed: Target,
    primary: Db,
    reader: Option<Reader>,
    capabilities: Arc<Capabilities>,
    /// The access as found at start and on promotions and demotions since (the split-brain
    /// guard is applied on top, in each snapshot).
    stored: Access,
    /// Whether acting depends only on the primary being one (see [`access::follows_recovery`]).
    follows_recovery: bool,
    primary_silent: bool,
    /// Whether the last good poll read a server in recovery.
    replication: bool,
    /// Polls in a row after which the primary looked gone.
    suspect_polls: u32,
    reader_probed: Option<Instant>,
    primary_searched: Option<Instant>,
    access_checked: Option<Instant>,
    /// The split-brain guard, which the task asks now and then on its own (see
    /// [`super::LineageGuard::watches`]), and what it last found.
    guard: super::LineageGuard,
    doubt: Option<super::Doubt>,
    lineage_checked: Option<Instant>,
    /// A look is under way (its answer comes back as a [`Message::Lineage`]).
    lineage_asked: bool,
    /// Where looks send their answers; weak, so the task still ends with its last handle.
    inbox: Option<mpsc::WeakUnboundedSender<Message>>,
    publisher: watch::Sender<Arc<Topology>>,
}

/// Starts the task for a primary just connected to.
pub(super) fn spawn(
    listed: Target,
    opened: Opened,
    read_only: bool,
    guard: super::LineageGuard,
    doubt: Option<super::Doubt>,
) -> TopologyHandle {
    let capabilities = opened.capabilities;
    let stored = access::at_start(read_only, &capabilities, opened.passed_over.as_deref());
    let follows_recovery = access::follows_recovery(read_only, &capabilities);
    if let Some(doubt) = &doubt {
        tracing::warn!("split-brain guard: {doubt}");
    }
    let (publisher, snapshots) = watch::channel(Arc::new(Topology {
        primary: opened.db.clone(),
        reader: None,
        capabilities: Arc::new(capabilities.clone()),
        access: access::effective(
            &stored,
            &opened.db,
            None,
            doubt.as_ref().map(ToString::to_string).as_deref(),
        ),
        primary_silent: false,
        doubt: doubt.clone(),
    }));
    let task = Task {
        listed,
        primary: opened.db,
        reader: None,
        capabilities: Arc::new(capabilities),
        stored,
        follows_recovery,
        primary_silent: false,
        replication: false,
        suspect_polls: 0,
        reader_probed: None,
        primary_searched: None,
        access_checked: None,
        guard: guard.clone(),
        doubt,
        lineage_checked: Some(Instant::now()),
        lineage_asked: false,
        inbox: None,
        publisher,
    };
    let (reports, inbox) = mpsc::unbounded_channel();
    let task = Task {
        inbox: Some(reports.downgrade()),
        ..task
    };
    tokio::spawn(task.run(inbox));
    TopologyHandle {
        snapshots,
        reports,
        guard,
    }
}

/// Whether `at` is unset or at least `every` ago.
fn due(at: Option<Instant>, every: Duration, now: Instant) -> bool {
    at.is_none_or(|at| now.duration_since(at) >= every)
}

impl Task {
    async fn run(mut self, mut inbox: mpsc::UnboundedReceiver<Message>) {
        while let Some(message) = inbox.recv().await {
            match message {
                Message::AddReader(db, down, added) => {
                    self.reader = Some(Reader {
                        db: *db,
                        down,
                        promoted: false,
                    });
                    self.publish();
                    let _ = added.send(());
                }
                Message::Lineage { host, doubt } => self.note_lineage(&host, doubt),
                Message::Report(Report::InRecovery) => {
                    if self.follows_recovery {
                        self.set_access(access::standby());
                    }
                }
                Message::Report(Report::Polled {
                    failed,
                    read_standby,
                    replication,
                    primary_answered,
                }) => {
                    if let Some(answered) = primary_answered {
                        self.note_primary_answered(answered);
                    }
                    // A standby that answers without replication state was promoted: the
                    // primary is looked for at once among the listed hosts.
                    let promoted = !failed && read_standby && self.note_reader_role(!replication);
                    if !failed {
                        self.replication = replication;
                    }
                    let moved = self.watch_over_servers(failed, promoted).await;
                    self.watch_over_lineage(moved);
                }
            }
            self.publish();
        }
    }

    /// The snapshot of what the task knows now.
    fn snapshot(&self) -> Topology {
        Topology {
            primary: self.primary.clone(),
            reader: self.reader.clone(),
            capabilities: self.capabilities.clone(),
            access: access::effective(
                &self.stored,
                &self.primary,
                self.reader.as_ref(),
                self.doubt.as_ref().map(ToString::to_string).as_deref(),
            ),
            primary_silent: self.primary_silent,
            doubt: self.doubt.clone(),
        }
    }

    /// Publishes the snapshot when it differs from the last one published.
    fn publish(&self) {
        let next = self.snapshot();
        self.publisher.send_if_modified(|current| {
            let same = current.primary.same_host(&next.primary)
                && current.access == next.access
                && current.doubt == next.doubt
                && current.primary_silent == next.primary_silent
                && match (&current.reader, &next.reader) {
                    (None, None) => true,
                    (Some(a), Some(b)) => {
                        a.db.same_host(&b.db) && a.down == b.down && a.promoted == b.promoted
                    }
                    _ => false,
                };
            if !same {
                *current = Arc::new(next);
            }
            !same
        });
    }

    fn note_primary_answered(&mut self, answered: bool) {
        if self.reader.is_some() && answered == self.primary_silent {
            if answered {
                tracing::info!("the primary answers again");
            } else {
                tracing::warn!("the primary does not answer: nothing can be planned or applied");
            }
        }
        self.primary_silent = !answered;
    }

    /// What a poll of the standby found: whether it is a primary now. `true` when it just
    /// became one (it is logged).
    fn note_reader_role(&mut self, primary_now: bool) -> bool {
        let Some(reader) = self
            .reader
            .as_mut()
            .filter(|r| r.db.is_standby() && !r.down)
        else {
            return false;
        };
        let changed = std::mem::replace(&mut reader.promoted, primary_now) != primary_now;
        if changed && primary_now {
            tracing::warn!(
                "the standby {} answers as a primary now (promoted)",
                reader.db.host()
            );
        }
        changed && primary_now
    }

    /// After each poll: a standby that stopped answering is left for the primary (and asked
    /// again now and then); a primary that went silent is looked for among the listed hosts
    /// (a failover); whether the console may act follows whether its primary is one.
    async fn watch_over_servers(&mut self, poll_failed: bool, reader_promoted: bool) -> bool {
        let now = Instant::now();
        self.watch_over_reader(poll_failed, now).await;
        let polls_read_primary = self.reader.as_ref().is_none_or(|r| r.down);
        // Without a standby of its own, polls reading one mean the primary became a standby.
        let primary_demoted = polls_read_primary && self.replication;
        let suspect = (self.reader.is_some() && self.primary_silent)
            || primary_demoted
            || (poll_failed && polls_read_primary);
        self.suspect_polls = if suspect { self.suspect_polls + 1 } else { 0 };
        // The standby promoted: a failover happened, no need to wait for a second poll.
        if reader_promoted {
            self.suspect_polls = self.suspect_polls.max(2);
            self.primary_searched = None;
        }
        let mut moved = false;
        // Two suspect polls in a row before a search: one slow answer is not a failover.
        if self.suspect_polls >= 2
            && self.listed.has_alternates()
            && due(self.primary_searched, PRIMARY_SEARCH, now)
        {
            self.primary_searched = Some(now);
            if let Some(found) = crate::store::find_primary(&self.listed, &self.primary).await {
                tracing::warn!(
                    "primary moved to {}: plans and actions go there now",
                    found.host()
                );
                let old = std::mem::replace(&mut self.primary, found);
                // The old primary's sessions go quietly (it may be gone already).
                tokio::spawn(async move { old.close().await });
                self.primary_silent = false;
                self.suspect_polls = 0;
                moved = true;
            }
        }
        // Asked after a move, and at most every 3 s while polls look suspect or a promotion
        // is awaited: it may act once a standby it started on is promoted (or a listed host
        // is found), and may not once its primary is demoted with none found.
        let awaits_promotion = self.stored.is_read_only();
        if self.follows_recovery
            && (moved
                || ((suspect || awaits_promotion) && due(self.access_checked, PRIMARY_SEARCH, now)))
        {
            self.access_checked = Some(now);
            match self.primary.in_recovery(ANSWER_WITHIN).await {
                Some(true) => self.set_access(access::standby()),
                Some(false) => self.set_access(Access::ReadWrite),
                // No answer: nothing learned (a silent primary is the failover search's).
                None => {}
            }
        }
        moved
    }

    /// Every 15 s, and at once after the primary moved: the split-brain guard's look at the
    /// listed hosts, so an old primary that comes back shows before any key is pressed (the
    /// header turns read-only, with the doubt as its reason). Each action still asks afresh.
    /// The look runs beside the task (up to 3 s when a host is silent): the failover search
    /// and a standby's return are never held up by it.
    fn watch_over_lineage(&mut self, moved: bool) {
        let now = Instant::now();
        if !self.guard.watches()
            || self.lineage_asked
            || !(moved || due(self.lineage_checked, LINEAGE_EVERY, now))
        {
            return;
        }
        let Some(inbox) = self.inbox.clone() else {
            return;
        };
        self.lineage_checked = Some(now);
        self.lineage_asked = true;
        let (guard, primary) = (self.guard.clone(), self.primary.clone());
        tokio::spawn(async move {
            let doubt = guard.doubt(&primary).await.ok();
            if let Some(inbox) = inbox.upgrade() {
                let host = primary.host().address();
                let _ = inbox.send(Message::Lineage { host, doubt });
            }
        });
    }

    /// What a look found, taken unless the primary moved meanwhile.
    fn note_lineage(&mut self, host: &str, doubt: Option<Option<super::Doubt>>) {
        self.lineage_asked = false;
        // About a primary no longer in use: looked at again at the next poll.
        if self.primary.host().address() != host {
            self.lineage_checked = None;
            return;
        }
        // A primary that does not answer teaches nothing: the last look stands.
        let Some(doubt) = doubt else {
            return;
        };
        // The same doubt, its WAL positions further on, is no news: kept as first said.
        if doubt.as_ref().map(super::Doubt::key) == self.doubt.as_ref().map(super::Doubt::key) {
            return;
        }
        match &doubt {
            Some(doubt) => tracing::warn!("split-brain guard: {doubt}"),
            None => tracing::info!("split-brain guard: one primary again"),
        }
        self.doubt = doubt;
    }

    /// A failed poll of a standby that no longer answers sends polls to the primary; a standby
    /// that answers again gets them back once it holds what the board already showed from the
    /// primary: never older data after newer.
    async fn watch_over_reader(&mut self, poll_failed: bool, now: Instant) {
        let Some(reader) = &self.reader else { return };
        // A failed poll of a standby that still answers (a timeout, a conflict) is not a
        // lost standby.
        if poll_failed && !reader.down && !reader.db.answers(ANSWER_WITHIN).await {
            self.reader_probed = Some(now);
            self.set_reader_down(true);
            tracing::warn!("the standby does not answer: polls read the primary until it does");
        } else if reader.down && due(self.reader_probed, READER_RETRY, now) {
            self.reader_probed = Some(now);
            let standby = reader.db.clone();
            let primary = self.primary_position().await;
            let replayed = replayed(&standby).await;
            if let (Some(primary), Some(replayed)) = (primary, replayed)
                && replayed >= primary
            {
                self.set_reader_down(false);
                tracing::info!("the standby answers again and has caught up: polls read it");
            }
        }
    }

    fn set_reader_down(&mut self, down: bool) {
        if let Some(reader) = &mut self.reader {
            reader.down = down;
        }
    }

    /// Where the primary's WAL ends now; `None` when it does not answer in time.
    async fn primary_position(&mut self) -> Option<Lsn> {
        let primary = &self.primary;
        let asked = async { read_tx!(primary, |c| replica::primary_position(c)) };
        let position = match tokio::time::timeout(ANSWER_WITHIN, asked).await {
            Ok(Ok((position, _))) => Some(position),
            _ => None,
        };
        self.note_primary_answered(position.is_some());
        position
    }

    /// Takes `access` as what the role may do on the primary now, logging a change. The first
    /// reason of a read-only session stays while it stays read-only.
    fn set_access(&mut self, access: Access) {
        if self.stored.is_read_only() == access.is_read_only() {
            return;
        }
        tracing::warn!(
            "{}: {}",
            self.primary.host(),
            access
                .read_only_reason()
                .map_or("a primary now, actions are allowed".to_string(), |r| {
                    format!("read-only now, {r}")
                })
        );
        self.stored = access;
    }
}

/// How far `standby` has replayed; `None` when it does not answer in time.
async fn replayed(standby: &Db) -> Option<Lsn> {
    let asked = async { read_tx!(standby, |c| replica::replay_position(c)) };
    match tokio::time::timeout(ANSWER_WITHIN, asked).await {
        Ok(Ok(replayed)) => replayed,
        _ => None,
    }
}
