//! `bootstrap-console simulate` as a user runs it: the real binary against a real database.

use crate::common;

use std::process::Command;

use bootstrap_console::store::schema;
use common::TestDb;
use common::fixture;

const BINARY: &str = env!("CARGO_BIN_EXE_bootstrap-console");

fn simulate(db: &TestDb, extra: &[&str]) -> std::process::Output {
    Command::new(BINARY)
        .arg("simulate")
        .args(["--database-url", &db.url()])
        .args([
            "--tenants",
            "1",
            "--spaces",
            "4",
            "--time-scale",
            "0.1",
            "--report-every",
            "1",
        ])
        .args(extra)
        .env_remove("DATABASE_URL")
        .output()
        .expect("run the binary")
}

#[tokio::test]
async fn simulate_seeds_a_rehearsal_database_and_runs_the_rollout() {
    let db = TestDb::empty().await;
    let mut conn = db.connect().await;
    schema::apply_unit(&mut conn, &schema::PLATFORM_STANDIN)
        .await
        .expect("stand-in");

    let output = simulate(&db, &["--duration-secs", "3", "--no-faults"]);

    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("migration 0009 created"), "{stdout}");
    assert!(stdout.contains("readable"), "periodic summaries: {stdout}");
    let (markers, progressed): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE checkpoint <> 'pending_snapshot') \
         FROM legacy_space_publication_bootstraps",
    )
    .fetch_one(&db.pool)
    .await
    .expect("ledger");
    assert!(markers > 0, "0009 created markers");
    assert!(progressed > 0, "the simulated workers made progress");
}

#[tokio::test]
async fn simulate_refuses_to_seed_a_database_that_already_holds_a_ledger() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &fixture::JobSpec::new("tenant-a", "failed")).await;
    let image = fixture::ledger_image(&db.pool).await;

    let output = simulate(&db, &["--duration-secs", "1"]);

    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("already holds a ledger (1 bootstraps)"),
        "{stderr}"
    );
    assert!(stderr.contains("--no-seed"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one sentence: {stderr}");
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "nothing written"
    );
}

#[tokio::test]
async fn simulate_refuses_a_database_without_platform_tables() {
    let db = TestDb::empty().await;
    let output = simulate(&db, &["--duration-secs", "1"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("--create-standin"), "{stderr}");
    let tables: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("tables");
    assert_eq!(tables, 0, "nothing created");
}

#[tokio::test]
async fn simulate_says_when_its_workers_keep_failing_and_exits_non_zero() {
    let db = TestDb::empty().await;
    let mut conn = db.connect().await;
    schema::apply_unit(&mut conn, &schema::PLATFORM_STANDIN)
        .await
        .expect("stand-in");
    let seeded = simulate(
        &db,
        &["--duration-secs", "1", "--no-faults", "--workers", "1"],
    );
    assert!(seeded.status.success());
    // The platform's schema is not what the simulated workers expect: every write fails.
    sqlx::raw_sql(
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
           IF current_setting('application_name') = 'bootstrap-console-simulator' THEN \
             RAISE EXCEPTION 'column a.tenant_id does not exist'; \
           END IF; RETURN NEW; END $$; \
         CREATE TRIGGER refuse BEFORE UPDATE ON legacy_space_publication_bootstraps \
           FOR EACH ROW EXECUTE FUNCTION refuse();",
    )
    .execute(&db.pool)
    .await
    .expect("a schema the simulator does not expect");

    let output = simulate(
        &db,
        &[
            "--no-seed",
            "--no-faults",
            "--workers",
            "2",
            "--duration-secs",
            "60",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("every simulated worker keeps failing")
            && stderr.contains("column a.tenant_id does not exist"),
        "{stderr}"
    );
    assert!(
        stdout.contains("errors workers "),
        "the summaries count them: {stdout}"
    );
}

#[tokio::test]
async fn seeding_again_adds_spaces_without_colliding_with_held_leases() {
    let db = TestDb::empty().await;
    let mut conn = db.connect().await;
    schema::apply_unit(&mut conn, &schema::PLATFORM_STANDIN)
        .await
        .expect("stand-in");
    let first = simulate(&db, &["--duration-secs", "1", "--writer-share", "1"]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let before: i64 =
        sqlx::query_scalar("SELECT count(*) FROM legacy_space_publication_bootstraps")
            .fetch_one(&db.pool)
            .await
            .expect("count");
    let held: i64 = sqlx::query_scalar("SELECT count(*) FROM knowledge_space_mutation_leases")
        .fetch_one(&db.pool)
        .await
        .expect("leases");
    assert!(held > 0, "orphaned leases stay behind the first run");
    // Writers are placed again; spaces still holding a lease are left to their writer.
    let again = simulate(
        &db,
        &[
            "--duration-secs",
            "1",
            "--writer-share",
            "1",
            "--seed-anyway",
        ],
    );
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let after: i64 = sqlx::query_scalar("SELECT count(*) FROM legacy_space_publication_bootstraps")
        .fetch_one(&db.pool)
        .await
        .expect("count");
    assert!(after > before, "{before} → {after}");
}
