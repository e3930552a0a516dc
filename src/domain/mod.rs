//! The shared domain: ledger types, operator signals and the race-safe actions. No terminal
//! code lives here, so the TUI, the command line and the tests all call the same functions.
//! Operator actions write to the ledger and the audit log only through [`actions`] (by way of
//! `store::write`); the console's own schema is applied by `migrate` through `store::schema`,
//! and the sandbox's simulator writes as the platform would.
//!
//! The read side at fleet scale: [`fleet`] is the resident model the live console keeps
//! current from the sync's changes ([`board`] is its vocabulary), and [`report`] pages through
//! the ledger for `status` and for actions chosen by filter.
//!
//! # The domain contract
//!
//! What the console is built against, in short. The platform migration it observes is kept
//! verbatim in `migrations/platform/0009_legacy_space_bootstrap.sql`; where this summary and
//! that SQL disagree, the SQL decides. Comments across the crate cite these sections as
//! "domain contract §n".
//!
//! ## 1. The ledger and its states
//!
//! Migration 0009 stops trusting a knowledge space's legacy derived state and rebuilds each
//! affected space (one without a publication head that has documents or legacy rows) through
//! one durable job. The job row is the space's query-readiness latch: strict readers cannot
//! read the space until its job has succeeded, so every space not yet succeeded is an outage
//! for its tenant. Three tables hold the ledger:
//! * `legacy_space_publication_bootstraps`: one job per (tenant, space). The migration inserts
//!   a marker per affected space: queued at `pending_snapshot`, counts zero, its id the space's;
//! * `legacy_space_publication_bootstrap_items`: the job's frozen document set (id, version,
//!   sha256, ordinal), each item `pending → running → succeeded | failed`;
//! * `knowledge_space_mutation_leases`: at most one per space, held by a document writer from
//!   admission to its last write. A lease never expires by itself: a writer that crashed leaves
//!   an orphan that blocks the space until an operator removes it.
//!
//! Checkpoints only move forward: `pending_snapshot → snapshot_captured → rebuilding →
//! verifying → published`. Run states go `queued → running → succeeded | failed | canceled`,
//! `running → queued` when a worker lets go of its lease, and `failed | canceled → queued`
//! when an operator retries (in place). The table's CHECK constraints fix which columns are
//! set in each state; every write by the console or the simulator satisfies them.
//!
//! Platform workers (played by [`crate::sandbox::protocol`]) claim queued jobs, and running
//! jobs whose lease has run out (a reclaim), with `FOR UPDATE SKIP LOCKED`, taking a fresh
//! lease token, a heartbeat and an expiry. Every later write is fenced: it goes ahead only
//! while the job is running under the same token, at the row version the worker last saw,
//! with the lease unexpired, and it bumps `row_version`. A worker captures the snapshot
//! (refused while the space has a mutation lease or already has a publication head), rebuilds
//! the items in ordinal order, verifies once every item succeeded, and completes after
//! checking the snapshot against the space's documents again — or fails the job with an error
//! code and message, or releases it.
//!
//! ## 2. Derived signals and attention groups
//!
//! Ages and expiries are judged on the database clock read in the same poll, never the local
//! clock (a jump host's clock drifts). The signals, with their configurable defaults:
//! * readable: the job succeeded; failed: it failed, with its error code and message;
//! * blocked: not succeeded, at `pending_snapshot`, while the space has a mutation lease;
//! * orphan suspect: a mutation lease older than 15 minutes (and not kept live by a heartbeat);
//! * lease expired: running with `lease_expires_at <= now`, free for any worker to reclaim;
//! * heartbeat late: running with less than a third of its lease window left;
//! * stuck: queued or running with no `updated_at` change for 10 minutes;
//! * progress: completed over total documents, a rate over a sliding window, and an ETA.
//!
//! The board orders spaces failed, blocked, lease expired, stuck, heartbeat late, running,
//! queued, canceled, succeeded (see [`signals`]). Each class belongs to one group, named the
//! same everywhere: *needs an operator* (failed; blocked by an orphan suspect; stuck; a worker
//! lease expired and not reclaimed within a grace), *watch* (heartbeat late; a lease just
//! expired; blocked by a young lease, a writer at work), *progressing or waiting* (running,
//! queued) and *done* (succeeded; canceled, counted apart as an operator's decision).
//!
//! ## 3. Operator actions
//!
//! Retry (from failed or canceled: back to queued in place, keeping the checkpoint and the
//! frozen items; failed and running items return to pending), cancel (from queued or running:
//! canceled with the operator's reason as its message, the lease cleared, which fences out a
//! live worker) and removing an orphan mutation lease (exactly the lease the operator saw; a
//! lease that is not an orphan suspect only when forced, with a stronger confirmation, audited
//! as forced). See [`actions`].
//!
//! The race-safe rule: each action is one transaction that locks the row, checks the
//! precondition against what the operator saw, writes, appends one audit record and commits.
//! Plan and apply share one precondition, and it is semantic: an action rests on the few fields
//! its decision needs (cancel: still queued or running; retry: still the same failed or
//! canceled episode), so a worker's progress never refuses it, while a change of decision
//! writes nothing and says what changed, in a plain sentence. A script may still demand an
//! exact `row_version`. Every action carries a client-made request id, unique in the audit
//! log: applying a request twice applies it once, and an outcome left unknown (a timeout, a
//! lost connection) is looked up by that id, never guessed and never applied twice. The audit
//! record holds the database time, the OS user, host and ssh client ([`actor`]), the action,
//! its subject, the request id, the reason, the row before and after, and the outcome.
//!
//! `--tenant` bounds what is shown and what may be acted on (an empty tenant is a usage error,
//! never "every tenant"); `--read-only`, or a role without the write grants, disables every
//! action ([`session`]). The console's own schema is applied by an explicit command, which
//! never runs a platform migration.
//!
//! ## 4. Untrusted text
//!
//! Error messages, worker ids, tenant ids, operations and JSON metadata come from other
//! programs. Before display, terminal escape sequences and control, C1 and bidirectional
//! characters are removed or escaped and lengths are bounded, so no value can retitle, clear
//! or recolour the operator's terminal or break the layout ([`text`]).
//!
//! ## 5. Reading a fleet politely
//!
//! A rollout is about 100,000 spaces over 1,000 tenants and 5 million items, watched by
//! several operators at once on the platform's production database, and it grows towards a
//! million spaces. The console is an observer, not a load: steady polls read only what changed
//! plus the small lease table; time-driven signals are re-judged from cached timestamps
//! against the database clock; a resync now and then catches deletions and anything a delta
//! missed. Writers' clocks are not trusted, so a change shows within one poll when the writer's
//! clock lag plus its transaction's duration is within the delta's slack, and always within
//! one resync cycle (see `store::sync`). The console creates nothing on platform tables and
//! its polls use the indexes 0009 created; wide columns are read only for one space's detail.
//! With a hot standby, polls may read the standby while plans and actions go to the primary,
//! the board says how far the standby lags, and no write happens while two hosts claim to be
//! the primary. Memory per space and database time per poll must not grow with the fleet.
//!
//! Each action is one SQL function installed by `migrate` (console schema unit 0006,
//! `SECURITY DEFINER`, so an operator needs only EXECUTE), judging by the rules the plan asks
//! too (unit 0005).
//!
//! Not met yet: the contract also asks that the console watch several databases (cells) at
//! once.

pub mod actions;
pub mod actor;
pub mod audit_chain;
pub mod board;
pub mod detail;
pub(crate) mod duration;
pub mod fleet;
pub(crate) mod gate;
pub mod health;
pub mod ids;
pub mod leases;
pub mod model;
pub(crate) mod outliers;
pub mod pace;
pub(crate) mod progress;
pub mod reads;
pub mod refusal;
pub mod report;
pub(crate) mod scope;
pub mod session;
pub mod signals;
/// Untrusted text: a leaf every layer uses, the topology included (see [`crate::text`]).
pub use crate::text;
