//! A session: who acts, within which tenant scope, judged by which thresholds — and the
//! topology it runs on. Scope and read-only are enforced by the domain, for the TUI and the
//! CLI alike, not only in a UI.
//!
//! The session holds no connection state of its own: where reads and writes go, and whether
//! actions are allowed, are the topology's ([`crate::topology`]); reads take a snapshot of it
//! ([`Session::reads`]), and so do actions. What it keeps besides are two caches of this
//! process: how ids are shown, and the requests it applied lately.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, RwLock};

use uuid::Uuid;

use super::actor::Actor;
use super::ids::IdNames;
use super::refusal::Refusal;
use super::signals::Thresholds;
use crate::store::connect::Target;
use crate::store::sync::{LedgerSync, SyncSettings};
use crate::topology::{OpenError, Topology, TopologyHandle};

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

/// An open console session. Cheap to clone; clones share the topology and the caches.
#[derive(Clone)]
pub struct Session {
    topology: TopologyHandle,
    tenant: Option<String>,
    actor: Actor,
    thresholds: Thresholds,
    /// How ids in scope are shown, as last read (see [`IdNames`]).
    names: Arc<RwLock<Arc<IdNames>>>,
    /// The requests this process applied lately, so a plan can tell its own earlier action
    /// from someone else's.
    applied: Arc<Mutex<VecDeque<Uuid>>>,
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
        let topology = crate::topology::start(target, options.read_only).await?;
        Ok(Self {
            topology,
            tenant: options.tenant,
            actor: Actor::from_environment(),
            thresholds: options.thresholds,
            names: Arc::default(),
            applied: Arc::default(),
        })
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

    /// Closes every server's sessions (see [`TopologyHandle::close`]).
    pub async fn close(&self) {
        self.topology.close().await;
    }
}
