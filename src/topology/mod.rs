//! The topology: which servers the console reads and writes, and whether it may act there.
//!
//! One task owns the connections of one database ([`start`]): the primary, the standby polls
//! read, the hosts `--database-url` lists, the failover search, the check of whether the
//! primary is one, and the promotion and split-brain guards. It publishes an immutable
//! [`Topology`] on a `watch` channel each time any of that changes; everything that runs SQL
//! takes a snapshot ([`TopologyHandle::now`]) and runs it on the [`Db`] the snapshot names,
//! through [`Db::begin`] — the one way a transaction opens. Nothing else changes connection
//! state: the poller and the actions only *report* what they saw ([`Report`]), and the task
//! decides. A console watching several databases runs one task per database.
//!
//! # Access
//!
//! What a role may do is judged once, at connect, column by column and per action
//! (see `store::capabilities`): an action short of a grant is refused with the grant named
//! (exit 8 on the command line) while the others stay allowed, and a session that may take
//! none is read-only and says why. A grant given or taken back later is seen after a restart.
//! When only the audit table is unreadable, the board still works and the detail says "audit
//! unavailable"; actions need to write and read their records, so the session is read-only.
//!
//! # Primary and standby
//!
//! Actions and their plans always go to `--database-url`, the primary; with `--read-url`
//! (a hot standby) polls and reports read the standby. Several hosts may be listed, as libpq
//! takes them; each is connected to on its own (its own name for TLS, the URL's `sslmode`),
//! and the one where `pg_is_in_recovery()` is false is used. Of a `--read-url` list the first
//! standby is read, chosen at start; a `--read-url` that is a primary is accepted with a
//! warning. A `--database-url` that is a standby makes the session read-only until it (or
//! another listed host) is a primary; the console asks again after polls, at most every 3 s,
//! while a promotion is awaited or polls look wrong. When the primary stops answering for two
//! polls in a row, or is found in recovery, the task searches the listed hosts again every
//! few seconds — the one in use first, so an old primary restarted without fencing never draws
//! the console back — and actions move to a promoted standby once one answers as a primary.
//! If the standby being polled is promoted while actions still go to another server, the
//! session is read-only ([`Topology::access`]): acting then could write to a dead timeline.
//! Polls fall back to the primary while the standby does not answer and go back once it has
//! replayed what the primary had written.
//!
//! # No split brain
//!
//! Before a request is planned and again before it writes, every listed host is asked what it
//! is ([`TopologyHandle::check_lineage`]): two primaries, hosts of different clusters, or a
//! primary on a lower timeline than one written to before refuse the request ([`lineage`]);
//! each write transaction checks again that it landed on the cluster and timeline approved.

mod access;
pub mod lineage;
mod task;
mod written;

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

pub use access::Access;
pub use lineage::{Approval, Doubt, Lineage};

use crate::store::connect::{ConnectError, Target};
use crate::store::{Capabilities, Db, StoreError, Wanted};

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Connect(#[from] ConnectError),
    #[error(
        "the database at {target} has no bootstrap ledger (missing {}): is platform migration \
         0009 applied, and is this the right database?",
        missing.join(", ")
    )]
    MissingLedger {
        target: String,
        missing: Vec<&'static str>,
    },
    #[error("role {role} lacks {}: ask for the grant, or connect as a role that has it", missing.join(", "))]
    MissingPrivilege { role: String, missing: Vec<String> },
    /// `--primary` names no listed host, or several.
    #[error("{0}")]
    PrimaryNotListed(String),
    /// A blank tenant is never read as "every tenant": a script with an unset variable must
    /// not act fleet-wide.
    #[error("an empty tenant is not a scope: name the tenant, or leave --tenant out for all")]
    EmptyTenant,
}

/// Where reads and writes go now, and whether actions are allowed. Immutable: a change is a
/// new snapshot, so one read or one action sees one consistent topology from start to end.
#[derive(Clone)]
pub struct Topology {
    primary: Db,
    reader: Option<Reader>,
    capabilities: Arc<Capabilities>,
    /// Whether actions are allowed now (the split-brain guard included).
    access: Access,
    /// The primary did not answer when last asked while polls read a standby.
    primary_silent: bool,
    /// What the split-brain guard found when it last looked on its own (see
    /// [`lineage`]): several primaries, say. Reads go on; actions are refused.
    doubt: Option<Doubt>,
}

/// The standby polls read (`--read-url`), as last judged.
#[derive(Clone)]
pub(crate) struct Reader {
    db: Db,
    /// It stopped answering: polls read the primary until it answers again.
    down: bool,
    /// A standby at start, found a primary since: promoted.
    promoted: bool,
}

impl Topology {
    /// The server every plan and action goes to (the primary).
    pub fn primary(&self) -> &Db {
        &self.primary
    }

    /// The server polls and reports read: the `--read-url` standby while it answers, else the
    /// primary.
    pub fn reads(&self) -> &Db {
        match &self.reader {
            Some(reader) if !reader.down => &reader.db,
            _ => &self.primary,
        }
    }

    /// The `--read-url` standby, whatever polls read now (a replay is awaited there).
    pub(crate) fn standby(&self) -> Option<&Db> {
        self.reader.as_ref().map(|r| &r.db)
    }

    /// Whether actions are allowed now, and if not, why.
    pub fn access(&self) -> &Access {
        &self.access
    }

    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// Actions are refused only because the database lacks what `migrate` installs.
    pub(crate) fn needs_migrate(&self) -> bool {
        access::needs_migrate(&self.access, &self.capabilities)
    }

    /// Why this console may not act, or which actions it may not take and why, in one
    /// sentence.
    pub(crate) fn write_limits(&self) -> Option<String> {
        access::write_limits(&self.access, &self.capabilities)
    }

    /// What the operator should know of whom and what the console is connected to, said at
    /// connect: [`Self::login_warning`], [`Self::doubt_warning`], then
    /// [`Self::reader_warning`].
    pub(crate) fn warnings(&self) -> Vec<String> {
        [
            self.login_warning(),
            self.doubt_warning(),
            self.reader_warning(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// The split-brain guard's doubt, as what reads are worth meanwhile: they come from the
    /// primary in use, which may be the old one. Not said where the session's access says it
    /// already (read-only, the doubt its reason).
    pub(crate) fn doubt_warning(&self) -> Option<String> {
        if matches!(self.access, Access::InDoubt { .. }) {
            return None;
        }
        self.doubt.as_ref().map(|doubt| {
            format!(
                "reading {} while the primary is in doubt — {}",
                self.primary.host().address(),
                doubt.evidence()
            )
        })
    }

    /// What is wrong with the read target, as one sentence: it does not answer, or it is a
    /// primary, not a standby.
    pub(crate) fn reader_warning(&self) -> Option<String> {
        let reader = self.reader.as_ref()?;
        if reader.down {
            return Some(format!(
                "the standby named by --read-url ({}) does not answer: polls read the primary \
                 until it does",
                reader.db.host()
            ));
        }
        (!reader.db.is_standby()).then(|| {
            format!(
                "polls read a primary, not a standby: --read-url names {}",
                reader.db.host()
            )
        })
    }

    /// What is wrong with whom the console is on the primary, as one sentence: the server
    /// says the session belongs to another role than the one it logged in as (a pooler entry
    /// that forces a user). Grants, and so what the console offers to do, are that role's.
    pub(crate) fn login_warning(&self) -> Option<String> {
        let asked = self.primary.host().user();
        let is = &self.capabilities.session_user;
        (is != asked).then(|| {
            format!(
                "logged in as {} but the database says this session is {} (a pooler entry \
                 forcing the user?): actions are offered as {} may take them",
                crate::text::clean(asked, 64),
                crate::text::clean(is, 64),
                crate::text::clean(is, 64)
            )
        })
    }

    /// Whether polls read a server of their own (`--read-url`).
    pub(crate) fn has_reader(&self) -> bool {
        self.reader.is_some()
    }

    /// Whether the standby stopped answering, so that polls read the primary.
    pub(crate) fn reader_is_down(&self) -> bool {
        self.reader.as_ref().is_some_and(|r| r.down)
    }

    /// Whether the standby polls read was found promoted since the console started.
    pub(crate) fn reader_promoted(&self) -> bool {
        self.reader.as_ref().is_some_and(|r| r.promoted)
    }

    /// Whether polls read a standby whose primary is asked for its WAL position.
    pub(crate) fn reads_standby_of_primary(&self) -> bool {
        self.reader.as_ref().is_some_and(|r| !r.down)
    }

    /// Whether the primary did not answer when last asked (polls of a standby go on).
    pub(crate) fn primary_silent(&self) -> bool {
        self.primary_silent
    }
}

/// What the poller and the actions saw, for the task to judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Report {
    /// A poll ended. `read_standby`: it read the `--read-url` standby (not the primary in its
    /// place). `replication`: the server it read answered as a standby. `primary_answered`:
    /// whether the primary gave its WAL position (`None`: it was not asked).
    Polled {
        failed: bool,
        read_standby: bool,
        replication: bool,
        primary_answered: Option<bool>,
    },
    /// An action found the primary in recovery (SQLSTATE 25006).
    InRecovery,
}

/// The live end of one database's topology: snapshots out, reports in. Cheap to clone; the
/// task ends when the last handle is dropped.
#[derive(Clone)]
pub struct TopologyHandle {
    snapshots: watch::Receiver<Arc<Topology>>,
    reports: mpsc::UnboundedSender<task::Message>,
    guard: LineageGuard,
}

/// Whom the split-brain guard asks ([`lineage`]): every host the URL lists, also when
/// `--primary` pins the connection to one of them; and whether `--primary` overrides it.
#[derive(Clone)]
pub(crate) struct LineageGuard {
    surveyed: Target,
    forced: bool,
    /// The last verdict, for plans made again and again (see [`TopologyHandle::check_lineage`]).
    last: Arc<std::sync::Mutex<Option<KeptVerdict>>>,
}

impl LineageGuard {
    /// What every listed host says of itself (see [`crate::store::primaries::survey`]).
    async fn ask(
        &self,
        primary: &Db,
    ) -> Result<Vec<crate::store::primaries::HostAnswer>, StoreError> {
        crate::store::primaries::survey(&self.surveyed, primary).await
    }

    /// The verdict on `answers`, kept for plans made again soon on the same primary.
    fn judge(
        &self,
        primary: &Db,
        answers: &[crate::store::primaries::HostAnswer],
    ) -> Result<Approval, Doubt> {
        let verdict = lineage::judge(answers, written::highest, self.forced);
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(KeptVerdict {
            at: std::time::Instant::now(),
            host: primary.host().address(),
            verdict: verdict.clone(),
        });
        verdict
    }

    /// A verdict on `primary` from the last 30 s.
    fn kept(&self, primary: &Db) -> Option<Result<Approval, Doubt>> {
        let host = primary.host().address();
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .filter(|kept| kept.host == host && kept.at.elapsed() < CHECK_KEPT)
            .map(|kept| kept.verdict.clone())
    }

    /// Whether the live console looks on its own, now and then: several hosts are listed (a
    /// single host has no second primary to find; its timeline is checked before writing),
    /// and `--primary` does not override the guard anyway.
    fn watches(&self) -> bool {
        self.surveyed.has_alternates() && !self.forced
    }

    /// The guard's doubt about `primary` now, if any; `Err` when the primary could not be
    /// asked (nothing learned).
    async fn doubt(&self, primary: &Db) -> Result<Option<Doubt>, StoreError> {
        let answers = self.ask(primary).await?;
        Ok(self.judge(primary, &answers).err())
    }
}

/// How long a plan may reuse the split-brain guard's verdict on the same primary.
const CHECK_KEPT: std::time::Duration = std::time::Duration::from_secs(30);

struct KeptVerdict {
    at: std::time::Instant,
    host: String,
    verdict: Result<Approval, Doubt>,
}

impl TopologyHandle {
    /// The topology as of now.
    pub fn now(&self) -> Arc<Topology> {
        self.snapshots.borrow().clone()
    }

    /// The split-brain guard's verdict on the primary in use now ([`lineage`]): every listed
    /// host is asked, each within 3 s. An error is the primary's own failure to answer (a write
    /// would fail the same way); a host that does not answer is logged and named in a refusal.
    /// `fresh`: ask now (before writing); otherwise a verdict on the same primary from the last
    /// 30 s serves (a plan, which the live console makes again every few seconds).
    pub(crate) async fn check_lineage(
        &self,
        fresh: bool,
    ) -> Result<Result<Approval, Doubt>, StoreError> {
        let topology = self.now();
        if !fresh && let Some(verdict) = self.guard.kept(topology.primary()) {
            return Ok(verdict);
        }
        let answers = self.guard.ask(topology.primary()).await?;
        for answer in &answers {
            if let Err(why) = &answer.facts {
                tracing::warn!(
                    "{} did not say whether it is a primary: {}",
                    answer.host,
                    crate::text::clean(why, 300)
                );
            }
        }
        let verdict = self.guard.judge(topology.primary(), &answers);
        match &verdict {
            Err(doubt) => tracing::warn!("split-brain guard: {doubt}"),
            Ok(approval) if approval.forced => tracing::warn!(
                "--primary {}: writes are audited as forced{}",
                approval.host,
                approval
                    .forced_over
                    .as_ref()
                    .map(|doubt| format!(", past the split-brain guard's doubt: {doubt}"))
                    .unwrap_or_default()
            ),
            Ok(_) => {}
        }
        Ok(verdict)
    }

    /// Remembers that `lineage` is about to be written to (see [`written`]), off the async
    /// threads: the file is locked and synced.
    pub(crate) async fn note_written(&self, lineage: Lineage) {
        let _ = tokio::task::spawn_blocking(move || written::note(lineage)).await;
    }

    /// Tells the task what was seen.
    pub(crate) fn report(&self, report: Report) {
        let _ = self.reports.send(task::Message::Report(report));
    }

    /// Waits for the next change of the topology (never, once the task has ended).
    pub(crate) async fn changed(&mut self) -> Arc<Topology> {
        if self.snapshots.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
        self.snapshots.borrow_and_update().clone()
    }

    /// Connects `target` as where polls and reports read. A standby is what it is for; a
    /// primary is accepted with a warning ([`Topology::reader_warning`]). A database without
    /// the ledger is refused like any other; refused, the topology stays as it was.
    pub async fn add_reader(&mut self, target: &Target) -> Result<(), OpenError> {
        let opened = crate::store::connect(target, Wanted::Standby)
            .await
            .map_err(ConnectError::for_read_url)?;
        if let Some(refusal) = access::ledger_refusal(target, &opened.capabilities) {
            opened.db.close().await;
            return Err(refusal);
        }
        self.send_reader(opened.db, false).await;
        Ok(())
    }

    /// Takes `target` as where polls read although it does not answer now: polls read the
    /// primary until it answers and has caught up, asked again every few seconds, as for a
    /// standby lost later ([`Topology::reader_warning`] says so).
    pub async fn add_reader_not_answering(&mut self, target: &Target) {
        let db = crate::store::standby_not_answering(target, self.now().primary());
        self.send_reader(db, true).await;
    }

    async fn send_reader(&mut self, db: Db, down: bool) {
        let (added, done) = tokio::sync::oneshot::channel();
        let _ = self
            .reports
            .send(task::Message::AddReader(Box::new(db), down, added));
        let _ = done.await;
        self.snapshots.mark_unchanged();
    }

    /// Closes every server's sessions, so the server sees each end cleanly (no "connection to
    /// client lost" in its log). Bounded: a session stuck on a stalled server is abandoned.
    pub async fn close(&self) {
        let topology = self.now();
        if let Some(standby) = topology.standby() {
            standby.close().await;
        }
        topology.primary().close().await;
    }
}

/// Connects to the primary among the hosts `target` lists (or to the one `primary` names,
/// `--primary`), refuses a database without a ledger, and starts the task that owns the
/// connections from now on.
pub async fn start(
    target: &Target,
    read_only: bool,
    primary: Option<&str>,
) -> Result<TopologyHandle, OpenError> {
    let guard = LineageGuard {
        surveyed: target.clone(),
        forced: primary.is_some(),
        last: Arc::default(),
    };
    let target = &match primary {
        Some(named) => target.only(named).map_err(OpenError::PrimaryNotListed)?,
        None => target.clone(),
    };
    let mut opened = crate::store::connect(target, Wanted::Primary).await?;
    // Several listed hosts: whether more than one is a primary is said at connect, for reads
    // as much as for writes.
    let doubt = match guard.watches() {
        true => guard.doubt(&opened.db).await.ok().flatten(),
        false => None,
    };
    // A role name is text from the database like any other: it reaches the terminal in
    // sentences about grants.
    opened.capabilities.current_user = crate::text::clean(&opened.capabilities.current_user, 64);
    if let Some(refusal) = access::ledger_refusal(target, &opened.capabilities) {
        // Closed, not dropped: the server log stays free of lost connections.
        opened.db.close().await;
        return Err(refusal);
    }
    Ok(task::spawn(target.clone(), opened, read_only, guard, doubt))
}
