//! The exit codes of every command, in one table (the README's "Exit codes" repeats it).

/// Done (for `status`: nothing shown needs an operator).
pub(crate) const DONE: u8 = 0;
/// `status`: something shown needs an operator.
pub(crate) const NEEDS_ATTENTION: u8 = 1;
/// A usage error: a bad flag, id, URL or reason; no terminal to confirm on; too many spaces.
pub(crate) const USAGE: u8 = 2;
/// An action was refused (its decision no longer holds, or it never applied), or not
/// confirmed.
pub(crate) const REFUSED: u8 = 3;
/// The database is unreachable, refused the login, or failed a statement.
pub(crate) const UNREACHABLE: u8 = 4;
/// The schema is missing: no ledger tables, or the console schema could not be applied.
pub(crate) const SCHEMA: u8 = 5;
/// An action's outcome is unknown: the deadline passed or the connection was lost, and the
/// lookup could not tell whether it committed (the row was still locked).
pub(crate) const OUTCOME_UNKNOWN: u8 = 6;
/// `--tenant` matches no bootstrap: a typo, or a tenant with nothing to migrate.
pub(crate) const NOTHING_IN_SCOPE: u8 = 7;
/// The role lacks a privilege the command needs; the message names the grant.
pub(crate) const MISSING_PRIVILEGE: u8 = 8;
/// `status --until`: the timeout passed before every space in scope reached the checkpoint.
pub(crate) const TIMED_OUT: u8 = 9;
/// An action was refused by the split-brain guard: several listed hosts answer as primaries,
/// they are not one cluster, or the primary is on a lower timeline than one written to
/// before (or moved mid-request). Nothing more was sent; what the request did before is
/// listed. `--primary HOST` overrides it.
pub(crate) const PRIMARY_IN_DOUBT: u8 = 10;

/// Ended by the stop signal `name` (SIGTERM, SIGHUP or a hang-up, SIGQUIT, SIGINT): 128 + its
/// number, as a shell reports a process the signal killed, so a supervisor tells it from `q`
/// (0). An action whose outcome stayed unknown still exits [`OUTCOME_UNKNOWN`].
pub(crate) fn by_signal(name: &str) -> u8 {
    let number = match name {
        "SIGHUP" => libc::SIGHUP,
        "SIGINT" => libc::SIGINT,
        "SIGQUIT" => libc::SIGQUIT,
        "SIGTERM" => libc::SIGTERM,
        _ => return DONE,
    };
    u8::try_from(128 + number).unwrap_or(u8::MAX)
}
