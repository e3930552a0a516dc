//! The SQL that gives a role exactly what the console needs: `bootstrap-console grants`
//! prints it for a person to review and run. Nothing here is executed by the console.
//!
//! The grants follow the statements the console runs: the functions are the ones the
//! capabilities check at connect ([`super::capabilities::ACTION_FUNCTIONS`]), and the
//! least-privilege tests run every action with exactly these grants.
//!
//! What each duty gets (and the script first revokes whatever else the role held on these
//! tables and functions, so running it again leaves exactly this):
//! * observer: `SELECT` on the three ledger tables, on `bootstrap_console.audit_log` (with
//!   `USAGE` on its schema) and on `audit_chain_head` (reading it cannot lock it), and on
//!   `projection_set_publication_heads` when it exists (`check`'s head checks);
//! * operator, besides: `EXECUTE` on the action functions (console schema unit 0006), which
//!   lock, judge, apply and append the audit record in one call, as their owner. No `UPDATE`,
//!   `DELETE` or `INSERT` on any ledger or audit table: the functions are the only way the
//!   role writes, so every change it makes has its audit record, and every record its change.
//!
//! The script creates the role `NOLOGIN` if missing and refuses a superuser, a role that
//! bypasses row security, and one that owns (or is a member of the owner of) a ledger table,
//! the audit log or the functions. What it cannot prevent is in the README ("Running against
//! production"): above all, a member who calls a function and leaves the transaction open
//! holds that row and the audit chain's head, and so every console's actions, until the
//! server's idle timeout or an administrator ends it.

use super::capabilities::ACTION_FUNCTIONS;

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
    let functions = |verb: &str, preposition: &str| {
        ACTION_FUNCTIONS
            .iter()
            .map(|name| {
                format!(
                    "{verb} ON FUNCTION \"bootstrap_console\".{} {preposition} {role};\n",
                    ident(name)
                )
            })
            .collect::<String>()
    };
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
         \x20 IF EXISTS (SELECT FROM pg_proc\n\
         \x20            WHERE pronamespace = 'bootstrap_console'::regnamespace\n\
         \x20              AND proname IN ({function_names})\n\
         \x20              AND pg_has_role({role_text}, proowner, 'MEMBER')) THEN\n\
         \x20   RAISE EXCEPTION 'role % owns the action functions (or is a member of their owner): choose a role that owns none', {role_text};\n\
         \x20 END IF;\n\
         END\n\
         $grants$;\n\
         \n\
         -- Anything else this role held on these tables and functions goes (column grants\n\
         -- included).\n\
         REVOKE ALL ON {bootstraps}, {items}, {leases} FROM {role};\n\
         REVOKE ALL ON {audit}, {head} FROM {role};\n",
        head = CHAIN_HEAD,
        bootstraps_text = literal(&bootstraps),
        items_text = literal(&items),
        leases_text = literal(&leases),
        audit_text = literal(audit),
        function_names = ACTION_FUNCTIONS
            .iter()
            .map(|name| literal(name))
            .collect::<Vec<_>>()
            .join(", "),
    );
    sql.push_str(&functions("REVOKE ALL", "FROM"));
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
         -- `check` compares each published space with the platform's head, when that table exists\n\
         -- and whoever runs this may grant it (else `check` says it could not compare).\n\
         DO $grants$\n\
         BEGIN\n\
         \x20 IF to_regclass({heads}) IS NOT NULL THEN\n\
         \x20   IF has_table_privilege(to_regclass({heads}), 'SELECT WITH GRANT OPTION') THEN\n\
         \x20     EXECUTE 'GRANT SELECT ON ' || {heads} || ' TO ' || quote_ident({role_text});\n\
         \x20   ELSE\n\
         \x20     RAISE NOTICE 'not granted: SELECT on % (ask its owner)', {heads};\n\
         \x20   END IF;\n\
         \x20 END IF;\n\
         END\n\
         $grants$;\n"
    ));
    if to.duty == Duty::Operator {
        sql.push_str(&format!(
            "\n-- Acting: retry, cancel and lease removal are functions of the database, which\n\
             -- lock the row, judge it, apply and append the audit record in one call, as their\n\
             -- owner; the wait is what the lookup of an unanswered action makes. Nothing else\n\
             -- is granted that writes: no UPDATE, DELETE or INSERT on any table.\n\
             {}",
            functions("GRANT EXECUTE", "TO")
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
        for write in ["UPDATE", "DELETE", "INSERT", "GRANT EXECUTE"] {
            assert!(!sql.contains(write), "{write} in {sql}");
        }
        assert!(sql.contains("GRANT CONNECT ON DATABASE \"platform\" TO \"watcher\";"));
        let sql = operator("ops");
        assert!(sql.contains(
            "GRANT EXECUTE ON FUNCTION \"bootstrap_console\".\"retry_bootstrap\" TO \"ops\";"
        ));
        for write in ["GRANT UPDATE", "GRANT DELETE", "GRANT INSERT"] {
            assert!(!sql.contains(write), "{write} in {sql}");
        }
        assert!(!sql.contains("CONNECT"));
    }
}
