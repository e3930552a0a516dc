//! The integration tests, as one binary: it links the crate once and shares one private
//! PostgreSQL cluster (or the server `DATABASE_URL` names) among every test, each test in a
//! database of its own cloned from a migrated template (see [`common`]).
//!
//! Tests that change a cluster itself start one of their own: TLS (`ALTER SYSTEM ssl`), roles
//! checked by `pg_hba` with reloads, replica pairs, a server killed on purpose, the sandbox.

// The tests play the platform and psql, which talk to the database directly: the console's
// rule that every statement is unnamed (src/store/sql.rs) is the console's, not theirs.
#![allow(clippy::disallowed_methods)]

mod actions;
mod audit_chain;
mod bounded_inputs;
mod clean_exit;
mod cli;
mod cli_incident;
mod common;
mod fleet;
mod gate;
mod health;
mod ids;
mod incident;
mod least_privilege;
mod libpq;
mod poller;
mod pooler;
mod read_model;
mod replica;
mod report;
mod sandbox;
mod scale_fixture;
mod schema;
mod screenshots;
mod simulate_command;
mod simulator;
mod terminal_life;
mod tls;
mod tui_e2e;
mod tui_keys;
mod tui_render;
