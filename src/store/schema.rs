//! The schema units the console embeds, and the code that applies them.
//!
//! Two kinds, kept apart on purpose:
//! * the **platform** units — the stand-in for the platform's own tables and a verbatim copy of
//!   migration 0009. Only the sandbox and the tests apply them; a real platform database gets
//!   them from the platform's own migration tooling.
//! * the **console** units — the console's own audit schema (`bootstrap_console`), applied by
//!   `bootstrap-console migrate` to any database, idempotently, and recorded in
//!   `bootstrap_console.schema_migrations`. sqlx's migrator is not used for them because it
//!   would write its `_sqlx_migrations` ledger into the platform's database, which may be the
//!   platform's own migration ledger.
//!
//! The console units, in `migrations/console/`: 0001 the audit log table, 0002 its
//! `request_id`, 0003 its unique `action_id`, 0004 the hash chain and the append-only triggers
//! (see [`crate::domain::audit_chain`]), 0005 the actions' rules (see
//! [`crate::store::rules`]), 0006 the action functions (see [`crate::store::write`]), which
//! name the ledger tables and so wait for them: a `migrate` before the platform's migration
//! 0009 leaves 0006 for the next one. An older console schema is brought forward with its
//! records kept (chained in the order of their ids). Whoever runs `migrate` owns the audit log,
//! so it must be the ledger's owner or a superuser — and, once the console's schema exists, its
//! owner; anyone else is refused with the role that must run it (exit 8).

use sqlx::{Connection, PgConnection};

/// The seven platform tables whose NULL-generation rows 0009 treats as legacy state.
pub const LEGACY_TABLES: [&str; 7] = [
    "knowledge_nodes",
    "index_projections",
    "document_outlines",
    "document_multimodal_manifests",
    "knowledge_paths",
    "graph_entities",
    "graph_relations",
];

/// One SQL file, applied in a single transaction.
#[derive(Debug, Clone, Copy)]
pub struct SchemaUnit {
    pub version: i32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Stand-in for the platform tables 0009 references (sandbox and tests only).
pub const PLATFORM_STANDIN: SchemaUnit = SchemaUnit {
    version: 1,
    name: "0001_platform_standin",
    sql: include_str!("../../migrations/platform/0001_platform_standin.sql"),
};

/// Platform migration 0009, unchanged: the three ledger tables and the marker INSERT.
pub const LEGACY_SPACE_BOOTSTRAP: SchemaUnit = SchemaUnit {
    version: 9,
    name: "0009_legacy_space_bootstrap",
    sql: include_str!("../../migrations/platform/0009_legacy_space_bootstrap.sql"),
};

/// The console's own schema, in order.
pub const CONSOLE_UNITS: &[SchemaUnit] = &[
    SchemaUnit {
        version: 1,
        name: "0001_audit_log",
        sql: include_str!("../../migrations/console/0001_audit_log.sql"),
    },
    SchemaUnit {
        version: 2,
        name: "0002_audit_request_id",
        sql: include_str!("../../migrations/console/0002_audit_request_id.sql"),
    },
    SchemaUnit {
        version: 3,
        name: "0003_audit_action_id",
        sql: include_str!("../../migrations/console/0003_audit_action_id.sql"),
    },
    SchemaUnit {
        version: 4,
        name: "0004_audit_chain",
        sql: include_str!("../../migrations/console/0004_audit_chain.sql"),
    },
    SchemaUnit {
        version: 5,
        name: "0005_action_rules",
        sql: include_str!("../../migrations/console/0005_action_rules.sql"),
    },
    SchemaUnit {
        version: 6,
        name: "0006_action_functions",
        sql: include_str!("../../migrations/console/0006_action_functions.sql"),
    },
];

/// The ledger tables as a unit that names them says them: `@bootstraps@` for the
/// schema-qualified, quoted name (found through the search path of the role that runs
/// `migrate`, as the console finds them) and `@bootstraps_oid@` for its oid, which needs no
/// quoting inside the unit's own strings; and so on for the items and the leases.
const LEDGER_PLACEHOLDERS: [(&str, &str); 3] = [
    ("bootstraps", "legacy_space_publication_bootstraps"),
    ("items", "legacy_space_publication_bootstrap_items"),
    ("leases", "knowledge_space_mutation_leases"),
];

impl SchemaUnit {
    /// Whether the unit names the ledger tables, so it can be applied only once they exist.
    pub fn names_the_ledger(&self) -> bool {
        LEDGER_PLACEHOLDERS
            .iter()
            .any(|(placeholder, _)| self.sql.contains(&format!("@{placeholder}")))
    }
}

/// The unit's SQL with the ledger tables' names and oids in place of their placeholders;
/// `None` while a ledger table is missing.
async fn with_ledger(
    conn: &mut PgConnection,
    unit: &SchemaUnit,
) -> Result<Option<String>, sqlx::Error> {
    let mut sql = unit.sql.to_string();
    for (placeholder, table) in LEDGER_PLACEHOLDERS {
        let found: Option<(String, i64)> = crate::store::sql::query_as(
            "SELECT format('%I.%I', n.nspname, c.relname), c.oid::bigint FROM pg_class c \
               JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)",
        )
        .bind(table)
        .fetch_optional(&mut *conn)
        .await?;
        let Some((qualified, oid)) = found else {
            return Ok(None);
        };
        sql = sql
            .replace(&format!("@{placeholder}_oid@"), &format!("{oid}::oid"))
            .replace(&format!("@{placeholder}@"), &qualified);
    }
    Ok(Some(sql))
}

/// Serialises concurrent `migrate` runs against one database.
const CONSOLE_MIGRATE_LOCK: &str =
    "SELECT pg_advisory_xact_lock(hashtext('bootstrap_console.migrate'))";

/// A schema unit that could not be applied.
#[derive(Debug, thiserror::Error)]
#[error("could not apply schema unit {unit}: {source}")]
pub struct SchemaError {
    pub(crate) unit: &'static str,
    #[source]
    pub(crate) source: sqlx::Error,
}

impl SchemaError {
    fn at(unit: &'static str) -> impl FnOnce(sqlx::Error) -> Self {
        move |source| Self { unit, source }
    }
}

/// What `migrate_console` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsoleMigration {
    /// Units applied by this call.
    pub applied: Vec<&'static str>,
    /// Units the database already had.
    pub already_present: Vec<&'static str>,
    /// Units that name the ledger tables, left for a later `migrate` because the ledger is
    /// not there yet.
    pub deferred: Vec<&'static str>,
}

/// Applies one unit in its own transaction.
/// A unit that names the ledger tables is applied with their names, and refused without them.
pub async fn apply_unit(conn: &mut PgConnection, unit: &SchemaUnit) -> Result<(), SchemaError> {
    let fail = SchemaError::at;
    let mut tx = conn.begin().await.map_err(fail(unit.name))?;
    let sql = if unit.names_the_ledger() {
        with_ledger(&mut tx, unit)
            .await
            .map_err(fail(unit.name))?
            .ok_or_else(|| sqlx::Error::Protocol("the ledger tables are missing".into()))
            .map_err(fail(unit.name))?
    } else {
        unit.sql.to_string()
    };
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&mut *tx)
        .await
        .map_err(fail(unit.name))?;
    tx.commit().await.map_err(fail(unit.name))
}

/// Who may run `migrate`: the owner of the ledger (or a superuser), who then owns the audit
/// log; and, once the console's schema exists, only its owner. A console role that owns the
/// audit log could disable the triggers that keep it append-only.
const MIGRATE_RIGHTS_SQL: &str = "\
WITH me AS (SELECT rolname::text AS name, rolsuper FROM pg_roles WHERE rolname = current_user),
ledger AS (SELECT relowner FROM pg_class
            WHERE oid = to_regclass('legacy_space_publication_bootstraps')),
console AS (SELECT nspowner FROM pg_namespace WHERE nspname = 'bootstrap_console'),
audit AS (SELECT c.relowner FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'bootstrap_console' AND c.relname = 'audit_log')
SELECT me.name, me.rolsuper,
       (SELECT pg_get_userbyid(relowner)::text FROM ledger) AS ledger_owner,
       coalesce((SELECT pg_has_role(relowner, 'MEMBER') FROM ledger), true) AS owns_ledger,
       (SELECT pg_get_userbyid(nspowner)::text FROM console) AS console_owner,
       coalesce((SELECT pg_has_role(nspowner, 'MEMBER') FROM console), true)
         AND coalesce((SELECT pg_has_role(relowner, 'MEMBER') FROM audit), true) AS owns_console,
       has_database_privilege(current_database(), 'CREATE') AS may_create_schema,
       current_database()::text AS database
FROM me";

/// Who runs `migrate`, and what it owns or may do (names as the catalog has them).
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct MigrateRights {
    pub name: String,
    pub(crate) rolsuper: bool,
    pub(crate) ledger_owner: Option<String>,
    pub(crate) owns_ledger: bool,
    pub(crate) console_owner: Option<String>,
    pub(crate) owns_console: bool,
    pub(crate) may_create_schema: bool,
    pub(crate) database: String,
}

/// Who is running `migrate`, and whether the role may.
pub(crate) async fn migrate_rights(conn: &mut PgConnection) -> Result<MigrateRights, sqlx::Error> {
    let mut tx = conn.begin().await?;
    let rights = crate::store::sql::query_as(MIGRATE_RIGHTS_SQL)
        .fetch_one(&mut *tx)
        .await;
    tx.rollback().await?;
    rights
}

/// Applies the console's own schema units that the database does not have yet, all in one
/// transaction. Never touches a platform table.
pub async fn migrate_console(conn: &mut PgConnection) -> Result<ConsoleMigration, SchemaError> {
    let fail = SchemaError::at("console schema");
    let mut tx = conn.begin().await.map_err(fail)?;
    crate::store::sql::query(CONSOLE_MIGRATE_LOCK)
        .execute(&mut *tx)
        .await
        .map_err(SchemaError::at("console schema"))?;
    let ledger: Option<String> = crate::store::sql::query_scalar(
        "SELECT to_regclass('bootstrap_console.schema_migrations')::text",
    )
    .fetch_one(&mut *tx)
    .await
    .map_err(SchemaError::at("console schema"))?;
    let present: Vec<i32> = match ledger {
        Some(_) => crate::store::sql::query_scalar(
            "SELECT version FROM bootstrap_console.schema_migrations",
        )
        .fetch_all(&mut *tx)
        .await
        .map_err(SchemaError::at("console schema"))?,
        None => Vec::new(),
    };
    let mut report = ConsoleMigration::default();
    for unit in CONSOLE_UNITS {
        if present.contains(&unit.version) {
            report.already_present.push(unit.name);
            continue;
        }
        let sql = if unit.names_the_ledger() {
            match with_ledger(&mut tx, unit)
                .await
                .map_err(SchemaError::at(unit.name))?
            {
                Some(sql) => sql,
                None => {
                    report.deferred.push(unit.name);
                    continue;
                }
            }
        } else {
            unit.sql.to_string()
        };
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&mut *tx)
            .await
            .map_err(SchemaError::at(unit.name))?;
        crate::store::sql::query(
            "INSERT INTO bootstrap_console.schema_migrations (version, name) VALUES ($1, $2) \
             ON CONFLICT (version) DO NOTHING",
        )
        .bind(unit.version)
        .bind(unit.name)
        .execute(&mut *tx)
        .await
        .map_err(SchemaError::at(unit.name))?;
        report.applied.push(unit.name);
    }
    tx.commit()
        .await
        .map_err(SchemaError::at("console schema"))?;
    Ok(report)
}

/// Everything a sandbox or test database needs: the platform stand-in, 0009 (which creates the
/// markers for whatever spaces exist at that moment) and the console schema.
pub async fn apply_sandbox_schema(conn: &mut PgConnection) -> Result<(), SchemaError> {
    apply_unit(conn, &PLATFORM_STANDIN).await?;
    apply_unit(conn, &LEGACY_SPACE_BOOTSTRAP).await?;
    migrate_console(conn).await?;
    Ok(())
}

/// Whether a table (resolved through the search path) exists.
pub(crate) async fn relation_exists(
    conn: &mut PgConnection,
    name: &str,
) -> Result<bool, sqlx::Error> {
    crate::store::sql::query_scalar("SELECT to_regclass($1) IS NOT NULL")
        .bind(name)
        .fetch_one(conn)
        .await
}

/// How many bootstraps the ledger holds (0 when there is no ledger table).
pub(crate) async fn ledger_size(conn: &mut PgConnection) -> Result<i64, sqlx::Error> {
    if !relation_exists(conn, "legacy_space_publication_bootstraps").await? {
        return Ok(0);
    }
    crate::store::sql::query_scalar("SELECT count(*) FROM legacy_space_publication_bootstraps")
        .fetch_one(conn)
        .await
}
