//! The SQL that gives a role exactly what the console needs: `bootstrap-console grants`
//! prints it for a person to review and run. Nothing here is executed by the console.
//!
//! The grants follow the statements the console runs: the columns are the lists in
//! [`super::write`] that the capabilities check at connect, and the least-privilege tests run
//! every action with exactly these grants.
//!
//! What each duty gets (and the script first revokes whatever else the role held on these
//! tables, so running it again leaves exactly this):
//! * observer: `SELECT` on the three ledger tables, on `bootstrap_console.audit_log` (with
//!   `USAGE` on its schema) and on `audit_chain_head` (reading it cannot lock it), and on
//!   `projection_set_publication_heads` when it exists (`check`'s head checks);
//! * operator, besides: `UPDATE` of the bootstrap columns retry and cancel write, `UPDATE` of
//!   the item columns retry writes, `DELETE` on the lease table (lease removal locks the row
//!   with its DELETE, so it needs no UPDATE), and `INSERT` of the audit columns a console fills
//!   in — the id, time, role and chain are the database's.
//!
//! No one but the audit log's owner gets `UPDATE`, `DELETE` or `TRUNCATE` on it. The script
//! creates the role `NOLOGIN` if missing and refuses a superuser, a role that bypasses row
//! security, and one that owns (or is a member of the owner of) a ledger table or the audit
//! log. What grants cannot do: the column
//! grants also let the role's members change those columns from `psql` with no audit record,
//! and the DELETE grant lets them `LOCK TABLE` the lease table, stalling every console and the
//! platform's writers until that transaction ends. The audit log is complete only for what goes
//! through the console; where that matters, log those people's statements
//! (`ALTER ROLE alice SET log_statement = 'mod'`) or keep the operator role for the console's
//! host.

use super::write::{AUDIT_INSERTED_COLUMNS, BOOTSTRAP_UPDATED_COLUMNS, ITEM_UPDATED_COLUMNS};

/// The head of the audit chain, which only the chaining trigger moves.
const CHAIN_HEAD: &str = "\"bootstrap_console\".\"audit_chain_head\"";

/// What the role is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Duty {
    /// `watch`, `status`, `check`, `audit verify`: reads only.
    Observer,
    /// An observer that also retries, cancels and removes orphaned leases.
    Operator,
}

/// What to print the grants for.
#[derive(Debug, Clone)]
pub(crate) struct GrantsFor<'a> {
    pub(crate) role: &'a str,
    pub(crate) duty: Duty,
    /// The schema of the ledger tables.
    pub(crate) schema: &'a str,
    /// The database, for `GRANT CONNECT` (only where CONNECT was taken from PUBLIC).
    pub(crate) database: Option<&'a str>,
}

/// `"name"`, with quotes inside doubled.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `'text'`, with quotes inside doubled.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The whole script.
pub(crate) fn script(to: &GrantsFor<'_>) -> String {
    let role = ident(to.role);
    let role_text = literal(to.role);
    let schema = ident(to.schema);
    let table = |name: &str| format!("{schema}.{}", ident(name));
    let bootstraps = table("legacy_space_publication_bootstraps");
    let items = table("legacy_space_publication_bootstrap_items");
    let leases = table("knowledge_space_mutation_leases");
    let heads = literal(&format!(
        "{schema}.{}",
        ident("projection_set_publication_heads")
    ));
    let audit = "\"bootstrap_console\".\"audit_log\"";
    let (duty, commands) = match to.duty {
        Duty::Observer => ("an observer", "watch, status, check, audit verify"),
        Duty::Operator => (
            "an operator",
            "watch, status, check, audit verify, retry, cancel, lease remove",
        ),
    };
    let mut sql = format!(
        "-- bootstrap-console grants for role {role}, {duty} ({commands}).\n\
         -- Review it, then run it as the owner of the ledger tables or a superuser, once\n\
         -- `bootstrap-console migrate` has created the console's audit log, e.g.\n\
         --   psql \"$DATABASE_URL\" -v ON_ERROR_STOP=1 -f grants.sql\n\
         -- It is one transaction: any error (a refused role, a missing table) grants nothing.\n\
         -- Re-running it leaves the role with exactly these grants on these tables.\n\
         \n\
         BEGIN;\n\
         \n\
         -- The role (NOLOGIN: grant it to the people who use the console, who log in as\n\
         -- themselves, e.g. GRANT {role} TO alice;). It must own none of the tables: an owner\n\
         -- holds every right whatever is granted, and the audit log's owner can rewrite it.\n\
         DO $grants$\n\
         BEGIN\n\
         \x20 IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {role_text}) THEN\n\
         \x20   CREATE ROLE {role} NOLOGIN;\n\
         \x20 END IF;\n\
         \x20 IF (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = {role_text}) THEN\n\
         \x20   RAISE EXCEPTION 'role % is a superuser (or bypasses row security): grants cannot narrow it', {role_text};\n\
         \x20 END IF;\n\
         \x20 IF EXISTS (SELECT FROM pg_class\n\
         \x20            WHERE oid IN ({bootstraps_text}::regclass, {items_text}::regclass,\n\
         \x20                          {leases_text}::regclass, {audit_text}::regclass)\n\
         \x20              AND pg_has_role({role_text}, relowner, 'MEMBER')) THEN\n\
         \x20   RAISE EXCEPTION 'role % owns a ledger table or the audit log (or is a member of its owner): choose a role that owns none', {role_text};\n\
         \x20 END IF;\n\
         END\n\
         $grants$;\n\
         \n\
         -- Anything else this role held on these tables goes (column grants included).\n\
         REVOKE ALL ON {bootstraps}, {items}, {leases} FROM {role};\n\
         REVOKE ALL ON {audit}, {head} FROM {role};\n",
        head = CHAIN_HEAD,
        bootstraps_text = literal(&bootstraps),
        items_text = literal(&items),
        leases_text = literal(&leases),
        audit_text = literal(audit),
    );
    if let Some(database) = to.database {
        sql.push_str(&format!(
            "\n-- Needed only where CONNECT was revoked from PUBLIC.\n\
             GRANT CONNECT ON DATABASE {} TO {role};\n",
            ident(database)
        ));
    }
    sql.push_str(&format!(
        "\n-- Reading: the board, detail, leases, audit and health views, `status`, `check`,\n\
         -- `audit verify`.\n\
         GRANT USAGE ON SCHEMA {schema} TO {role};\n\
         GRANT SELECT ON {bootstraps}, {items}, {leases} TO {role};\n\
         GRANT USAGE ON SCHEMA \"bootstrap_console\" TO {role};\n\
         GRANT SELECT ON {audit} TO {role};\n\
         -- `audit verify` checks the log's end against the head the database keeps.\n\
         GRANT SELECT ON {CHAIN_HEAD} TO {role};\n\
         -- `check` compares each published space with the platform's head, when that table exists.\n\
         DO $grants$\n\
         BEGIN\n\
         \x20 IF to_regclass({heads}) IS NOT NULL THEN\n\
         \x20   EXECUTE 'GRANT SELECT ON ' || {heads} || ' TO ' || quote_ident({role_text});\n\
         \x20 END IF;\n\
         END\n\
         $grants$;\n"
    ));
    if to.duty == Duty::Operator {
        sql.push_str(&format!(
            "\n-- Acting: retry and cancel write these columns of a job and of its items (the\n\
             -- row lock they take needs no more), removing an orphaned lease deletes it, and\n\
             -- each action appends one audit record. The database fills in the record's id\n\
             -- (an identity column: no sequence grant), its time and its hash chain; the log\n\
             -- itself refuses UPDATE, DELETE and TRUNCATE.\n\
             GRANT UPDATE ({}) ON {bootstraps} TO {role};\n\
             GRANT UPDATE ({}) ON {items} TO {role};\n\
             GRANT DELETE ON {leases} TO {role};\n\
             GRANT INSERT ({}) ON {audit} TO {role};\n",
            BOOTSTRAP_UPDATED_COLUMNS.join(", "),
            ITEM_UPDATED_COLUMNS.join(", "),
            AUDIT_INSERTED_COLUMNS.join(", "),
        ));
    }
    sql.push_str("\nCOMMIT;\n");
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    fn operator(role: &str) -> String {
        script(&GrantsFor {
            role,
            duty: Duty::Operator,
            schema: "public",
            database: None,
        })
    }

    #[test]
    fn names_are_quoted_so_no_name_can_end_a_statement() {
        let sql = operator("o'\"x");
        assert!(sql.contains("CREATE ROLE \"o'\"\"x\" NOLOGIN;"), "{sql}");
        assert!(sql.contains("rolname = 'o''\"x'"), "{sql}");
    }

    #[test]
    fn an_observer_gets_no_write_grant() {
        let sql = script(&GrantsFor {
            role: "watcher",
            duty: Duty::Observer,
            schema: "public",
            database: Some("platform"),
        });
        for write in ["UPDATE (", "DELETE ON", "INSERT ("] {
            assert!(!sql.contains(write), "{write} in {sql}");
        }
        assert!(sql.contains("GRANT CONNECT ON DATABASE \"platform\" TO \"watcher\";"));
        let sql = operator("ops");
        assert!(sql.contains(
            "GRANT UPDATE (status, compilation_attempt_id, last_error, updated_at) ON \
             \"public\".\"legacy_space_publication_bootstrap_items\" TO \"ops\";"
        ));
        assert!(!sql.contains("CONNECT"));
    }
}
