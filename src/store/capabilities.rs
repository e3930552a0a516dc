//! What the connected database offers, found once at connect in one query.

use sqlx::PgPool;

use super::StoreError;

/// Facts about the database that change what the console may show and do.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Capabilities {
    pub current_user: String,
    pub server_version: String,
    pub has_bootstraps: bool,
    pub has_items: bool,
    pub has_leases: bool,
    pub has_audit_table: bool,
    /// The later lease columns (`heartbeat_at`, `expires_at`) exist.
    pub lease_heartbeats: bool,
    /// The platform added an index led by `updated_at` on the bootstrap table (optional; the
    /// README recommends it): changed rows are then read through it.
    pub updated_at_index: bool,
    pub can_update_bootstraps: bool,
    pub can_update_items: bool,
    pub can_delete_leases: bool,
    pub can_insert_audit: bool,
    /// A hot standby: nothing can be written, whatever the grants say.
    pub in_recovery: bool,
}

// `has_table_privilege` with a list is true when *any* listed privilege is held, so each
// privilege is checked on its own.
const CAPABILITIES_SQL: &str = "\
WITH t AS (SELECT to_regclass('legacy_space_publication_bootstraps') AS bootstraps,
                  to_regclass('legacy_space_publication_bootstrap_items') AS items,
                  to_regclass('knowledge_space_mutation_leases') AS leases,
                  to_regclass('bootstrap_console.audit_log') AS audit)
SELECT current_user::text AS current_user,
       current_setting('server_version') AS server_version,
       t.bootstraps IS NOT NULL AS has_bootstraps,
       t.items IS NOT NULL AS has_items,
       t.leases IS NOT NULL AS has_leases,
       t.audit IS NOT NULL AS has_audit_table,
       (SELECT count(*) = 2 FROM pg_attribute
         WHERE attrelid = t.leases AND attname IN ('heartbeat_at', 'expires_at')
           AND NOT attisdropped) AS lease_heartbeats,
       EXISTS (SELECT 1 FROM pg_index i
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
               WHERE i.indrelid = t.bootstraps AND a.attname = 'updated_at'
                 AND i.indpred IS NULL AND i.indisvalid) AS updated_at_index,
       coalesce(t.bootstraps IS NOT NULL AND has_table_privilege(t.bootstraps, 'SELECT')
                 AND has_table_privilege(t.bootstraps, 'UPDATE'), false)
         AS can_update_bootstraps,
       coalesce(t.items IS NOT NULL AND has_table_privilege(t.items, 'SELECT')
                 AND has_table_privilege(t.items, 'UPDATE'), false)
         AS can_update_items,
       coalesce(t.leases IS NOT NULL AND has_table_privilege(t.leases, 'SELECT')
                 AND has_table_privilege(t.leases, 'DELETE'), false)
         AS can_delete_leases,
       coalesce(t.audit IS NOT NULL AND has_table_privilege(t.audit, 'INSERT'), false)
         AS can_insert_audit,
       pg_is_in_recovery() AS in_recovery
FROM t";

impl Capabilities {
    pub async fn detect(pool: &PgPool) -> Result<Self, StoreError> {
        Ok(sqlx::query_as::<_, Self>(CAPABILITIES_SQL)
            .fetch_one(pool)
            .await?)
    }

    /// The ledger tables that are missing, by name.
    pub fn missing_ledger_tables(&self) -> Vec<&'static str> {
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

    /// Why this role cannot act, if it cannot: `None` means every action's writes are granted.
    pub fn write_blocker(&self) -> Option<String> {
        if self.in_recovery {
            return Some("the database is a read-only standby (in recovery)".into());
        }
        let missing: Vec<&str> = [
            (
                self.can_update_bootstraps,
                "UPDATE on legacy_space_publication_bootstraps",
            ),
            (
                self.can_update_items,
                "UPDATE on legacy_space_publication_bootstrap_items",
            ),
            (
                self.can_delete_leases,
                "DELETE on knowledge_space_mutation_leases",
            ),
            (
                self.can_insert_audit || !self.has_audit_table,
                "INSERT on bootstrap_console.audit_log",
            ),
        ]
        .into_iter()
        .filter(|(granted, _)| !granted)
        .map(|(_, grant)| grant)
        .collect();
        (!missing.is_empty())
            .then(|| format!("role {} lacks {}", self.current_user, missing.join(", ")))
    }
}
