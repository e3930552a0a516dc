//! The scale fixture, built small: the real binary on an empty rehearsal database gives the
//! documented proportions, a ledger the console reads without a single unreadable row, and a
//! rollout `simulate --no-seed` can work on. (The 100,000-space fixture itself is only built
//! by the benchmark: it takes minutes.)

use crate::common;

use std::process::Command;

use bootstrap_console::domain::report;
use bootstrap_console::domain::session::SessionOptions;
use bootstrap_console::domain::signals::Thresholds;
use common::TestDb;

const BINARY: &str = env!("CARGO_BIN_EXE_bootstrap-console");

fn run(db: &TestDb, args: &[&str]) -> std::process::Output {
    Command::new(BINARY)
        .args(args)
        .args(["--database-url", &db.url()])
        .env_remove("DATABASE_URL")
        .output()
        .expect("run the binary")
}

/// Three seconds of `simulate --no-seed` without faults, its time scaled by `time_scale`.
fn simulate(db: &TestDb, time_scale: &str) -> std::process::Output {
    run(
        db,
        &[
            "simulate",
            "--no-seed",
            "--duration-secs",
            "3",
            "--time-scale",
            time_scale,
            "--report-every",
            "1",
            "--no-faults",
        ],
    )
}

fn assert_ok(output: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[tokio::test]
async fn the_fixture_has_the_documented_proportions_and_simulate_works_on_it() {
    let db = TestDb::empty().await;
    let built = run(
        &db,
        &[
            "fixture",
            "--spaces",
            "2000",
            "--tenants",
            "40",
            "--items-per-space",
            "6",
            "--workers",
            "100",
            "--create-standin",
        ],
    );
    let stdout = assert_ok(&built);
    assert!(stdout.contains("built 2000 spaces"), "{stdout}");

    let session = db.session(SessionOptions::default()).await;
    let report = report::summarize(&session, &Thresholds::default())
        .await
        .expect("summary");
    assert!(report.unreadable.is_empty(), "{:?}", report.unreadable);
    let s = &report.summary;
    let share = |n: u32| f64::from(n) / f64::from(s.spaces);
    let states: Vec<u32> = bootstrap_console::domain::model::RunState::ALL
        .iter()
        .map(|state| {
            bootstrap_console::domain::model::Checkpoint::ALL
                .iter()
                .map(|c| s.in_state(*c, *state))
                .sum()
        })
        .collect();
    assert_eq!(s.spaces, 2000);
    // As many running as workers; queued or running, succeeded, failed, canceled: 30%, 60%,
    // 5%, 5% (within sampling).
    assert_eq!(states[1], 100, "one running job per worker: {states:?}");
    let mix = [states[0] + states[1], states[2], states[3], states[4]];
    for (n, expected) in mix.iter().zip([0.30, 0.60, 0.05, 0.05]) {
        assert!(
            (share(*n) - expected).abs() < 0.03,
            "{states:?} is not near the documented mix"
        );
    }
    // Each running job under a live lease of a minute at most, renewed by its own worker.
    let (longest, workers): (f64, i64) = sqlx::query_as(
        "SELECT extract(epoch FROM max(lease_expires_at - now()))::float8,                 count(DISTINCT worker_id)          FROM legacy_space_publication_bootstraps WHERE run_state = 'running'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("leases");
    assert!(longest <= 60.0, "{longest}");
    assert_eq!(workers, 100);
    let (tenants, leases, items_match): (i64, i64, bool) = sqlx::query_as(
        "SELECT (SELECT count(DISTINCT tenant_id) FROM legacy_space_publication_bootstraps), \
                (SELECT count(*) FROM knowledge_space_mutation_leases), \
                (SELECT bool_and(b.total_documents = (SELECT count(*) \
                   FROM legacy_space_publication_bootstrap_items i WHERE i.bootstrap_id = b.id)) \
                 FROM legacy_space_publication_bootstraps b)",
    )
    .fetch_one(&db.pool)
    .await
    .expect("shape");
    assert_eq!(tenants, 40);
    assert!((5..=45).contains(&leases), "about 1% of spaces: {leases}");
    assert!(items_match, "every captured space has its frozen items");

    // A second fixture on the same database is refused, and writes nothing.
    let again = run(&db, &["fixture", "--spaces", "10"]);
    assert_eq!(again.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&again.stderr).contains("empty rehearsal database"));

    let simulated = simulate(&db, "0.1");
    let stdout = assert_ok(&simulated);
    assert!(stdout.contains("readable"), "{stdout}");
    let after = report::summarize(&session, &Thresholds::default())
        .await
        .expect("summary");
    assert!(
        after.summary.readable > s.readable,
        "the simulated workers published spaces of the fixture"
    );
}

#[tokio::test]
async fn time_ordered_ids_share_their_first_digits_like_real_uuidv7_ids() {
    let db = TestDb::empty().await;
    let built = run(
        &db,
        &[
            "fixture",
            "--spaces",
            "300",
            "--tenants",
            "3",
            "--items-per-space",
            "2",
            "--v7-ids",
            "--create-standin",
        ],
    );
    assert_ok(&built);
    let ids: Vec<uuid::Uuid> =
        sqlx::query_scalar("SELECT id FROM legacy_space_publication_bootstraps ORDER BY id")
            .fetch_all(&db.pool)
            .await
            .expect("ids");
    assert_eq!(ids.len(), 300);
    assert!(ids.iter().all(|id| id.get_version_num() == 7));
    let prefix = |id: &uuid::Uuid| id.simple().to_string()[..8].to_string();
    assert!(
        ids.iter().all(|id| prefix(id) == prefix(&ids[0])),
        "300 ids a millisecond apart share their first 8 digits"
    );
}

/// On platform tables shaped unlike the stand-in (documents without a hash, publications with
/// a column the simulator does not write), `simulate --no-seed` says once what it cannot
/// simulate and runs the rest on the ledger: captured jobs are rebuilt up to verifying, spaces
/// still to capture are left queued.
#[tokio::test]
async fn simulate_on_tables_of_another_shape_says_what_it_leaves_out_and_runs_the_rest() {
    use common::fixture::{self, JobSpec};
    let db = TestDb::migrated().await;
    let to_capture = fixture::job(&db.pool, &JobSpec::new("acme", "queued")).await;
    let captured = fixture::job(
        &db.pool,
        &JobSpec {
            checkpoint: "rebuilding",
            items: vec!["pending", "pending"],
            ..JobSpec::new("acme", "queued")
        },
    )
    .await;
    sqlx::raw_sql(
        "ALTER TABLE document_assets DROP COLUMN sha256; \
         ALTER TABLE projection_set_publications ADD COLUMN owner text NOT NULL DEFAULT 'x'; \
         ALTER TABLE projection_set_publications ALTER COLUMN owner DROP DEFAULT",
    )
    .execute(&db.pool)
    .await
    .expect("another shape");
    let simulated = simulate(&db, "0.05");
    let stdout = assert_ok(&simulated);
    let notices: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("the platform's tables differ"))
        .collect();
    assert_eq!(notices.len(), 1, "said once:\n{stdout}");
    assert!(
        notices[0].contains("document_assets has no sha256")
            && notices[0].contains("projection_set_publications requires owner"),
        "{}",
        notices[0]
    );
    let state = |id| {
        let pool = db.pool.clone();
        async move {
            sqlx::query_as::<_, (String, String, i32)>(
                "SELECT checkpoint, run_state, completed_documents \
                 FROM legacy_space_publication_bootstraps WHERE id = $1",
            )
            .bind(id)
            .fetch_one(&pool)
            .await
            .expect("the job")
        }
    };
    assert_eq!(
        state(to_capture.bootstrap).await,
        ("pending_snapshot".to_string(), "queued".to_string(), 0),
        "nothing captured from documents of another shape"
    );
    // On a loaded machine three seconds may not be enough: more short runs go on from where
    // the last one stopped (a job it held is reclaimed once its lease runs out).
    for _ in 0..10 {
        if state(captured.bootstrap).await.0 == "verifying" {
            break;
        }
        assert_ok(&simulate(&db, "0.05"));
    }
    assert_eq!(
        state(captured.bootstrap).await,
        ("verifying".to_string(), "queued".to_string(), 2),
        "rebuilt, waiting at verifying"
    );
    let last = stdout
        .lines()
        .rev()
        .find(|l| l.contains("errors workers"))
        .expect("a report");
    assert!(last.contains("errors workers 0"), "no worker error: {last}");
}
