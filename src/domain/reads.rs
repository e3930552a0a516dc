//! Every read the views and commands make, on one topology snapshot and within the session's
//! tenant scope: polls and reports read where polls read (a standby, with recovery conflicts
//! read again); the lookups an action plans on read the primary.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::detail::{Detail, DetailError};
use super::fleet::Fleet;
use super::ids::{IdArg, IdNames};
use super::leases::LeaseBoard;
use super::model::{AuditRecord, Bootstrap, MutationLease};
use super::scope::{ScopeMatch, near_names};
use super::session::Session;
use super::signals::Thresholds;
use crate::store::conflict::ConflictRetry;
use crate::store::db::{read_retried, read_tx};
use crate::store::read;
use crate::store::replica::{self, Lsn, Primary, ReplayMark, Replication};
use crate::store::sync::{Changes, LedgerSync, SyncSettings};
use crate::store::{StoreError, fleet};
use crate::topology::{Report, Topology};

/// How long the primary has to give its WAL position before a poll of its standby.
const PRIMARY_ANSWERS_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

impl Session {
    /// Reads in scope on the topology as of now. (Defined here, beside what it returns, so
    /// the session itself knows nothing of its readers.)
    pub fn reads(&self) -> Reads<'_> {
        Reads::new(self, self.topology())
    }
}

/// Reads for one session on one topology snapshot ([`Session::reads`]).
pub struct Reads<'a> {
    session: &'a Session,
    topology: Arc<Topology>,
    /// How far the data polls last read was behind its server's clock: views read beside the
    /// polls are judged as of the same data ([`LedgerSync::behind`]).
    behind: chrono::Duration,
}

impl<'a> Reads<'a> {
    fn new(session: &'a Session, topology: Arc<Topology>) -> Self {
        Self {
            session,
            topology,
            behind: chrono::Duration::zero(),
        }
    }

    /// Judges the views read as of `sync`'s last poll.
    pub fn as_of(self, sync: &LedgerSync) -> Self {
        Self {
            behind: sync.behind(),
            ..self
        }
    }

    fn scope(&self) -> Option<&'a str> {
        self.session.tenant_scope()
    }

    /// One poll of `sync` where polls read. On a standby, the primary's WAL position is read
    /// first (see [`LedgerSync::poll`]), and a poll cancelled by a recovery conflict is tried
    /// again (see [`crate::store::conflict`]). What the poll saw of the servers is reported to
    /// the topology.
    pub async fn sync(
        &self,
        sync: &mut LedgerSync,
        period: std::time::Duration,
    ) -> Result<Changes, StoreError> {
        let db = self.topology.reads();
        let mut retry = ConflictRetry::new(db);
        let mut primary_answered = None;
        let polled = loop {
            let primary = self.primary_view(sync).await;
            if self.topology.reads_standby_of_primary() {
                primary_answered = Some(primary != Primary::Silent);
            }
            match sync.poll(db, period, &primary).await {
                Err(e) if retry.again(&e, "a poll").await => {}
                polled => break polled,
            }
        };
        self.session.topology_handle().report(Report::Polled {
            failed: polled.is_err(),
            read_standby: self.topology.reads_standby_of_primary(),
            replication: polled.as_ref().is_ok_and(|c| c.replication.is_some()),
            primary_answered,
        });
        polled
    }

    /// Tells the topology that a poll got no answer in time: its future was dropped, so
    /// [`Self::sync`] could not say so itself, and a frozen server must be judged as one that
    /// refuses (a standby left for the primary, a silent primary looked for).
    pub(crate) fn poll_unanswered(&self) {
        self.session.topology_handle().report(Report::Polled {
            failed: true,
            read_standby: self.topology.reads_standby_of_primary(),
            replication: false,
            primary_answered: None,
        });
    }

    /// What is known of the primary for a poll of the standby: nothing to ask without one,
    /// else where its WAL ends now (and the readings before), or that it did not answer.
    async fn primary_view(&self, sync: &mut LedgerSync) -> Primary {
        match self.primary_reading().await {
            None => Primary::NotAsked,
            Some(reading) => sync.primary_read(reading),
        }
    }

    /// Where the primary's WAL ends now and its clock, for a read of the standby: `None` when
    /// reads go to the primary itself (nothing to ask), `Some(None)` when it did not answer.
    async fn primary_reading(&self) -> Option<Option<(Lsn, DateTime<Utc>)>> {
        if !self.topology.reads_standby_of_primary() {
            return None;
        }
        let primary = self.topology.primary();
        let asked = async { read_tx!(primary, |c| replica::primary_position(c)) };
        Some(
            match tokio::time::timeout(PRIMARY_ANSWERS_WITHIN, asked).await {
                Ok(Ok(reading)) => Some(reading),
                Ok(Err(e)) => {
                    tracing::debug!("the primary's WAL position: {e}");
                    None
                }
                Err(_) => None,
            },
        )
    }

    /// What polls of a standby wait for before they show an action that wrote `audit_ids`
    /// (read your own writes): `None` when polls read the primary, or it does not answer.
    pub(crate) async fn replay_mark(&self, audit_ids: Vec<i64>) -> Option<ReplayMark> {
        if audit_ids.is_empty() {
            return None;
        }
        let (position, _) = self.primary_reading().await??;
        Some(ReplayMark {
            audit_ids,
            position,
        })
    }

    /// The whole ledger in scope, loaded and judged once (for one-shot reports and tests).
    pub async fn load_fleet(&self, thresholds: Thresholds) -> Result<Fleet, StoreError> {
        let mut sync = self.session.ledger_sync(SyncSettings::default());
        let changes = self
            .sync(&mut sync, std::time::Duration::from_secs(1))
            .await?;
        let mut fleet = Fleet::new(thresholds);
        fleet.apply(changes);
        Ok(fleet)
    }

    /// The instant reads are judged at: the database clock, or on a standby the instant its
    /// data is as of (see [`LedgerSync::poll`]).
    pub async fn database_now(&self) -> Result<DateTime<Utc>, StoreError> {
        Ok(self.clock().await?.0)
    }

    /// [`Self::database_now`] with the standby's replication state (`None` on a primary).
    pub(crate) async fn clock(&self) -> Result<(DateTime<Utc>, Option<Replication>), StoreError> {
        let primary = match self.primary_reading().await {
            None => Primary::NotAsked,
            Some(reading) => Primary::once(reading),
        };
        let clock = read_retried!(self.topology.reads(), "the clock", |c| fleet::clock(c))?;
        let replication = clock.replication(&primary);
        let as_of = replication.and_then(|r| r.as_of()).unwrap_or(clock.now);
        Ok((as_of, replication))
    }

    /// The start of the error messages of these bootstraps (the board's rows on screen).
    pub async fn messages(&self, ids: &[Uuid]) -> Result<Vec<fleet::MessageRow>, StoreError> {
        let scope = self.scope();
        read_retried!(self.topology.reads(), "the messages", |c| fleet::messages(
            c, scope, ids
        ))
    }

    /// One bootstrap in depth; `None` when it does not exist in scope.
    pub async fn detail(&self, bootstrap_id: Uuid) -> Result<Option<Detail>, DetailError> {
        let (layout, scope) = (*self.topology.reads().layout(), self.scope());
        let rows = read_retried!(self.topology.reads(), "the detail", |c| read::detail(
            c,
            &layout,
            bootstrap_id,
            scope
        ))?;
        let mut detail = rows.map(Detail::try_from).transpose()?;
        if let Some(detail) = &mut detail {
            // Read on a standby: judged as of its data, like the board.
            detail.db_now -= self.behind;
            if let Some(why) = self.topology.capabilities().audit_unavailable() {
                detail.audit = Err(why);
            }
        }
        Ok(detail)
    }

    /// Every mutation lease in scope, judged against the session's thresholds.
    pub async fn leases(&self) -> Result<LeaseBoard, DetailError> {
        let (layout, scope) = (*self.topology.reads().layout(), self.scope());
        let rows = read_retried!(self.topology.reads(), "the leases", |c| read::leases(
            c, &layout, scope, None
        ))?;
        let rows = read::LeaseRows {
            // Read on a standby: judged as of its data, like the board.
            db_now: rows.db_now - self.behind,
            ..rows
        };
        Ok(LeaseBoard::assess(rows, self.session.thresholds())?)
    }

    /// The most recent audit records in scope (empty when there is no audit table; an error
    /// naming the grant when the role may not read it).
    pub async fn recent_audit(&self, limit: i64) -> Result<Vec<AuditRecord>, StoreError> {
        let capabilities = self.topology.capabilities();
        if !capabilities.has_audit_table {
            return Ok(Vec::new());
        }
        if let Some(why) = capabilities.audit_unavailable() {
            return Err(StoreError::NotGranted(why));
        }
        let scope = self.scope();
        read_retried!(self.topology.reads(), "the audit log", |c| {
            read::recent_audit(c, scope, limit)
        })
    }

    /// Reads every id in scope (bootstraps, their spaces, leases) and how to show ids by them:
    /// one index-only pass, for commands that print ids.
    pub async fn names(&self) -> Result<Arc<IdNames>, StoreError> {
        let scope = self.scope();
        let ids = read_retried!(self.topology.reads(), "the ids in scope", |c| {
            read::ids_in_scope(c, scope)
        })?;
        Ok(Arc::new(IdNames::new(ids)))
    }

    /// Shows `ids` (the ones a command is about to print) by forms no other id in scope shares,
    /// reading as little as that takes: their neighbours in the primary keys — unless a tenant
    /// scope is small enough to read whole through its index, or some id needs a suffix,
    /// which only the whole scope can tell apart.
    pub(crate) async fn names_around(&self, ids: &[Uuid]) -> Result<Arc<IdNames>, StoreError> {
        if self.scope().is_some() {
            return self.names().await;
        }
        let neighbours = read_retried!(self.topology.reads(), "the ids' neighbours", |c| {
            read::neighbour_ids(c, ids)
        })?;
        let names = IdNames::new(ids.iter().copied().chain(neighbours));
        if ids
            .iter()
            .any(|id| names.short(id).contains(super::ids::SUFFIX_MARK))
        {
            return self.names().await;
        }
        Ok(Arc::new(names))
    }

    /// What the tenant scope matches (`None` without a scope).
    pub(crate) async fn scope_match(&self) -> Result<Option<ScopeMatch>, StoreError> {
        let Some(tenant) = self.scope() else {
            return Ok(None);
        };
        let presence = read_retried!(self.topology.reads(), "the tenant", |c| {
            read::tenant_presence(c, tenant)
        })?;
        Ok(Some(match presence {
            (true, _) => ScopeMatch::Bootstraps,
            (false, Some(true)) => ScopeMatch::NoBootstraps,
            (false, spaces) => ScopeMatch::NoSuchTenant {
                near: near_names(
                    tenant,
                    &read_retried!(self.topology.reads(), "the tenants", |c| {
                        read::bootstrap_tenants(c)
                    })?,
                ),
                spaces_known: spaces.is_some(),
            },
        }))
    }

    /// The bootstrap named by `id`, which may be a bootstrap id or a space id, read on the
    /// primary. Rows of other tenants are returned too, so that an action on one is refused
    /// with a sentence naming the scope rather than a puzzling "not found"; the actions
    /// enforce the scope.
    pub async fn find_bootstrap(&self, id: Uuid) -> Result<Option<Bootstrap>, DetailError> {
        let row = read_tx!(self.topology.primary(), |c| read::bootstrap_by_id_or_space(
            c, id
        ))?;
        row.map(Bootstrap::try_from)
            .transpose()
            .map_err(DetailError::from)
    }

    /// The mutation lease with this id, whatever its tenant, read on the primary (the actions
    /// enforce the scope).
    pub(crate) async fn find_lease(&self, id: Uuid) -> Result<Option<MutationLease>, StoreError> {
        let primary = self.topology.primary();
        let layout = *primary.layout();
        let row = read_tx!(primary, |c| read::lease(c, &layout, id))?;
        Ok(row.map(MutationLease::from))
    }

    /// The one id of `table` in scope that `arg` names, read on the primary (a prefix through
    /// the primary key; a suffix by reading the id column): `Ok(None)` when none does; `Err`
    /// lists (some of) the ids it could mean when several do — never ids outside the scope.
    pub(crate) async fn id_named(
        &self,
        table: read::IdTable,
        arg: &IdArg,
    ) -> Result<Result<Option<Uuid>, Vec<Uuid>>, StoreError> {
        const SHOWN: i64 = 5;
        let scope = self.scope();
        let primary = self.topology.primary();
        let found = match arg {
            IdArg::Whole(id) => return Ok(Ok(Some(*id))),
            IdArg::Prefix(prefix) => {
                let range = (prefix.first, prefix.last);
                read_tx!(primary, |c| read::ids_in_range(
                    c,
                    table,
                    range,
                    scope,
                    SHOWN + 1
                ))?
            }
            IdArg::Suffix(digits) => read_tx!(primary, |c| read::ids_with_suffix(
                c,
                table,
                digits,
                None,
                scope,
                SHOWN + 1
            ))?,
            IdArg::Both(prefix, digits) => {
                let range = Some((prefix.first, prefix.last));
                read_tx!(primary, |c| read::ids_with_suffix(
                    c,
                    table,
                    digits,
                    range,
                    scope,
                    SHOWN + 1
                ))?
            }
        };
        Ok(match found.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            _ => Err(found),
        })
    }
}
