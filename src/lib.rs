//! bootstrap-console: a terminal operations console for the legacy space publication bootstrap
//! rollout (platform migration 0009).
//!
//! Module map:
//! * [`cli`] — the command line, dispatching to the modules below;
//! * [`store`] — every SQL statement the console runs, and the embedded schema units;
//! * [`sandbox`] — a private PostgreSQL cluster for `demo`, `sandbox` and the tests.

pub mod cli;
pub mod sandbox;
pub mod store;
