//! bootstrap-console: a terminal operations console for the legacy space publication bootstrap
//! rollout (platform migration 0009).
//!
//! Module map:
//! * [`cli`] — the command line, dispatching to the modules below;
//! * [`domain`] — ledger types, signals, the resident fleet model, reports and the actions;
//!   the only code that writes;
//! * [`store`] — every SQL statement the console runs, the incremental sync, and the embedded
//!   schema units;
//! * [`poller`] — reads the ledger in the background (only what changed) and publishes
//!   snapshots;
//! * [`tui`] — the live console (state, update, keys, theme, views);
//! * [`logging`] — logs to a file, never to the screen;
//! * [`sandbox`] — a private PostgreSQL cluster for `demo`, `sandbox` and the tests, the
//!   rollout simulator and the scale fixture.

pub mod cli;
pub mod domain;
pub mod logging;
pub mod poller;
pub mod sandbox;
pub mod store;
pub mod tui;
