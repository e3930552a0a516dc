//! What the connected database offers, found once at connect in one query.

use sqlx::PgConnection;

use super::StoreError;

/// Facts about the database that change what the console may show and do.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Capabilities {
    pub current_user: String,
    /// The role the server says this session logged in as. A pooler entry that forces a user
    /// makes it another role than the one named in the connection string.
    pub session_user: String,
    pub server_version: String,
    pub has_bootstraps: bool,
    pub has_items: bool,
    pub has_leases: bool,
    pub has_audit_table: bool,
    /// USAGE on the console's schema and SELECT on its audit table.
    pub can_read_audit: bool,
    /// USAGE on the console's schema (without it nothing in it can be touched).
    pub console_schema_usage: bool,
    /// The audit table has its request id column (console schema unit 0002).
    pub audit_request_ids: bool,
    /// The audit table is hash-chained and append-only (console schema unit 0004).
    pub audit_chain: bool,
    /// The actions' rules are in the database (console schema unit 0005).
    pub action_rules: bool,
    /// The role owning the audit table: only it can disable the triggers that keep the log
    /// append-only, so an operator's role should never be it.
    pub audit_owner: Option<String>,
    /// SELECT on each ledger table.
    pub can_read_bootstraps: bool,
    pub can_read_items: bool,
    pub can_read_leases: bool,
    /// The later lease columns (`heartbeat_at`, `expires_at`) exist.
    pub lease_heartbeats: bool,
    /// The platform added an index led by `updated_at` on the bootstrap table (optional; the
    /// README recommends it): changed rows are then read through it.
    pub updated_at_index: bool,
    /// The actions are the database's functions (console schema unit 0006).
    pub action_functions: bool,
    /// The action functions this role may not EXECUTE, by name (see [`ACTION_FUNCTIONS`]).
    pub execute_missing: Vec<String>,
    /// A hot standby: nothing can be written, whatever the grants say.
    pub in_recovery: bool,
}

// `has_table_privilege` with a list is true when *any* listed privilege is held, so each
// privilege is checked on its own. An action writes only through its function, so EXECUTE on
// it is all it needs; a function the schema lacks (an older console schema) is left to the
// schema check, which says to run `migrate`.
// The console's schema is found in the catalog rather than with `to_regclass`, which fails
// outright for a role without USAGE on the schema: that role must still be able to watch.
const CAPABILITIES_SQL: &str = "\
WITH t AS (SELECT to_regclass('legacy_space_publication_bootstraps') AS bootstraps,
                  to_regclass('legacy_space_publication_bootstrap_items') AS items,
                  to_regclass('knowledge_space_mutation_leases') AS leases,
                  (SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = 'bootstrap_console' AND c.relname = 'audit_log') AS audit,
                  (SELECT n.oid FROM pg_namespace n WHERE n.nspname = 'bootstrap_console')
                    AS console),
u AS (SELECT t.*, coalesce(has_schema_privilege(t.console, 'USAGE'), false) AS usage FROM t)
SELECT current_user::text AS current_user,
       session_user::text AS session_user,
       current_setting('server_version') AS server_version,
       u.bootstraps IS NOT NULL AS has_bootstraps,
       u.items IS NOT NULL AS has_items,
       u.leases IS NOT NULL AS has_leases,
       u.audit IS NOT NULL AS has_audit_table,
       u.usage AS console_schema_usage,
       coalesce(u.usage AND has_table_privilege(u.audit, 'SELECT'), false) AS can_read_audit,
       EXISTS (SELECT 1 FROM pg_attribute
               WHERE attrelid = u.audit AND attname = 'action_id' AND NOT attisdropped)
         AS audit_request_ids,
       coalesce(has_table_privilege(u.bootstraps, 'SELECT'), false) AS can_read_bootstraps,
       coalesce(has_table_privilege(u.items, 'SELECT'), false) AS can_read_items,
       coalesce(has_table_privilege(u.leases, 'SELECT'), false) AS can_read_leases,
       (SELECT count(*) = 2 FROM pg_attribute
         WHERE attrelid = u.leases AND attname IN ('heartbeat_at', 'expires_at')
           AND NOT attisdropped) AS lease_heartbeats,
       EXISTS (SELECT 1 FROM pg_index i
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
               WHERE i.indrelid = u.bootstraps AND a.attname = 'updated_at'
                 AND i.indpred IS NULL AND i.indisvalid) AS updated_at_index,
       (SELECT count(*) = 2 FROM pg_attribute
         WHERE attrelid = u.audit AND attname IN ('hash', 'db_role') AND NOT attisdropped)
         AS audit_chain,
       (SELECT count(DISTINCT p.proname) = 3 FROM pg_proc p
         WHERE p.pronamespace = u.console
           AND p.proname IN ('bootstrap_action_refusal', 'lease_orphan_at', 'lease_removal_refusal'))
         AS action_rules,
       (SELECT pg_get_userbyid(c.relowner)::text FROM pg_class c WHERE c.oid = u.audit)
         AS audit_owner,
       (SELECT count(DISTINCT p.proname) = cardinality($1::text[]) FROM pg_proc p
         WHERE p.pronamespace = u.console AND p.proname = ANY ($1::text[])) AS action_functions,
       ARRAY(SELECT w.name FROM unnest($1::text[]) WITH ORDINALITY AS w(name, n)
             WHERE NOT coalesce(EXISTS (
                     SELECT 1 FROM pg_proc p
                      WHERE p.pronamespace = u.console AND p.proname = w.name
                        AND has_function_privilege(p.oid, 'EXECUTE')), false)
             ORDER BY w.n) AS execute_missing,
       pg_is_in_recovery() AS in_recovery
FROM u";

/// The functions the actions call (console schema unit 0006), in `bootstrap_console`: the
/// three actions, and the wait a lookup of an outcome left unknown makes.
pub(crate) const ACTION_FUNCTIONS: [&str; 4] = [
    "retry_bootstrap",
    "cancel_bootstrap",
    "remove_mutation_lease",
    "await_action_row",
];

/// What an action calls, the only way it writes (console schema unit 0006): EXECUTE on that
/// function is the grant it needs (with the wait its lookup makes, and reading the audit log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Writes {
    /// The action's function in `bootstrap_console`; `None` for every action at once.
    function: Option<&'static str>,
    /// The actions, as the console names them.
    actions: &'static str,
}

impl Writes {
    pub(crate) const RETRY: Self = Self {
        function: Some("retry_bootstrap"),
        actions: "retry",
    };
    pub(crate) const CANCEL: Self = Self {
        function: Some("cancel_bootstrap"),
        actions: "cancel",
    };
    pub(crate) const REMOVE_LEASE: Self = Self {
        function: Some("remove_mutation_lease"),
        actions: "remove lease",
    };
    pub const ALL: Self = Self {
        function: None,
        actions: "actions",
    };
    pub(crate) const EACH: [Self; 3] = [Self::RETRY, Self::CANCEL, Self::REMOVE_LEASE];

    /// The actions that call this, as the console names them.
    pub(crate) fn actions(self) -> &'static str {
        self.actions
    }
}

/// Why nothing can be written to a standby.
pub(crate) const STANDBY: &str = "the database is a read-only standby (in recovery)";

impl Capabilities {
    pub(crate) async fn detect(conn: &mut PgConnection) -> Result<Self, StoreError> {
        Ok(crate::store::sql::query_as::<Self>(CAPABILITIES_SQL)
            .bind(&ACTION_FUNCTIONS[..])
            .fetch_one(&mut *conn)
            .await?)
    }

    /// The ledger tables that are missing, by name.
    pub(crate) fn missing_ledger_tables(&self) -> Vec<&'static str> {
        [
            (self.has_bootstraps, "legacy_space_publication_bootstraps"),
            (self.has_items, "legacy_space_publication_bootstrap_items"),
            (self.has_leases, "knowledge_space_mutation_leases"),
        ]
        .into_iter()
        .filter(|(present, _)| !present)
        .map(|(_, name)| name)
        .collect()
    }

    /// The ledger tables this role may not read, as grants to ask for.
    pub(crate) fn missing_read_grants(&self) -> Vec<String> {
        [
            (
                self.can_read_bootstraps,
                "SELECT on legacy_space_publication_bootstraps",
            ),
            (
                self.can_read_items,
                "SELECT on legacy_space_publication_bootstrap_items",
            ),
            (
                self.can_read_leases,
                "SELECT on knowledge_space_mutation_leases",
            ),
        ]
        .into_iter()
        .filter(|(granted, _)| !granted)
        .map(|(_, grant)| grant.to_string())
        .collect()
    }

    /// Why the audit records cannot be shown, if they cannot.
    pub(crate) fn audit_unavailable(&self) -> Option<String> {
        if !self.has_audit_table {
            Some("no audit table: run `bootstrap-console migrate` to enable actions".into())
        } else if !self.console_schema_usage {
            Some(format!(
                "audit unavailable: role {} lacks USAGE on schema bootstrap_console",
                self.current_user
            ))
        } else if !self.can_read_audit {
            Some(format!(
                "audit unavailable: role {} lacks SELECT on bootstrap_console.audit_log",
                self.current_user
            ))
        } else {
            None
        }
    }

    /// The grants every action needs that this role lacks (on a primary), one by one, each
    /// as it would be granted.
    pub(crate) fn missing_write_grants(&self) -> Vec<String> {
        self.missing_grants_for(Writes::ALL)
    }

    /// The grants an action writing `writes` needs that this role lacks: EXECUTE on its
    /// function (and on the wait its lookup makes), and reading the audit log, where request
    /// ids are looked up.
    pub(crate) fn missing_grants_for(&self, writes: Writes) -> Vec<String> {
        let audit = self.has_audit_table && self.console_schema_usage;
        let function = writes.function;
        let execute = self
            .execute_missing
            .iter()
            .filter(|name| {
                function.is_none_or(|f| f == name.as_str()) || name.as_str() == "await_action_row"
            })
            .map(|name| format!("EXECUTE on function bootstrap_console.{name}"));
        (self.has_audit_table && !self.console_schema_usage)
            .then(|| "USAGE on schema bootstrap_console".to_string())
            .into_iter()
            .chain(execute.filter(|_| self.action_functions))
            .chain(
                (audit && !self.can_read_audit)
                    .then(|| "SELECT on bootstrap_console.audit_log".to_string()),
            )
            .collect()
    }

    /// The actions this role may not take for want of a grant, each with its sentence (empty
    /// when it may take them all).
    pub(crate) fn blocked_writes(&self) -> Vec<(Writes, String)> {
        Writes::EACH
            .into_iter()
            .filter_map(|writes| {
                let missing = self.missing_grants_for(writes);
                (!missing.is_empty()).then(|| (writes, self.lacks(&missing)))
            })
            .collect()
    }

    /// Why this role cannot act at all, if it cannot: a standby, or no action's grants. An
    /// action that alone lacks a grant leaves the others allowed ([`Self::blocked_writes`]).
    pub(crate) fn write_blocker(&self) -> Option<String> {
        if self.in_recovery {
            return Some(STANDBY.into());
        }
        (self.blocked_writes().len() == Writes::EACH.len())
            .then(|| self.lacks(&self.missing_write_grants()))
    }

    /// `role alice lacks …`: the grants this role is missing, in one sentence.
    fn lacks(&self, missing: &[String]) -> String {
        format!("role {} lacks {}", self.current_user, missing.join(", "))
    }
}
