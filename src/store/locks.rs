//! Who holds a lock the console waited for, in words an operator can act on: the server
//! process, its role and application, and for how long (`pg_terminate_backend(pid)` ends it).
//!
//! `pg_locks` is readable by every role; `pg_stat_activity` shows every session's role and
//! application, but the start of another role's transaction only to a role with
//! `pg_read_all_stats` — without it, the sentence leaves out how long.

use uuid::Uuid;

use super::db::{Db, read_tx};

/// One holder as the catalog shows it.
#[derive(Debug, sqlx::FromRow)]
struct Holder {
    pid: i32,
    role: Option<String>,
    application: Option<String>,
    held_secs: Option<f64>,
    mode: String,
    relation: Option<String>,
}

impl Holder {
    fn said(&self) -> String {
        let clean = |text: &Option<String>| crate::text::clean(text.as_deref().unwrap_or("?"), 64);
        let mut said = format!(
            "pid {} (role {}, application {:?})",
            self.pid,
            clean(&self.role),
            clean(&self.application)
        );
        if let Some(secs) = self.held_secs {
            said.push_str(&format!(" for {}s", secs.max(0.0).round() as u64));
        }
        said
    }
}

/// The ledger tables whose locks stop a poll.
const LEDGER_TABLES: [&str; 4] = [
    "legacy_space_publication_bootstraps",
    "legacy_space_publication_bootstrap_items",
    "knowledge_space_mutation_leases",
    "audit_log",
];

const TABLE_HOLDERS_SQL: &str = "\
SELECT l.pid, a.usename::text AS role, a.application_name AS application,
       extract(epoch FROM now() - a.xact_start)::float8 AS held_secs,
       l.mode, c.relname::text AS relation
FROM pg_locks l
JOIN pg_class c ON c.oid = l.relation
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.granted AND l.mode = 'AccessExclusiveLock' AND l.pid <> pg_backend_pid()
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND c.relname = ANY($1)
ORDER BY a.xact_start NULLS LAST
LIMIT 3";

/// An ACCESS EXCLUSIVE request still waiting on a ledger table (an `ALTER TABLE` queued behind
/// a long transaction): reads queue behind it, so it and what it waits for are the holders.
const WAITING_SQL: &str =
    "SELECT l.pid, a.usename::text AS role, a.application_name AS application,
       extract(epoch FROM now() - a.query_start)::float8 AS held_secs,
       l.mode, c.relname::text AS relation, pg_blocking_pids(l.pid) AS blockers
FROM pg_locks l
JOIN pg_class c ON c.oid = l.relation
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE NOT l.granted AND l.mode = 'AccessExclusiveLock' AND l.pid <> pg_backend_pid()
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND c.relname = ANY($1)
ORDER BY a.query_start NULLS LAST
LIMIT 1";

/// Who holds a ledger table so that reads wait (ACCESS EXCLUSIVE: an `ALTER TABLE`, a
/// `LOCK TABLE`, a `VACUUM FULL`), as a sentence; `None` when nobody does (or it cannot be
/// asked).
pub(crate) async fn table_holders(db: &Db) -> Option<String> {
    let holders: Vec<Holder> = read_tx!(db, |c| crate::store::sql::query_as(TABLE_HOLDERS_SQL)
        .bind(&LEDGER_TABLES[..])
        .fetch_all(c))
    .ok()?;
    let said: Vec<String> = holders
        .iter()
        .map(|h| {
            // The holder first: a status line cut at 80 columns keeps who to ask.
            format!(
                "{} holds {} on {}",
                h.said(),
                mode_words(&h.mode),
                crate::text::clean(h.relation.as_deref().unwrap_or("?"), 64)
            )
        })
        .collect();
    if !said.is_empty() {
        return Some(said.join("; "));
    }
    waiting_holder(db).await
}

/// [`WAITING_SQL`] as a sentence: who waits to take the table, and behind whom.
async fn waiting_holder(db: &Db) -> Option<String> {
    let row: Option<sqlx::postgres::PgRow> =
        read_tx!(db, |c| crate::store::sql::query(WAITING_SQL)
            .bind(&LEDGER_TABLES[..])
            .fetch_optional(c))
        .ok()?;
    let row = row?;
    let holder = <Holder as sqlx::FromRow<_>>::from_row(&row).ok()?;
    let blockers: Vec<i32> = sqlx::Row::try_get(&row, "blockers").unwrap_or_default();
    let behind = blockers
        .iter()
        .map(|pid| format!("pid {pid}"))
        .collect::<Vec<_>>()
        .join(", ");
    // Who to ask first: the waiter, what it waits for, and behind whom; then who it is.
    let clean = |text: &Option<String>| crate::text::clean(text.as_deref().unwrap_or("?"), 64);
    Some(format!(
        "pid {} waits{} for {} on {}{} (role {}, application {:?})",
        holder.pid,
        holder.held_secs.map_or(String::new(), |s| format!(
            " {}s",
            s.max(0.0).round() as u64
        )),
        mode_words(&holder.mode),
        clean(&holder.relation),
        if behind.is_empty() {
            String::new()
        } else {
            format!(" behind {behind}")
        },
        clean(&holder.role),
        clean(&holder.application)
    ))
}

/// `AccessExclusiveLock` as `LOCK TABLE` spells it: `ACCESS EXCLUSIVE`.
fn mode_words(mode: &str) -> String {
    let mut words = String::new();
    for (i, c) in mode.trim_end_matches("Lock").char_indices() {
        if i > 0 && c.is_uppercase() {
            words.push(' ');
        }
        words.push(c.to_ascii_uppercase());
    }
    words
}

/// Which table a row lock is taken on, for [`row_holder`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum RowOf {
    Bootstrap,
    Lease,
}

/// Who holds row `id` locked, as "held by pid …"; `None` when that cannot be told (the lock
/// was let go since, or several transactions share it).
pub(crate) async fn row_holder(db: &Db, row: RowOf, id: Uuid) -> Option<String> {
    let table = match row {
        RowOf::Bootstrap => "legacy_space_publication_bootstraps",
        RowOf::Lease => "knowledge_space_mutation_leases",
    };
    // A row lock is the locking transaction's id in the row's xmax; that transaction holds
    // an exclusive lock on its own id, which pg_locks shows with its server process.
    let sql = format!(
        "SELECT l.pid, a.usename::text AS role, a.application_name AS application, \
                extract(epoch FROM now() - a.xact_start)::float8 AS held_secs, \
                l.mode, NULL::text AS relation \
         FROM {table} r \
         JOIN pg_locks l ON l.locktype = 'transactionid' AND l.transactionid = r.xmax \
                        AND l.granted AND l.mode = 'ExclusiveLock' \
         LEFT JOIN pg_stat_activity a ON a.pid = l.pid \
         WHERE r.id = $1 AND l.pid <> pg_backend_pid() LIMIT 1"
    );
    let holder: Option<Holder> = read_tx!(db, |c| crate::store::sql::query_as(
        sqlx::AssertSqlSafe(sql)
    )
    .bind(id)
    .fetch_optional(c))
    .ok()?;
    holder.map(|h| format!("held by {}", h.said()))
}

/// Who the statement of server process `pid` waits behind, as "held by pid …", asked while it
/// still waits; `None` when it waits for no one (or that cannot be asked). A row locked inside
/// a function's subtransaction (the action functions lock so) bears an id `pg_locks` does not
/// list, so [`row_holder`] cannot tell its holder once the wait is over; this can.
pub(crate) async fn blocker_of(db: &Db, pid: i32) -> Option<String> {
    let holder: Option<Holder> = read_tx!(db, |c| crate::store::sql::query_as(
        "SELECT a.pid, a.usename::text AS role, a.application_name AS application, \
                extract(epoch FROM now() - a.xact_start)::float8 AS held_secs, \
                '' AS mode, NULL::text AS relation \
         FROM pg_stat_activity a WHERE a.pid = (pg_blocking_pids($1))[1]"
    )
    .bind(pid)
    .fetch_optional(c))
    .ok()?;
    holder.map(|h| format!("held by {}", h.said()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn lock_modes_read_as_lock_table_spells_them() {
        assert_eq!(super::mode_words("AccessExclusiveLock"), "ACCESS EXCLUSIVE");
        assert_eq!(
            super::mode_words("ShareRowExclusiveLock"),
            "SHARE ROW EXCLUSIVE"
        );
    }
}
