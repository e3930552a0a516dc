//! The shared domain: ledger types, operator signals and the race-safe actions. No terminal
//! code lives here, so the TUI, the command line and the tests all call the same functions.
//! It is the only code in the console that writes to the database (through `store::write`).
//!
//! The read side at fleet scale: [`fleet`] is the resident model the live console keeps
//! current from the sync's changes ([`board`] is its vocabulary), and [`report`] pages through
//! the ledger for `status` and for actions chosen by filter.

pub mod actions;
pub mod actor;
pub mod audit_chain;
pub mod board;
pub mod fleet;
pub mod gate;
pub mod health;
pub mod ids;
pub mod leases;
pub mod model;
pub mod outliers;
pub mod pace;
pub mod progress;
pub mod refusal;
pub mod report;
pub mod scope;
pub mod session;
pub mod signals;
pub mod text;
