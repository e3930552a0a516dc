//! A session: the store, what the database offers, the tenant scope and the access mode.
//! Scope and read-only are enforced here, for the TUI and the CLI alike — not only in a UI.
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
//! polls in a row, or is found in recovery, the poller searches the listed hosts again every
//! few seconds — the one in use first, so an old primary restarted without fencing never draws
//! the console back — and actions move to a promoted standby once one answers as a primary.
//! If the standby being polled is promoted while actions still go to another server, the
//! session is read-only ([`Session::access`]): acting then could write to a dead timeline.
//! Polls fall back to the primary while the standby does not answer and go back once it has
//! replayed what the primary had written.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::actor::Actor;
use super::fleet::Fleet;
use super::ids::{IdArg, IdNames};
use super::leases::LeaseBoard;
use super::model::{AuditRecord, Bootstrap, Item, MutationLease, RowError};
use super::refusal::Refusal;
use super::scope::{ScopeMatch, near_names};
use super::signals::Thresholds;
use crate::store::conflict::{self, ConflictRetry, MaybeConflict};
use crate::store::connect::{ConnectError, Target};
use crate::store::read;
use crate::store::replica::{self, Lsn, Primary, Replication};
use crate::store::sync::{Changes, LedgerSync, SyncSettings};
use crate::store::{Capabilities, Store, StoreError};

/// How a session is opened.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Restrict everything shown and done to this tenant.
    pub tenant: Option<String>,
    /// Refuse every action, whatever the role may do.
    pub read_only: bool,
    /// What the actions judge by (a lease younger than the orphan threshold needs force).
    pub thresholds: Thresholds,
}

/// Whether this session may act, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    ReadWrite,
    ReadOnly { reason: String },
}

impl Access {
    pub fn read_only_reason(&self) -> Option<&str> {
        match self {
            Self::ReadWrite => None,
            Self::ReadOnly { reason } => Some(reason),
        }
    }

    pub(crate) fn is_read_only(&self) -> bool {
        matches!(self, Self::ReadOnly { .. })
    }
}

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
    /// A blank tenant is never read as "every tenant": a script with an unset variable must
    /// not act fleet-wide.
    #[error("an empty tenant is not a scope: name the tenant, or leave --tenant out for all")]
    EmptyTenant,
}

/// An open console session. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct Session {
    store: Store,
    capabilities: Capabilities,
    tenant: Option<String>,
    /// Shared by clones: it changes when a standby the console started on is promoted.
    access: Arc<RwLock<Access>>,
    /// Whether acting depends only on the database being a primary (not `--read-only`, and
    /// the role has the grants): a promotion allows actions, a demotion stops them.
    follows_recovery: bool,
    actor: Actor,
    thresholds: Thresholds,
    /// How ids in scope are shown, as last read (see [`IdNames`]); clones share it.
    names: Arc<RwLock<Arc<IdNames>>>,
    /// Where polls and reports read when it is not the primary (`--read-url`).
    reader: Option<Reader>,
    /// The primary's WAL position could not be read at the last try.
    primary_silent: Arc<AtomicBool>,
    /// Recent readings of the primary's WAL position and clock (see `primary_position`).
    samples: Arc<Mutex<Readings>>,
    /// How far the last poll's data was behind the standby's clock, in milliseconds.
    behind_ms: Arc<AtomicI64>,
    /// The requests this process applied lately, so a plan can tell its own earlier action
    /// from someone else's.
    applied: Arc<Mutex<VecDeque<Uuid>>>,
}

/// Readings of the primary's WAL position and clock, oldest first.
type Readings = VecDeque<(Lsn, DateTime<Utc>)>;

/// The database polls read from when that is not the one actions write to: a hot standby.
#[derive(Clone)]
struct Reader {
    store: Store,
    /// Whether it is in recovery (a standby) as found at connect; a primary is warned about.
    standby: bool,
    /// It stopped answering: polls read the primary until it answers again.
    down: Arc<AtomicBool>,
    /// A standby at start, found a primary since: promoted (see [`Session::split_brain_risk`]).
    promoted: Arc<AtomicBool>,
}

impl Session {
    /// Connects, finds the capabilities, and refuses to open on a database without a ledger.
    pub async fn open(target: &Target, options: SessionOptions) -> Result<Self, OpenError> {
        if options
            .tenant
            .as_deref()
            .is_some_and(|t| t.trim().is_empty())
        {
            return Err(OpenError::EmptyTenant);
        }
        let (store, mut capabilities) = Store::connect(target).await?;
        // A role name is text from the database like any other: it reaches the terminal in
        // sentences about grants.
        capabilities.current_user = super::text::clean(&capabilities.current_user, 64);
        let refusal = ledger_refusal(target, &capabilities);
        if let Some(refusal) = refusal {
            // Closed, not dropped: the server log stays free of lost connections.
            store.close().await;
            return Err(refusal);
        }
        let access = if options.read_only {
            Access::ReadOnly {
                reason: "started with --read-only".into(),
            }
        } else {
            match (access_on(&capabilities), store.passed_over()) {
                (Access::ReadOnly { reason }, Some(why)) if capabilities.in_recovery => {
                    Access::ReadOnly {
                        reason: format!("{reason}; no listed host answered as a primary: {why}"),
                    }
                }
                (access, _) => access,
            }
        };
        let follows_recovery =
            !options.read_only && access_on(&promoted(&capabilities)) == Access::ReadWrite;
        Ok(Self {
            store,
            capabilities,
            tenant: options.tenant,
            access: Arc::new(RwLock::new(access)),
            follows_recovery,
            actor: Actor::from_environment(),
            thresholds: options.thresholds,
            names: Arc::default(),
            reader: None,
            primary_silent: Arc::default(),
            samples: Arc::default(),
            behind_ms: Arc::default(),
            applied: Arc::default(),
        })
    }

    /// The database every plan and action goes to (the primary).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The database polls and reports read: the standby named by `--read-url`, else the same
    /// as [`Self::store`].
    pub(crate) fn reader(&self) -> &Store {
        match &self.reader {
            Some(reader) if !reader.down.load(Ordering::Relaxed) => &reader.store,
            _ => &self.store,
        }
    }

    /// The pool reads go to when it is a standby's (where recovery conflicts happen): the
    /// `--read-url` standby while it answers, or a `--database-url` that is one.
    fn standby_pool(&self) -> Option<sqlx::PgPool> {
        match &self.reader {
            Some(reader) if !reader.down.load(Ordering::Relaxed) => {
                reader.standby.then(|| reader.store.pool())
            }
            _ => self.capabilities.in_recovery.then(|| self.store.pool()),
        }
    }

    /// `read` of where polls read, read again while recovery conflicts cancel it (see
    /// [`crate::store::conflict`]).
    pub(crate) async fn retried<T, E, Fut>(
        &self,
        what: &str,
        read: impl FnMut() -> Fut,
    ) -> Result<T, E>
    where
        E: MaybeConflict,
        Fut: std::future::Future<Output = Result<T, E>>,
    {
        let standby = self.standby_pool();
        conflict::retried(what, standby.as_ref(), read).await
    }

    /// Whether the standby stopped answering, so that polls read the primary.
    pub(crate) fn reader_is_down(&self) -> bool {
        self.reader
            .as_ref()
            .is_some_and(|r| r.down.load(Ordering::Relaxed))
    }

    /// Polls read the primary while the standby is `down`, the standby again once it is not.
    pub(crate) fn set_reader_down(&self, down: bool) {
        if let Some(reader) = &self.reader {
            reader.down.store(down, Ordering::Relaxed);
        }
    }

    /// Whether the standby answers now (within 2 s), whatever polls read meanwhile.
    pub(crate) async fn reader_answers(&self) -> bool {
        let Some(reader) = &self.reader else {
            return false;
        };
        let pool = reader.store.pool();
        let asked = sqlx::query("SELECT 1").execute(&pool);
        matches!(
            tokio::time::timeout(std::time::Duration::from_secs(2), asked).await,
            Ok(Ok(_))
        )
    }

    /// How far the standby has replayed, asked of it whatever polls read now (`None` when it
    /// does not answer within 2 s, or there is none).
    pub(crate) async fn standby_replayed(&self) -> Option<Lsn> {
        let reader = self.reader.as_ref()?;
        let pool = reader.store.pool();
        let asked = replica::replay_position(&pool);
        match tokio::time::timeout(std::time::Duration::from_secs(2), asked).await {
            Ok(Ok(replayed)) => replayed,
            _ => None,
        }
    }

    /// Whether the primary did not answer when its WAL position was last asked for (a
    /// failover, perhaps).
    pub(crate) fn primary_silent(&self) -> bool {
        self.primary_silent.load(Ordering::Relaxed)
    }

    /// After a failover, the primary among the hosts `--database-url` lists: plans and actions
    /// go there from now on. `Some` names it when it moved.
    pub(crate) async fn find_primary(&self) -> Option<Target> {
        let moved = self.store.find_primary().await;
        if let Some(host) = &moved {
            self.primary_silent.store(false, Ordering::Relaxed);
            tracing::warn!("primary moved to {host}: plans and actions go there now");
        }
        moved
    }

    /// Whether polls read a database of their own (`--read-url`).
    pub(crate) fn has_reader(&self) -> bool {
        self.reader.is_some()
    }

    /// Connects `target` as where polls and reports read. A standby is what it is for; a
    /// primary is accepted with a warning (after a promotion the standby may be one), said by
    /// [`Self::reader_warning`]. A database without the ledger is refused like any other.
    /// Refused, the session stays as it was (reading the primary).
    pub async fn add_reader(&mut self, target: &Target) -> Result<(), OpenError> {
        self.reader = Some(Self::open_reader(target).await?);
        Ok(())
    }

    async fn open_reader(target: &Target) -> Result<Reader, OpenError> {
        let (store, capabilities) = Store::connect_reader(target)
            .await
            .map_err(ConnectError::for_read_url)?;
        let refusal = ledger_refusal(target, &capabilities);
        if let Some(refusal) = refusal {
            store.close().await;
            return Err(refusal);
        }
        Ok(Reader {
            store,
            standby: capabilities.in_recovery,
            down: Arc::default(),
            promoted: Arc::default(),
        })
    }

    /// Why this console may not act, or which actions it may not take and why, in one
    /// sentence (said at connect, not first when a key is refused).
    pub(crate) fn write_limits(&self) -> Option<String> {
        if let Some(reason) = self.access().read_only_reason() {
            return Some(format!("read-only: {reason}"));
        }
        // Actions lacking the same grants are named together.
        let mut groups: Vec<(Vec<&'static str>, String)> = Vec::new();
        for (writes, reason) in self.capabilities().blocked_writes() {
            match groups.iter_mut().find(|(_, r)| *r == reason) {
                Some((actions, _)) => actions.push(writes.actions()),
                None => groups.push((vec![writes.actions()], reason)),
            }
        }
        let said: Vec<String> = groups
            .into_iter()
            .map(|(actions, reason)| {
                format!(
                    "{} not possible: {}",
                    actions.join(" and "),
                    super::text::clean(&reason, 300)
                )
            })
            .collect();
        (!said.is_empty()).then(|| said.join("; "))
    }

    /// What is wrong with the read target, as one sentence: it is a primary, not a standby.
    pub(crate) fn reader_warning(&self) -> Option<String> {
        let reader = self.reader.as_ref()?;
        (!reader.standby).then(|| {
            format!(
                "polls read a primary, not a standby: --read-url names {}",
                reader.store.target()
            )
        })
    }

    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// Whether actions are allowed now, and if not, why.
    pub fn access(&self) -> Access {
        let access = self.stored_access();
        match self.split_brain_risk() {
            Some(reason) if !access.is_read_only() => Access::ReadOnly { reason },
            _ => access,
        }
    }

    /// The access as found at start and on promotions and demotions since.
    fn stored_access(&self) -> Access {
        match self.access.read() {
            Ok(access) => access.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Why acting now could write to a dead timeline: the standby polls read was promoted, but
    /// actions still go to another server — an old primary that may be back without fencing,
    /// whose writes the new primary will never see.
    fn split_brain_risk(&self) -> Option<String> {
        let reader = self.reader.as_ref()?;
        if !reader.promoted.load(Ordering::Relaxed) {
            return None;
        }
        let (acting, promoted) = (self.store.target(), reader.store.target());
        // The point first: at 80 columns the rest is cut (the log has the hosts).
        (acting.to_string() != promoted.to_string()).then(|| {
            format!(
                "old primary? the polled standby was promoted; nothing is applied to \
                 {acting} (list {promoted} in --database-url, or restart against it)"
            )
        })
    }

    /// Whether the standby polls read was found promoted since the console started.
    pub(crate) fn reader_promoted(&self) -> bool {
        self.reader
            .as_ref()
            .is_some_and(|r| r.promoted.load(Ordering::Relaxed))
    }

    /// What a poll of the standby found: whether it is a primary now. `true` when that
    /// changed (it is said, and logged).
    pub(crate) fn note_reader_role(&self, primary_now: bool) -> bool {
        let Some(reader) = self.reader.as_ref().filter(|r| r.standby) else {
            return false;
        };
        let changed = reader.promoted.swap(primary_now, Ordering::Relaxed) != primary_now;
        if changed && primary_now {
            tracing::warn!(
                "the standby {} answers as a primary now (promoted)",
                reader.store.target()
            );
        }
        changed
    }

    /// Whether the console is read-only only because its database is a standby, which a
    /// promotion (or a failover to a listed host) would lift: see [`Self::recheck_access`].
    pub(crate) fn awaits_promotion(&self) -> bool {
        // The stored access, not the split-brain overlay: a promotion cannot lift that one.
        self.follows_recovery && self.stored_access().is_read_only()
    }

    /// Whether acting depends only on the database being a primary: worth re-checking when
    /// the primary looks demoted, or while a promotion is awaited.
    pub(crate) fn follows_recovery(&self) -> bool {
        self.follows_recovery
    }

    /// After a promotion, a failover or a demotion: whether the database actions go to is a
    /// primary now, and so whether actions are allowed (`true` when that just changed). The
    /// grants were read at start; a standby has its primary's catalog.
    pub(crate) async fn recheck_access(&self) -> bool {
        if !self.follows_recovery {
            return false;
        }
        let pool = self.store.pool();
        let asked = sqlx::query_scalar::<_, bool>("SELECT pg_is_in_recovery()").fetch_one(&pool);
        match tokio::time::timeout(std::time::Duration::from_secs(2), asked).await {
            Ok(Ok(in_recovery)) => self.set_access(if in_recovery {
                standby_access()
            } else {
                Access::ReadWrite
            }),
            // No answer: nothing learned (a silent primary is the failover search's business).
            _ => false,
        }
    }

    /// An action found the database in recovery (SQLSTATE 25006): read-only from now on,
    /// until a promotion.
    pub(crate) fn became_standby(&self) {
        if self.follows_recovery {
            self.set_access(standby_access());
        }
    }

    /// `true` when that changed the access.
    fn set_access(&self, access: Access) -> bool {
        let mut current = match self.access.write() {
            Ok(current) => current,
            Err(poisoned) => poisoned.into_inner(),
        };
        // Read-only for another reason still: the first reason stays.
        if current.is_read_only() == access.is_read_only() {
            return false;
        }
        tracing::warn!(
            "{}: {}",
            self.store.target(),
            access
                .read_only_reason()
                .map_or("a primary now, actions are allowed".to_string(), |r| {
                    format!("read-only now, {r}")
                })
        );
        *current = access;
        true
    }

    pub(crate) fn tenant_scope(&self) -> Option<&str> {
        self.tenant.as_deref()
    }

    pub fn actor(&self) -> &Actor {
        &self.actor
    }

    pub(crate) fn thresholds(&self) -> &Thresholds {
        &self.thresholds
    }

    /// How ids in scope are shown, as last read or set: sentences about ids use it.
    pub fn names(&self) -> Arc<IdNames> {
        self.names
            .read()
            .map_or_else(|e| e.into_inner().clone(), |n| n.clone())
    }

    /// Takes `names` as how ids in scope are shown (the console's model builds them).
    pub(crate) fn set_names(&self, names: Arc<IdNames>) {
        match self.names.write() {
            Ok(mut current) => *current = names,
            Err(poisoned) => *poisoned.into_inner() = names,
        }
    }

    /// Reads every id in scope (bootstraps, their spaces, leases) and shows ids by them from
    /// now on: one index-only pass, for commands that print ids.
    pub async fn read_names(&self) -> Result<Arc<IdNames>, StoreError> {
        let pool = self.reader().pool();
        let ids = self
            .retried("the ids in scope", || {
                read::ids_in_scope(&pool, self.tenant_scope())
            })
            .await?;
        let names = Arc::new(IdNames::new(ids));
        self.set_names(names.clone());
        Ok(names)
    }

    /// Shows `ids` (the ones a command is about to print) by forms no other id in scope shares,
    /// reading as little as that takes: their neighbours in the primary keys — unless a tenant
    /// scope is small enough to read whole through its index, or some id needs a suffix,
    /// which only the whole scope can tell apart.
    pub(crate) async fn read_names_around(&self, ids: &[Uuid]) -> Result<Arc<IdNames>, StoreError> {
        if self.tenant_scope().is_some() {
            return self.read_names().await;
        }
        let pool = self.reader().pool();
        let neighbours = self
            .retried("the ids' neighbours", || read::neighbour_ids(&pool, ids))
            .await?;
        let names = IdNames::new(ids.iter().copied().chain(neighbours));
        if ids
            .iter()
            .any(|id| names.short(id).starts_with(super::ids::SUFFIX_MARK))
        {
            return self.read_names().await;
        }
        let names = Arc::new(names);
        self.set_names(names.clone());
        Ok(names)
    }

    /// Notes that `request` was applied by this process.
    pub(crate) fn remember_applied(&self, request: Uuid) {
        const KEPT: usize = 256;
        let mut applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
        applied.push_back(request);
        while applied.len() > KEPT {
            applied.pop_front();
        }
    }

    /// Whether `request` was applied by this process.
    pub(crate) fn applied_here(&self, request: &Uuid) -> bool {
        let applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
        applied.contains(request)
    }

    /// A row of `tenant` may be acted on only inside the scope.
    pub(crate) fn check_scope(&self, tenant: &str, space: Uuid) -> Result<(), Refusal> {
        match &self.tenant {
            Some(scope) if scope != tenant => Err(Refusal::OutsideScope {
                space: self.names().shown(&space),
                tenant: tenant.to_string(),
                scope: scope.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// The instant reads are judged at: the database clock, or on a standby the instant its
    /// data is as of (see [`LedgerSync::poll`]).
    pub async fn database_now(&self) -> Result<DateTime<Utc>, StoreError> {
        Ok(self.read_clock().await?.0)
    }

    /// [`Self::database_now`] with the standby's replication state (`None` on a primary).
    pub(crate) async fn read_clock(
        &self,
    ) -> Result<(DateTime<Utc>, Option<Replication>), StoreError> {
        let primary = self.primary_view().await;
        let pool = self.reader().pool();
        let clock = self
            .retried("the clock", || async {
                let mut conn = pool.acquire().await?;
                crate::store::fleet::clock(&mut conn).await
            })
            .await?;
        let replication = clock.replication(&primary);
        let as_of = replication.and_then(|r| r.as_of()).unwrap_or(clock.now);
        Ok((as_of, replication))
    }

    /// What is known of the primary for a read of the standby: nothing to ask without one,
    /// else where its WAL ends now (and the readings before), or that it did not answer.
    async fn primary_view(&self) -> Primary {
        if self.reader.is_none() || self.reader_is_down() {
            return Primary::NotAsked;
        }
        match self.primary_position().await {
            Some(position) => Primary::At {
                position,
                samples: self.samples().iter().copied().collect(),
            },
            None => Primary::Silent,
        }
    }

    fn samples(&self) -> std::sync::MutexGuard<'_, Readings> {
        self.samples.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A sync that keeps a copy of this session's scope current (see [`crate::store::sync`]).
    pub fn ledger_sync(&self, settings: SyncSettings) -> LedgerSync {
        LedgerSync::new(self.tenant.clone(), settings)
    }

    /// One poll of `sync` where polls read. On a standby, the primary's WAL position is read
    /// first (see [`LedgerSync::poll`]), and a poll cancelled by a recovery conflict is tried
    /// again (see [`crate::store::conflict`]).
    pub async fn sync(
        &self,
        sync: &mut LedgerSync,
        period: std::time::Duration,
    ) -> Result<Changes, StoreError> {
        let reader = self.reader();
        let standby = self.standby_pool();
        let mut retry = ConflictRetry::new(standby.as_ref());
        loop {
            let primary = self.primary_view().await;
            let polled = sync
                .poll(&reader.pool(), reader.layout(), period, &primary)
                .await;
            if let Ok(changes) = &polled {
                // Views read outside the poll (detail, leases) are judged as of the same data.
                let behind = changes
                    .replication
                    .and_then(|r| r.delay())
                    .map_or(0, |d| d.num_milliseconds());
                self.behind_ms.store(behind, Ordering::Relaxed);
            }
            match polled {
                Err(e) if retry.again(&e, "a poll").await => {}
                polled => return polled,
            }
        }
    }

    /// Where the primary's WAL ends now; `None` when it does not answer within 2 s (the
    /// standby's lag is then unknown, which the header says). Each reading is kept a while:
    /// once the standby has replayed it, its data is known complete up to that instant.
    pub(crate) async fn primary_position(&self) -> Option<Lsn> {
        const KEPT: usize = 120;
        let pool = self.store.pool();
        let asked = replica::primary_position(&pool);
        let reading = match tokio::time::timeout(std::time::Duration::from_secs(2), asked).await {
            Ok(Ok(reading)) => Some(reading),
            Ok(Err(e)) => {
                tracing::debug!("the primary's WAL position: {e}");
                None
            }
            Err(_) => None,
        };
        self.primary_silent
            .store(reading.is_none(), Ordering::Relaxed);
        let (position, at) = reading?;
        let mut samples = self.samples();
        samples.push_back((position, at));
        while samples.len() > KEPT {
            samples.pop_front();
        }
        Some(position)
    }

    /// How far behind the standby's clock the last poll's data was: what views read beside the
    /// polls subtract from the standby's clock.
    fn behind(&self) -> chrono::Duration {
        if self.reader.is_none() || self.reader_is_down() {
            return chrono::Duration::zero();
        }
        chrono::Duration::milliseconds(self.behind_ms.load(Ordering::Relaxed))
    }

    /// The whole ledger in scope, loaded and judged once (for one-shot reports and tests).
    pub async fn load_fleet(&self, thresholds: Thresholds) -> Result<Fleet, StoreError> {
        let mut sync = self.ledger_sync(SyncSettings::default());
        let changes = self
            .sync(&mut sync, std::time::Duration::from_secs(1))
            .await?;
        let mut fleet = Fleet::new(thresholds);
        fleet.apply(changes);
        Ok(fleet)
    }

    /// One bootstrap in depth; `None` when it does not exist in scope.
    pub async fn detail(&self, bootstrap_id: Uuid) -> Result<Option<Detail>, DetailError> {
        let (pool, layout) = (self.reader().pool(), self.reader().layout());
        let rows = self
            .retried("the detail", || {
                read::detail(&pool, layout, bootstrap_id, self.tenant_scope())
            })
            .await?;
        let mut detail = rows.map(Detail::try_from).transpose()?;
        if let Some(detail) = &mut detail {
            // Read on a standby: judged as of its data, like the board.
            detail.db_now -= self.behind();
            if let Some(why) = self.capabilities.audit_unavailable() {
                detail.audit = Err(why);
            }
        }
        Ok(detail)
    }

    /// Every mutation lease in scope, judged against the session's thresholds.
    pub async fn leases(&self) -> Result<LeaseBoard, DetailError> {
        let (pool, layout) = (self.reader().pool(), self.reader().layout());
        let rows = self
            .retried("the leases", || {
                read::leases(&pool, layout, self.tenant_scope(), None)
            })
            .await?;
        let rows = read::LeaseRows {
            // Read on a standby: judged as of its data, like the board.
            db_now: rows.db_now - self.behind(),
            ..rows
        };
        Ok(LeaseBoard::assess(rows, &self.thresholds)?)
    }

    /// The most recent audit records in scope (empty when there is no audit table; an error
    /// naming the grant when the role may not read it).
    pub async fn recent_audit(&self, limit: i64) -> Result<Vec<AuditRecord>, StoreError> {
        if !self.capabilities.has_audit_table {
            return Ok(Vec::new());
        }
        if let Some(why) = self.capabilities.audit_unavailable() {
            return Err(StoreError::NotGranted(why));
        }
        let pool = self.reader().pool();
        self.retried("the audit log", || {
            read::recent_audit(&pool, self.tenant_scope(), limit)
        })
        .await
    }

    /// The bootstrap named by `id`, which may be a bootstrap id or a space id. Rows of other
    /// tenants are returned too, so that an action on one is refused with a sentence naming the
    /// scope rather than a puzzling "not found"; the actions enforce the scope.
    pub async fn find_bootstrap(&self, id: Uuid) -> Result<Option<Bootstrap>, DetailError> {
        let row = read::bootstrap_by_id_or_space(&self.store.pool(), id).await?;
        row.map(Bootstrap::try_from)
            .transpose()
            .map_err(DetailError::from)
    }

    /// The one id of `table` in scope that `arg` names (a prefix through the primary key; a
    /// suffix by reading the id column): `Ok(None)` when none does; `Err` lists (some of) the
    /// ids it could mean when several do — never ids outside the scope.
    pub(crate) async fn id_named(
        &self,
        table: read::IdTable,
        arg: &IdArg,
    ) -> Result<Result<Option<Uuid>, Vec<Uuid>>, StoreError> {
        const SHOWN: i64 = 5;
        let pool = &self.store.pool();
        let found = match arg {
            IdArg::Whole(id) => return Ok(Ok(Some(*id))),
            IdArg::Prefix(prefix) => {
                let range = (prefix.first, prefix.last);
                read::ids_in_range(pool, table, range, self.tenant_scope(), SHOWN + 1).await?
            }
            IdArg::Suffix(digits) => {
                read::ids_with_suffix(pool, table, digits, self.tenant_scope(), SHOWN + 1).await?
            }
        };
        Ok(match found.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            _ => Err(found),
        })
    }

    /// What the tenant scope matches (`None` without a scope).
    pub(crate) async fn scope_match(&self) -> Result<Option<ScopeMatch>, StoreError> {
        let Some(tenant) = self.tenant_scope() else {
            return Ok(None);
        };
        let pool = &self.reader().pool();
        let presence = self
            .retried("the tenant", || read::tenant_presence(pool, tenant))
            .await?;
        Ok(Some(match presence {
            (true, _) => ScopeMatch::Bootstraps,
            (false, Some(true)) => ScopeMatch::NoBootstraps,
            (false, spaces) => ScopeMatch::NoSuchTenant {
                near: near_names(
                    tenant,
                    &self
                        .retried("the tenants", || read::bootstrap_tenants(pool))
                        .await?,
                ),
                spaces_known: spaces.is_some(),
            },
        }))
    }

    /// Closes the pool, so the server sees every session end cleanly (no "connection to
    /// client lost" in its log). Bounded: a session stuck on a stalled server is abandoned.
    pub async fn close(&self) {
        if let Some(reader) = &self.reader {
            reader.store.close().await;
        }
        self.store.close().await;
    }

    /// The mutation lease with this id, whatever its tenant (the actions enforce the scope).
    pub(crate) async fn find_lease(&self, id: Uuid) -> Result<Option<MutationLease>, StoreError> {
        let row = read::lease(&self.store.pool(), self.store.layout(), id).await?;
        Ok(row.map(MutationLease::from))
    }
}

/// A detail view could not be built.
#[derive(Debug, thiserror::Error)]
pub enum DetailError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Row(#[from] RowError),
}

/// One bootstrap in depth (the detail view and `status` of one space).
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    pub db_now: DateTime<Utc>,
    pub bootstrap: Bootstrap,
    pub lease: Option<MutationLease>,
    /// (status, count), in lifecycle order, only statuses that have items.
    pub item_counts: Vec<(super::model::ItemStatus, i64)>,
    pub failed_items: Vec<Item>,
    pub running_item: Option<Item>,
    /// The space's recent operator actions, or why they cannot be shown (no audit table, or
    /// a role that may not read it).
    pub audit: Result<Vec<AuditRecord>, String>,
}

impl Detail {
    pub fn count(&self, status: super::model::ItemStatus) -> i64 {
        self.item_counts
            .iter()
            .find(|(s, _)| *s == status)
            .map_or(0, |(_, n)| *n)
    }
}

impl TryFrom<read::DetailRows> for Detail {
    type Error = DetailError;

    fn try_from(rows: read::DetailRows) -> Result<Self, DetailError> {
        let bootstrap = Bootstrap::try_from(rows.bootstrap)?;
        let mut item_counts = Vec::new();
        for (status, n) in rows.item_counts {
            let parsed = super::model::ItemStatus::parse(&status).ok_or_else(|| RowError {
                table: "item",
                id: format!("{} (one of {n})", bootstrap.id),
                problem: format!("unknown status {:?}", super::text::clip(&status, 40)),
            })?;
            item_counts.push((parsed, n));
        }
        item_counts.sort();
        Ok(Self {
            db_now: rows.db_now,
            lease: rows.lease.map(MutationLease::from),
            item_counts,
            failed_items: rows
                .failed_items
                .into_iter()
                .map(Item::try_from)
                .collect::<Result<_, _>>()?,
            running_item: rows.running_item.map(Item::try_from).transpose()?,
            audit: Ok(rows.audit.unwrap_or_default()),
            bootstrap,
        })
    }
}

impl MaybeConflict for DetailError {
    fn is_recovery_conflict(&self) -> bool {
        matches!(self, Self::Store(e) if e.is_recovery_conflict())
    }

    fn is_session_ended(&self) -> bool {
        matches!(self, Self::Store(e) if e.is_session_ended())
    }
}

/// Why a console on a standby may not act.
fn standby_access() -> Access {
    Access::ReadOnly {
        reason: crate::store::capabilities::STANDBY.into(),
    }
}

/// What a role with `capabilities` may do.
fn access_on(capabilities: &Capabilities) -> Access {
    match capabilities.write_blocker() {
        Some(reason) => Access::ReadOnly { reason },
        None => Access::ReadWrite,
    }
}

/// The capabilities of the same database once it is promoted: its catalog, grants included,
/// is the one the standby had replayed.
fn promoted(capabilities: &Capabilities) -> Capabilities {
    Capabilities {
        in_recovery: false,
        ..capabilities.clone()
    }
}

/// Why a database cannot be watched: no ledger, or a role that may not read it.
fn ledger_refusal(target: &Target, capabilities: &Capabilities) -> Option<OpenError> {
    let tables = capabilities.missing_ledger_tables();
    if !tables.is_empty() {
        return Some(OpenError::MissingLedger {
            target: target.to_string(),
            missing: tables,
        });
    }
    let grants = capabilities.missing_read_grants();
    (!grants.is_empty()).then(|| OpenError::MissingPrivilege {
        role: super::text::clean(&capabilities.current_user, 64),
        missing: grants,
    })
}
