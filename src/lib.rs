//! bootstrap-console: a terminal operations console for the legacy space publication bootstrap
//! rollout (platform migration 0009).
//!
//! The README is the operator's guide; how each part works is written here, in the module
//! docs. Start with the domain contract in [`domain`], the document the console is built
//! against.
//!
//! # Crate map
//!
//! Layers point down only: `cli → tui → poller → domain → topology → store`, with [`text`]
//! (untrusted text made safe to show) a leaf any of them uses. The store never imports the
//! domain (it returns rows; the domain turns them into types), and nothing below `tui` knows
//! about a terminal. Operator actions write to the database only through [`domain::actions`]
//! (which runs [`store::write`]); the console's own schema units are applied by `migrate`
//! through [`store::schema`]; the [`sandbox`] simulator writes as the platform's workers do.
//! Modules written as plain code below are private: `cargo doc --document-private-items`
//! shows them.
//!
//! * [`cli`] — the command line: clap definitions (`cli::args`), the exit codes (`cli::exit`),
//!   and one module per command that is more than a call into the domain: `cli::watch`,
//!   `cli::status`, `cli::gate` (`status --until`), `cli::check`, `cli::act` (`retry`,
//!   `cancel`, `lease remove`), `cli::audit` (`audit verify`, `grants`),
//!   `cli::schema_commands` (`migrate`, `sandbox`), `cli::rehearsal` (`demo`, `simulate`);
//!   `cli::json` writes every JSON document, terminal-safe.
//! * [`tui`] — the live console: one event loop in [`tui`] itself;
//!   * [`tui::app`] — the state, each view owning its cursor;
//!   * [`tui::update`] — every state transition, returning effects instead of doing IO;
//!   * [`tui::keys`] — the one key table behind the handlers, the help and the hint bar;
//!   * [`tui::view`] — drawing as a pure function of the state;
//!   * [`tui::terminal`] — entering and leaving the screen, the panic hook, the quiet backend;
//!   * [`tui::theme`], [`tui::palette`], [`tui::layout`] — semantic styles, colour depth,
//!     fixed geometry.
//! * [`poller`] — reads the ledger in the background and publishes snapshots on a `watch`
//!   channel: `poller::fetch` (the IO, on the cadence of `poller::cadence`) and `poller::model`
//!   (owns the fleet model, answers sort and filter, moves the clock between polls).
//! * [`domain`] — the rules, with no terminal code:
//!   * [`domain::model`] — the ledger as types; [`domain::signals`] — what each job needs
//!     from a human; [`domain::leases`] — mutation leases judged;
//!   * [`domain::fleet`] — the resident model kept current by changes; [`domain::board`] — its
//!     vocabulary; [`domain::pace`], [`domain::progress`], [`domain::outliers`] — rates;
//!   * [`domain::actions`] — retry, cancel and lease removal: plan, confirm, apply;
//!   * [`domain::session`] — who acts, the tenant scope, the thresholds; [`domain::reads`] —
//!     every read, on one topology snapshot; [`domain::detail`] — one space in depth;
//!   * [`domain::report`], [`domain::gate`], [`domain::health`] — `status`, `status --until`,
//!     `check`; [`domain::audit_chain`] — verifying the audit log;
//!   * [`domain::ids`], [`domain::duration`], [`domain::scope`], [`domain::refusal`],
//!     [`domain::actor`] — ids as typed and shown, durations, tenant scopes, refusals, who
//!     acts.
//! * [`topology`] — the task that owns one database's connections (primary, standby, listed
//!   hosts, failover, the promotion and split-brain guards) and publishes where reads and
//!   writes go, and whether actions are allowed, as immutable snapshots.
//! * [`store`] — every SQL statement the console runs; [`store::db`] — one server and the one
//!   way a transaction opens:
//!   * [`store::connect`](mod@store::connect), [`store::conninfo`], [`store::hosts`] — targets, libpq spellings,
//!     several hosts; [`store::capabilities`] — what the database offers, found at connect;
//!   * [`store::sync`] (with the statements of [`store::fleet`]) — the incremental read model;
//!   * [`store::read`], [`store::report`], [`store::health`], [`store::audit_chain`] — the
//!     other reads; [`store::replica`], [`store::conflict`] — standbys and recovery conflicts;
//!   * [`store::write`], [`store::lookup`] — each action's one call, one transaction, and the
//!     lookup of an outcome left unknown; [`store::grants`] — the least-privilege SQL;
//!   * [`store::schema`] — the embedded schema units and `migrate`; [`store::rows`] — rows as
//!     returned.
//! * [`logging`] — the log file, never the screen.
//! * [`sandbox`] — a private PostgreSQL for `demo`, `sandbox` and the tests (`sandbox::cluster`,
//!   `sandbox::binaries`, `sandbox::reaper`), the platform's worker protocol
//!   ([`sandbox::protocol`]), the rollout simulator ([`sandbox::sim`]) and the scale fixture
//!   ([`sandbox::fixture`]).
//!
//! # Measuring
//!
//! Speed and memory are measured by two benchmarks under `tests/benches/`, never in CI, each
//! figure against a baseline measured in the same run on the same machine:
//! `cargo bench --bench console` times the in-process hot paths (loading and updating the
//! model, drawing, naming ids, the text sanitizer) at 10,000 spaces against 100; `cargo bench
//! --bench fleet` (about 15 minutes; `-- --quick` for shorter windows, `-- --spaces N
//! --tenants T` for another size, `-- --minutes M` for the memory watch) starts a private
//! PostgreSQL with `pg_stat_statements`, builds the scale fixture, keeps 8 simulated workers
//! writing, and gives every measured client a login role of its own, so the database's own
//! accounting (planning plus execution time) tells their costs apart. The figures last
//! measured are written beside the code they measure: [`store::sync`] (database time per
//! poll), [`poller`] (the UI thread per snapshot, filter typing, memory), [`domain::report`]
//! (`status`), [`store::health`] (`check`), [`tui::terminal`] (idle output).

pub mod cli;
pub mod columns;
pub mod domain;
pub mod logging;
pub mod poller;
pub mod sandbox;
pub mod store;
pub mod text;
pub mod topology;
pub mod tui;
