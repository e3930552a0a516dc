//! A session: who acts, within which tenant scope, judged by which thresholds — and the
//! topology it runs on. Scope and read-only are enforced by the domain, for the TUI and the
//! CLI alike, not only in a UI.
//!
//! The session holds no connection state of its own: where reads and writes go, and whether
//! actions are allowed, are the topology's ([`crate::topology`]); reads take a snapshot of it
//! ([`Session::reads`]), and so do actions. A session never changes: a front end that shows
//! ids another way, or sent a request, derives the next session from it
//! ([`Session::with_names`], [`Session::with_request_sent`]) and hands that one on.

use std::collections::VecDeque;
use std::sync::Arc;

use uuid::Uuid;

use super::actor::Actor;
use super::ids::IdNames;
use super::refusal::Refusal;
use super::signals::Thresholds;
use crate::store::connect::Target;
use crate::store::sync::{LedgerSync, SyncSettings};
use crate::topology::{Approval, OpenError, Topology, TopologyHandle};

/// How a session is opened.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Restrict everything shown and done to this tenant.
    pub tenant: Option<String>,
    /// Refuse every action, whatever the role may do.
    pub read_only: bool,
    /// What the actions judge by (a lease younger than the orphan threshold needs force).
    pub thresholds: Thresholds,
    /// `--primary`: write to this listed host whatever the split-brain guard says (audited as
    /// forced).
    pub primary: Option<String>,
}

/// An open console session: an immutable handle, cheap to clone; clones share the topology.
#[derive(Clone)]
pub struct Session {
    topology: TopologyHandle,
    tenant: Option<String>,
    actor: Actor,
    thresholds: Thresholds,
    /// How the sentences of actions show ids in scope (see [`IdNames`]): as the front end
    /// shows them.
    names: Arc<IdNames>,
    /// The requests this console sent lately, so a plan can tell its own earlier action from
    /// someone else's.
    sent: Arc<VecDeque<Uuid>>,
    /// What the split-brain guard approved for the request being applied.
    approval: Option<Arc<Approval>>,
}

impl Session {
    /// Connects (see [`crate::topology::start`]) and refuses to open on a database without a
    /// ledger, or with a blank tenant.
    pub async fn open(target: &Target, options: SessionOptions) -> Result<Self, OpenError> {
        if options
            .tenant
            .as_deref()
            .is_some_and(|t| t.trim().is_empty())
        {
            return Err(OpenError::EmptyTenant);
        }
        let topology =
            crate::topology::start(target, options.read_only, options.primary.as_deref()).await?;
        Ok(Self {
            topology,
            tenant: options.tenant,
            actor: Actor::from_environment(),
            thresholds: options.thresholds,
            names: Arc::default(),
            sent: Arc::default(),
            approval: None,
        })
    }

    /// Polls read `target` once it answers (see [`TopologyHandle::add_reader_not_answering`]).
    pub async fn add_reader_not_answering(&mut self, target: &Target) {
        self.topology.add_reader_not_answering(target).await;
    }

    /// Polls and reports read `target` from now on (see [`TopologyHandle::add_reader`]).
    pub async fn add_reader(&mut self, target: &Target) -> Result<(), OpenError> {
        self.topology.add_reader(target).await
    }

    /// The topology as of now: where reads and writes go, and whether actions are allowed.
    pub fn topology(&self) -> Arc<Topology> {
        self.topology.now()
    }

    /// The live topology, for what watches it change or reports to it.
    pub(crate) fn topology_handle(&self) -> &TopologyHandle {
        &self.topology
    }

    /// A sync that keeps a copy of this session's scope current (see [`crate::store::sync`]).
    pub fn ledger_sync(&self, settings: SyncSettings) -> LedgerSync {
        LedgerSync::new(self.tenant.clone(), settings)
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

    /// How ids in scope are shown in sentences about them.
    pub fn names(&self) -> Arc<IdNames> {
        self.names.clone()
    }

    /// This session, showing ids as `names` do (the ones the front end shows).
    pub fn with_names(&self, names: Arc<IdNames>) -> Self {
        Self {
            names,
            ..self.clone()
        }
    }

    /// This session, knowing that this console sent `request` (kept: the latest 256).
    pub(crate) fn with_request_sent(&self, request: Uuid) -> Self {
        const KEPT: usize = 256;
        if self.sent.contains(&request) {
            return self.clone();
        }
        let mut sent = (*self.sent).clone();
        sent.push_back(request);
        while sent.len() > KEPT {
            sent.pop_front();
        }
        Self {
            sent: Arc::new(sent),
            ..self.clone()
        }
    }

    /// This session, writing where the split-brain guard approved (see
    /// [`crate::topology::lineage`]).
    pub(crate) fn with_approval(&self, approval: Option<Approval>) -> Self {
        Self {
            approval: approval.map(Arc::new),
            ..self.clone()
        }
    }

    /// What the split-brain guard approved for the request being applied.
    pub(crate) fn approval(&self) -> Option<&Approval> {
        self.approval.as_deref()
    }

    /// Whether this console sent `request`: an applied one it sent is its own doing.
    pub(crate) fn sent_here(&self, request: &Uuid) -> bool {
        self.sent.contains(request)
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

    /// Closes every server's sessions (see [`TopologyHandle::close`]).
    pub async fn close(&self) {
        self.topology.close().await;
    }
}
