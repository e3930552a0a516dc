//! The schema units against a real PostgreSQL: they apply (twice, where idempotent), every CHECK
//! constraint of 0009 rejects what it should, and the marker INSERT picks exactly the right spaces.

use crate::common;

use bootstrap_console::store::schema::{
    self, CONSOLE_UNITS, LEGACY_SPACE_BOOTSTRAP, LEGACY_TABLES, PLATFORM_STANDIN,
};
use common::TestDb;
use sqlx::PgPool;
use uuid::Uuid;

const LEDGER_TABLES: [&str; 3] = [
    "legacy_space_publication_bootstraps",
    "legacy_space_publication_bootstrap_items",
    "knowledge_space_mutation_leases",
];

async fn table_exists(pool: &PgPool, name: &str) -> bool {
    sqlx::query_scalar::<_, Option<String>>("SELECT to_regclass($1)::text")
        .bind(name)
        .fetch_one(pool)
        .await
        .expect("to_regclass")
        .is_some()
}

#[tokio::test]
async fn every_unit_applies_to_an_empty_database_twice_in_a_row() {
    let db = TestDb::empty().await;
    let mut conn = db.connect().await;
    for round in 1..=2 {
        schema::apply_unit(&mut conn, &PLATFORM_STANDIN)
            .await
            .unwrap_or_else(|e| panic!("stand-in, round {round}: {e}"));
        schema::apply_unit(&mut conn, &LEGACY_SPACE_BOOTSTRAP)
            .await
            .unwrap_or_else(|e| panic!("0009, round {round}: {e}"));
        for unit in CONSOLE_UNITS {
            schema::apply_unit(&mut conn, unit)
                .await
                .unwrap_or_else(|e| panic!("{}, round {round}: {e}", unit.name));
        }
    }
    for table in LEDGER_TABLES.iter().chain(LEGACY_TABLES.iter()) {
        assert!(table_exists(&db.pool, table).await, "{table} exists");
    }
    assert!(table_exists(&db.pool, "bootstrap_console.audit_log").await);
}

#[tokio::test]
async fn the_console_schema_is_applied_once_and_then_reported_present() {
    let db = TestDb::empty().await;
    let mut conn = db.connect().await;

    let first = schema::migrate_console(&mut conn).await.expect("first");
    let second = schema::migrate_console(&mut conn).await.expect("second");

    let units = vec![
        "0001_audit_log",
        "0002_audit_request_id",
        "0003_audit_action_id",
        "0004_audit_chain",
        "0005_action_rules",
    ];
    assert_eq!(first.applied, units);
    assert!(first.already_present.is_empty());
    assert!(second.applied.is_empty());
    assert_eq!(second.already_present, units);
    // Only the console's own schema: no platform table appears.
    for table in LEDGER_TABLES.iter().chain(["knowledge_spaces"].iter()) {
        assert!(
            !table_exists(&db.pool, table).await,
            "{table} must not exist"
        );
    }
    let recorded: i64 =
        sqlx::query_scalar("SELECT count(*) FROM bootstrap_console.schema_migrations")
            .fetch_one(&db.pool)
            .await
            .expect("count");
    assert_eq!(recorded, units.len() as i64);
    // The action functions name the ledger tables: they wait for the platform's migration,
    // and the next `migrate` after it installs them.
    assert_eq!(first.deferred, ["0006_action_functions"]);
    assert_eq!(second.deferred, ["0006_action_functions"]);
    schema::apply_unit(&mut conn, &PLATFORM_STANDIN)
        .await
        .expect("stand-in");
    schema::apply_unit(&mut conn, &LEGACY_SPACE_BOOTSTRAP)
        .await
        .expect("0009");
    let third = schema::migrate_console(&mut conn).await.expect("third");
    assert_eq!(third.applied, ["0006_action_functions"]);
    assert!(third.deferred.is_empty());
    let installed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_proc WHERE pronamespace = 'bootstrap_console'::regnamespace \
           AND proname IN ('retry_bootstrap', 'cancel_bootstrap', 'remove_mutation_lease')",
    )
    .fetch_one(&db.pool)
    .await
    .expect("functions");
    assert_eq!(installed, 3);
}

#[tokio::test]
async fn the_migration_0009_file_is_the_seed_unchanged() {
    // The seed travels beside the repository; when it is there, the embedded copy must match it.
    let seed = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/seed/0009_legacy_space_bootstrap.postgres.sql");
    if let Ok(text) = std::fs::read_to_string(&seed) {
        assert_eq!(text, LEGACY_SPACE_BOOTSTRAP.sql);
    }
    for fragment in [
        "legacy_space_bootstraps_lease_state_ck",
        "legacy_space_bootstrap_items_next_idx",
        "ON CONFLICT (\"tenant_id\", \"knowledge_space_id\") DO NOTHING",
    ] {
        assert!(LEGACY_SPACE_BOOTSTRAP.sql.contains(fragment), "{fragment}");
    }
}

// ---------------------------------------------------------------- CHECK constraints

/// A space with one publication, for rows whose foreign keys need them.
struct Space {
    tenant: String,
    id: Uuid,
    publication: Uuid,
}

async fn new_space(pool: &PgPool, tenant: &str) -> Space {
    let (id, publication) = common::fixture::space(pool, tenant).await;
    Space {
        tenant: tenant.to_string(),
        id,
        publication,
    }
}

/// Column → SQL literal for a bootstrap row that satisfies every constraint in `run_state`.
fn valid_bootstrap(space: &Space, run_state: &str) -> Vec<(&'static str, String)> {
    let mut row = vec![
        ("id", format!("'{}'", Uuid::new_v4())),
        ("tenant_id", format!("'{}'", space.tenant)),
        ("knowledge_space_id", format!("'{}'", space.id)),
        (
            "idempotency_key",
            "'legacy-space-publication-bootstrap-v1'".into(),
        ),
        ("checkpoint", "'rebuilding'".into()),
        ("run_state", format!("'{run_state}'")),
        ("total_documents", "3".into()),
        ("completed_documents", "1".into()),
        ("row_version", "4".into()),
        ("snapshot_metadata", "'{}'::jsonb".into()),
        ("created_at", "now()".into()),
        ("updated_at", "now()".into()),
    ];
    match run_state {
        "running" => row.extend([
            ("worker_id", "'worker-1'".into()),
            ("lease_token", format!("'{}'", Uuid::new_v4())),
            ("lease_expires_at", "now() + interval '30 seconds'".into()),
            ("heartbeat_at", "now()".into()),
        ]),
        "succeeded" => {
            set(&mut row, "checkpoint", "'published'");
            set(&mut row, "completed_documents", "3");
            row.extend([
                ("completed_at", "now()".into()),
                (
                    "published_publication_id",
                    format!("'{}'", space.publication),
                ),
                ("published_fingerprint", "'fp-fixture'".into()),
                ("published_head_revision", "1".into()),
            ]);
        }
        "failed" => row.extend([
            ("completed_at", "now()".into()),
            ("last_error_code", "'compile_failed'".into()),
            ("last_error_message", "'boom'".into()),
        ]),
        "canceled" => row.push(("completed_at", "now()".into())),
        _ => {}
    }
    row
}

fn set(row: &mut Vec<(&'static str, String)>, column: &'static str, value: &str) {
    row.retain(|(name, _)| *name != column);
    if value != "DEFAULT" {
        row.push((column, value.to_string()));
    }
}

fn insert_sql(table: &str, row: &[(&'static str, String)]) -> String {
    let columns: Vec<String> = row.iter().map(|(c, _)| format!("\"{c}\"")).collect();
    let values: Vec<&str> = row.iter().map(|(_, v)| v.as_str()).collect();
    format!(
        "INSERT INTO \"{table}\" ({}) VALUES ({})",
        columns.join(", "),
        values.join(", ")
    )
}

async fn violated_constraint(pool: &PgPool, sql: String) -> Option<String> {
    match sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(pool).await {
        Ok(_) => None,
        Err(sqlx::Error::Database(e)) => {
            assert_eq!(e.code().as_deref(), Some("23514"), "a CHECK violation: {e}");
            e.constraint().map(str::to_string)
        }
        Err(e) => panic!("unexpected error: {e}"),
    }
}

#[tokio::test]
async fn a_valid_bootstrap_row_is_accepted_in_every_run_state() {
    let db = TestDb::migrated().await;
    for run_state in ["queued", "running", "succeeded", "failed", "canceled"] {
        let space = new_space(&db.pool, "tenant-a").await;
        let sql = insert_sql(
            "legacy_space_publication_bootstraps",
            &valid_bootstrap(&space, run_state),
        );
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&db.pool)
            .await
            .unwrap_or_else(|e| panic!("valid {run_state} row rejected: {e}"));
    }
    // An empty space may succeed without a publication.
    let space = new_space(&db.pool, "tenant-a").await;
    let mut row = valid_bootstrap(&space, "succeeded");
    for column in [
        "published_publication_id",
        "published_fingerprint",
        "published_head_revision",
    ] {
        set(&mut row, column, "DEFAULT");
    }
    set(&mut row, "total_documents", "0");
    set(&mut row, "completed_documents", "0");
    let sql = insert_sql("legacy_space_publication_bootstraps", &row);
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&db.pool)
        .await
        .expect("an empty succeeded row is valid");
}

/// (constraint, base run state, column overrides)
type CheckCase = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

#[tokio::test]
async fn every_bootstrap_check_constraint_rejects_a_violating_row() {
    // (constraint, base run state, column overrides)
    let cases: &[CheckCase] = &[
        (
            "legacy_space_bootstraps_checkpoint_ck",
            "queued",
            &[("checkpoint", "'archived'")],
        ),
        (
            "legacy_space_bootstraps_run_state_ck",
            "queued",
            &[("run_state", "'paused'")],
        ),
        (
            "legacy_space_bootstraps_counts_ck",
            "queued",
            &[("total_documents", "-1"), ("completed_documents", "-1")],
        ),
        (
            "legacy_space_bootstraps_counts_ck",
            "queued",
            &[("completed_documents", "-1")],
        ),
        (
            "legacy_space_bootstraps_counts_ck",
            "queued",
            &[("completed_documents", "4")],
        ),
        (
            "legacy_space_bootstraps_row_version_ck",
            "queued",
            &[("row_version", "-1")],
        ),
        (
            "legacy_space_bootstraps_lease_state_ck",
            "running",
            &[("worker_id", "DEFAULT")],
        ),
        (
            "legacy_space_bootstraps_lease_state_ck",
            "running",
            &[("heartbeat_at", "DEFAULT")],
        ),
        (
            "legacy_space_bootstraps_lease_state_ck",
            "queued",
            &[("lease_token", "gen_random_uuid()")],
        ),
        (
            "legacy_space_bootstraps_lease_state_ck",
            "failed",
            &[("worker_id", "'worker-1'")],
        ),
        (
            "legacy_space_bootstraps_terminal_ck",
            "failed",
            &[("completed_at", "DEFAULT")],
        ),
        (
            "legacy_space_bootstraps_terminal_ck",
            "queued",
            &[("completed_at", "now()")],
        ),
        (
            "legacy_space_bootstraps_publication_ck",
            "succeeded",
            &[("checkpoint", "'verifying'")],
        ),
        (
            "legacy_space_bootstraps_publication_ck",
            "succeeded",
            &[("completed_documents", "2")],
        ),
        (
            "legacy_space_bootstraps_publication_ck",
            "succeeded",
            &[
                ("published_publication_id", "DEFAULT"),
                ("published_fingerprint", "DEFAULT"),
            ],
        ),
        (
            "legacy_space_bootstraps_publication_ck",
            "succeeded",
            &[("published_head_revision", "0")],
        ),
        (
            "legacy_space_bootstraps_lease_token_ck",
            "running",
            &[("lease_token", "'00000000-0000-0000-0000-000000000000'")],
        ),
    ];
    let db = TestDb::migrated().await;
    for (constraint, run_state, overrides) in cases {
        let space = new_space(&db.pool, "tenant-a").await;
        let mut row = valid_bootstrap(&space, run_state);
        for (column, value) in *overrides {
            let column: &'static str = row
                .iter()
                .map(|(c, _)| *c)
                .chain([
                    "worker_id",
                    "lease_token",
                    "completed_at",
                    "published_publication_id",
                ])
                .find(|c| c == column)
                .unwrap_or_else(|| panic!("unknown column {column}"));
            set(&mut row, column, value);
        }
        let sql = insert_sql("legacy_space_publication_bootstraps", &row);
        let violated = violated_constraint(&db.pool, sql).await;
        assert_eq!(
            violated.as_deref(),
            Some(*constraint),
            "{run_state} row with {overrides:?}"
        );
    }
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM legacy_space_publication_bootstraps")
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert_eq!(rows, 0, "no violating row was stored");
}

#[tokio::test]
async fn every_item_check_constraint_rejects_a_violating_row() {
    let db = TestDb::migrated().await;
    let space = new_space(&db.pool, "tenant-a").await;
    let bootstrap = valid_bootstrap(&space, "queued");
    let bootstrap_id = bootstrap[0].1.clone();
    sqlx::raw_sql(sqlx::AssertSqlSafe(insert_sql(
        "legacy_space_publication_bootstraps",
        &bootstrap,
    )))
    .execute(&db.pool)
    .await
    .expect("bootstrap");
    let item = |ordinal: &str, version: &str, status: &str| {
        vec![
            ("bootstrap_id", bootstrap_id.clone()),
            ("document_asset_id", format!("'{}'", Uuid::new_v4())),
            ("document_version", version.to_string()),
            ("document_sha256", format!("'{}'", "a".repeat(64))),
            ("ordinal", ordinal.to_string()),
            ("status", status.to_string()),
            ("created_at", "now()".to_string()),
            ("updated_at", "now()".to_string()),
        ]
    };
    let table = "legacy_space_publication_bootstrap_items";
    for status in ["'pending'", "'running'", "'succeeded'", "'failed'"] {
        let ordinal = ["'pending'", "'running'", "'succeeded'", "'failed'"]
            .iter()
            .position(|s| s == &status)
            .expect("status")
            .to_string();
        sqlx::raw_sql(sqlx::AssertSqlSafe(insert_sql(
            table,
            &item(&ordinal, "1", status),
        )))
        .execute(&db.pool)
        .await
        .unwrap_or_else(|e| panic!("valid {status} item rejected: {e}"));
    }
    let cases = [
        (
            "legacy_space_bootstrap_items_version_ck",
            item("10", "0", "'pending'"),
        ),
        (
            "legacy_space_bootstrap_items_ordinal_ck",
            item("-1", "1", "'pending'"),
        ),
        (
            "legacy_space_bootstrap_items_status_ck",
            item("11", "1", "'done'"),
        ),
    ];
    for (constraint, row) in cases {
        let violated = violated_constraint(&db.pool, insert_sql(table, &row)).await;
        assert_eq!(violated.as_deref(), Some(constraint));
    }
}

// ---------------------------------------------------------------- the marker INSERT

#[derive(Debug)]
struct MarkerCase {
    label: &'static str,
    tenant: &'static str,
    documents: u32,
    /// A legacy table holding a NULL-generation row.
    legacy_null_in: Option<&'static str>,
    /// A legacy table holding only a row with a generation.
    legacy_generated_in: Option<&'static str>,
    head: bool,
    expect_marker: bool,
}

fn marker_cases() -> Vec<MarkerCase> {
    let mut cases: Vec<MarkerCase> = LEGACY_TABLES
        .iter()
        .map(|table| MarkerCase {
            label: table,
            tenant: "tenant-a",
            documents: 0,
            legacy_null_in: Some(table),
            legacy_generated_in: None,
            head: false,
            expect_marker: true,
        })
        .collect();
    let base = |label, tenant| MarkerCase {
        label,
        tenant,
        documents: 0,
        legacy_null_in: None,
        legacy_generated_in: None,
        head: false,
        expect_marker: false,
    };
    cases.push(MarkerCase {
        documents: 3,
        expect_marker: true,
        ..base("documents only", "tenant-a")
    });
    cases.push(MarkerCase {
        documents: 2,
        expect_marker: true,
        ..base("second tenant with documents", "tenant-b")
    });
    cases.push(MarkerCase {
        documents: 2,
        legacy_null_in: Some("graph_entities"),
        head: true,
        ..base("head present", "tenant-a")
    });
    cases.push(MarkerCase {
        head: true,
        ..base("second tenant, head present", "tenant-b")
    });
    cases.push(base("nothing legacy: empty space", "tenant-a"));
    cases.push(MarkerCase {
        legacy_generated_in: Some("knowledge_nodes"),
        ..base("only generated rows", "tenant-b")
    });
    cases
}

async fn seed_marker_case(pool: &PgPool, case: &MarkerCase) -> Uuid {
    let space = new_space(pool, case.tenant).await;
    for n in 0..case.documents {
        sqlx::query(
            "INSERT INTO document_assets (id, tenant_id, knowledge_space_id, version, sha256) \
             VALUES ($1, $2, $3, 1, $4)",
        )
        .bind(Uuid::new_v4())
        .bind(case.tenant)
        .bind(space.id)
        .bind(format!("{n:064x}"))
        .execute(pool)
        .await
        .expect("document");
    }
    let legacy_rows = [
        (case.legacy_null_in, None),
        (case.legacy_generated_in, Some(Uuid::new_v4())),
    ];
    for (table, generation) in legacy_rows {
        if let Some(table) = table {
            let sql = format!(
                "INSERT INTO \"{table}\" (id, tenant_id, knowledge_space_id, publication_generation_id) \
                 VALUES ($1, $2, $3, $4)"
            );
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(Uuid::new_v4())
                .bind(case.tenant)
                .bind(space.id)
                .bind(generation)
                .execute(pool)
                .await
                .expect("legacy row");
        }
    }
    if case.head {
        sqlx::query(
            "INSERT INTO projection_set_publication_heads \
             (tenant_id, knowledge_space_id, publication_id, fingerprint, revision) \
             VALUES ($1, $2, $3, 'fp-fixture', 1)",
        )
        .bind(case.tenant)
        .bind(space.id)
        .bind(space.publication)
        .execute(pool)
        .await
        .expect("head");
    }
    space.id
}

#[derive(sqlx::FromRow)]
struct Marker {
    id: Uuid,
    tenant_id: String,
    checkpoint: String,
    run_state: String,
    total_documents: i32,
    completed_documents: i32,
    row_version: i32,
    idempotency_key: String,
    snapshot_metadata: serde_json::Value,
}

#[tokio::test]
async fn the_marker_insert_queues_exactly_the_spaces_without_head_that_have_legacy_state() {
    let db = TestDb::empty().await;
    let mut conn = db.connect().await;
    schema::apply_unit(&mut conn, &PLATFORM_STANDIN)
        .await
        .expect("stand-in");
    let cases = marker_cases();
    let mut spaces = Vec::new();
    for case in &cases {
        spaces.push(seed_marker_case(&db.pool, case).await);
    }

    schema::apply_unit(&mut conn, &LEGACY_SPACE_BOOTSTRAP)
        .await
        .expect("0009");

    for (case, space) in cases.iter().zip(&spaces) {
        let marker: Option<Marker> = sqlx::query_as(
            "SELECT id, tenant_id, checkpoint, run_state, total_documents, \
                    completed_documents, row_version, idempotency_key, snapshot_metadata \
             FROM legacy_space_publication_bootstraps WHERE knowledge_space_id = $1",
        )
        .bind(space)
        .fetch_optional(&db.pool)
        .await
        .expect("marker");
        match (case.expect_marker, marker) {
            (false, None) => {}
            (false, Some(_)) => panic!("{}: unexpected marker", case.label),
            (true, None) => panic!("{}: missing marker", case.label),
            (true, Some(m)) => {
                assert_eq!(
                    m.id, *space,
                    "{}: the marker id is the space id",
                    case.label
                );
                assert_eq!(m.tenant_id, case.tenant, "{}", case.label);
                assert_eq!(
                    (m.checkpoint.as_str(), m.run_state.as_str()),
                    ("pending_snapshot", "queued")
                );
                assert_eq!(
                    (m.total_documents, m.completed_documents, m.row_version),
                    (0, 0, 0),
                    "{}",
                    case.label
                );
                assert_eq!(m.idempotency_key, "legacy-space-publication-bootstrap-v1");
                assert_eq!(m.snapshot_metadata["source"], "migration-marker");
            }
        }
    }

    // Running 0009 again adds nothing.
    let before: i64 =
        sqlx::query_scalar("SELECT count(*) FROM legacy_space_publication_bootstraps")
            .fetch_one(&db.pool)
            .await
            .expect("count");
    schema::apply_unit(&mut conn, &LEGACY_SPACE_BOOTSTRAP)
        .await
        .expect("0009 again");
    let after: i64 = sqlx::query_scalar("SELECT count(*) FROM legacy_space_publication_bootstraps")
        .fetch_one(&db.pool)
        .await
        .expect("count");
    let expected = cases.iter().filter(|c| c.expect_marker).count() as i64;
    assert_eq!((before, after), (expected, expected));
}
