//! Through PgBouncer, in session and in transaction pooling, with its default configuration
//! (no `ignore_startup_parameters`): every command, the live console's actions, a row lock, the
//! pooler's own errors, and a pooler entry that forces the user.

use crate::common;

use std::time::Duration;

use bootstrap_console::sandbox::{PoolMode, PoolerConfig, PrivatePooler};
use bootstrap_console::store::StoreError;
use common::TestDb;
use common::cli::{on_url, stderr, stdout};
use common::fixture::{self, JobSpec};
use common::pty::Console;
use sqlx::{ConnectOptions, Connection};

const MODES: [PoolMode; 2] = [PoolMode::Transaction, PoolMode::Session];

async fn pooler(db: &TestDb, mode: PoolMode) -> PrivatePooler {
    db.pooler(PoolerConfig::new(mode, &["postgres"])).await
}

/// `args` through the pooler; the output when it exits `code`, else a failure that says why.
fn expect(url: &str, args: &[&str], code: i32, pooler: &PrivatePooler) -> String {
    let output = on_url(url, args);
    assert_eq!(
        output.status.code(),
        Some(code),
        "{args:?}: {}{}\npgbouncer: {}",
        stdout(&output),
        stderr(&output),
        pooler.log()
    );
    stdout(&output)
}

/// Every command, as an operator role made by `grants` (which writes only through the
/// database's action functions), through PgBouncer in both modes.
#[tokio::test(flavor = "multi_thread")]
async fn every_command_works_through_pgbouncer_in_both_modes() {
    for mode in MODES {
        let db = TestDb::migrated().await;
        let failed = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
        let running = fixture::job(&db.pool, &JobSpec::new("tenant-a", "running")).await;
        let queued = fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
        let lease = fixture::lease(&db.pool, "tenant-a", queued.space, 3600).await;
        let (_, ops) = crate::least_privilege::person_with(&db, "pooled", &[]).await;
        let pooler = db.pooler(PoolerConfig::new(mode, &[ops.as_str()])).await;
        let url = db.url_through(&pooler, &ops);

        let status = expect(&url, &["status", "--json"], 1, &pooler);
        let status: serde_json::Value = serde_json::from_str(&status).expect("JSON");
        assert_eq!(status["spaces"].as_array().expect("spaces").len(), 3);
        expect(&url, &["status"], 1, &pooler);
        let check = on_url(&url, &["check", "--json"]);
        assert!(
            matches!(check.status.code(), Some(0 | 1)),
            "{mode:?} check: {}{}",
            stdout(&check),
            stderr(&check)
        );
        serde_json::from_slice::<serde_json::Value>(&check.stdout).expect("check JSON");

        let space = failed.space.to_string();
        let retried = expect(
            &url,
            &["retry", &space, "--reason", "pooled", "--yes"],
            0,
            &pooler,
        );
        assert!(retried.contains("applied"), "{retried}");
        // The same request again: applied once, never twice.
        let request = retried
            .lines()
            .find_map(|l| l.strip_prefix("request "))
            .unwrap_or_else(|| panic!("a request line in {retried}"))
            .trim()
            .to_string();
        let again = expect(
            &url,
            &[
                "retry",
                &space,
                "--reason",
                "pooled",
                "--yes",
                "--request-id",
                &request,
            ],
            0,
            &pooler,
        );
        assert!(again.contains("already applied"), "{mode:?}: {again}");
        let space = running.space.to_string();
        expect(
            &url,
            &["cancel", &space, "--reason", "pooled", "--yes"],
            0,
            &pooler,
        );
        let lease = lease.to_string();
        expect(
            &url,
            &["lease", "remove", &lease, "--reason", "pooled", "--yes"],
            0,
            &pooler,
        );
        let verified = expect(&url, &["audit", "verify"], 0, &pooler);
        assert!(verified.contains("3 records"), "{verified}");

        let states: Vec<String> = sqlx::query_scalar(
            "SELECT run_state FROM legacy_space_publication_bootstraps ORDER BY id",
        )
        .fetch_all(&db.pool)
        .await
        .expect("states");
        let mut expected: Vec<(uuid::Uuid, &str)> = vec![
            (failed.bootstrap, "queued"),
            (running.bootstrap, "canceled"),
            (queued.bootstrap, "queued"),
        ];
        expected.sort();
        let expected: Vec<String> = expected.iter().map(|(_, s)| s.to_string()).collect();
        assert_eq!(states, expected, "{mode:?}");
        assert_eq!(fixture::audit_count(&db.pool).await, 3, "{mode:?}");
        assert_eq!(fixture::lease_count(&db.pool).await, 0, "{mode:?}");
    }
}

/// Consoles racing through one transaction pooler, whose server connections each serve
/// several of them in turn, as an operator role made by `grants`: every applied action has
/// exactly one audit record, and no statement of one console ever runs in another's
/// transaction.
#[tokio::test(flavor = "multi_thread")]
async fn racing_actions_through_a_transaction_pooler_match_their_audit_records() {
    let db = TestDb::migrated().await;
    for _ in 0..12 {
        fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    }
    // As an operator role made by `grants`: every write is the database's function.
    let (_, ops) = crate::least_privilege::person_with(&db, "racer", &[]).await;
    let pooler = db
        .pooler(PoolerConfig {
            pool_size: Some(2),
            ..PoolerConfig::new(PoolMode::Transaction, &[ops.as_str()])
        })
        .await;
    let url = db.url_through(&pooler, &ops);
    let runs: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                on_url(
                    &url,
                    &["retry", "--state", "failed", "--reason", "race", "--yes"],
                )
            })
        })
        .collect();
    for run in runs {
        let output = run.join().expect("a run");
        // A run that found every space already retried by the others is refused (3).
        assert!(
            matches!(output.status.code(), Some(0 | 3)),
            "{}{}\npgbouncer: {}",
            stdout(&output),
            stderr(&output),
            pooler.log()
        );
        assert!(
            !stderr(&output).contains("42P05") && !stdout(&output).contains("42P05"),
            "{}",
            stderr(&output)
        );
    }
    let (queued, audits): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM legacy_space_publication_bootstraps \
                 WHERE run_state = 'queued'), \
                (SELECT count(*) FROM bootstrap_console.audit_log)",
    )
    .fetch_one(&db.pool)
    .await
    .expect("counts");
    assert_eq!(queued, 12, "every failed space was retried");
    assert_eq!(audits, 12, "each retry has exactly one audit record");
    let verified = expect(&url, &["audit", "verify"], 0, &pooler);
    assert!(verified.contains("12 records"), "{verified}");
}

/// A row held by another transaction: the action through the pooler waits the lock timeout
/// (which `SET LOCAL` carried through the pooler), not the apply deadline, and writes nothing
/// (exit 4, as a failed statement).
#[tokio::test(flavor = "multi_thread")]
async fn a_held_row_is_refused_after_the_lock_timeout_through_the_pooler() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    for mode in MODES {
        let pooler = pooler(&db, mode).await;
        let url = db.url_through(&pooler, "postgres");
        let holder = fixture::hold_row(&db.pool, job.bootstrap).await;
        let space = job.space.to_string();
        let output = on_url(
            &url,
            &[
                "retry",
                &space,
                "--reason",
                "held",
                "--yes",
                "--apply-deadline-secs",
                "60",
            ],
        );
        holder.rollback().await.expect("let go");
        let said = format!("{}{}", stdout(&output), stderr(&output));
        assert_eq!(output.status.code(), Some(4), "{mode:?}: {said}");
        assert!(said.contains("past the lock timeout"), "{mode:?}: {said}");
        assert!(said.contains("held by pid"), "the holder is named: {said}");
        assert!(!said.contains("deadline"), "{mode:?}: {said}");
        assert_eq!(fixture::audit_count(&db.pool).await, 0);
    }
}

/// What PgBouncer itself says is said as the pooler's, not as "cannot reach the database": a
/// transaction it ended for sitting idle (its own `idle_transaction_timeout`), and a login it
/// refused.
#[tokio::test(flavor = "multi_thread")]
async fn the_pooler_is_named_when_it_ends_a_transaction_or_refuses_a_login() {
    let db = TestDb::migrated().await;
    let mut config = PoolerConfig::new(PoolMode::Transaction, &["postgres"]);
    config
        .settings
        .push(("idle_transaction_timeout".into(), "1".into()));
    let pooler = db.pooler(config).await;
    // Over TCP, as PgBouncer is deployed: on a Unix socket the client's next write meets the
    // closed socket before it reads what PgBouncer said.
    let url = pooler.tcp_url("postgres", &db.name);
    let options: sqlx::postgres::PgConnectOptions = url.parse().expect("URL");
    let mut conn = options
        .extra_float_digits(None)
        .connect()
        .await
        .expect("through the pooler");
    sqlx::raw_sql("BEGIN")
        .execute(&mut conn)
        .await
        .expect("begin");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let error = sqlx::raw_sql("SELECT 1")
        .execute(&mut conn)
        .await
        .expect_err("the pooler ended the idle transaction");
    let said = StoreError::from(error).to_string();
    assert!(
        said.starts_with("the connection pooler in front of the database said: "),
        "{said}"
    );
    assert!(said.contains("idle transaction timeout"), "{said}");
    let _ = conn.close().await;

    let refused = on_url(&pooler.tcp_url("nobody", &db.name), &["status"]);
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(4), "{err}");
    assert!(err.contains("connection pooler"), "{err}");
    assert!(!err.contains("cannot reach"), "{err}");
    assert!(err.contains("auth_file"), "{err}");
}

/// A pooler entry that logs every client in as another user: the console says so at connect.
#[tokio::test(flavor = "multi_thread")]
async fn a_pooler_that_forces_the_user_is_named_at_connect() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    let mut config = PoolerConfig::new(PoolMode::Transaction, &["postgres", "observer"]);
    config
        .forced_users
        .push(("forced".into(), db.name.clone(), "postgres".into()));
    let pooler = db.pooler(config).await;
    let url = pooler.url("observer", "forced");
    let output = on_url(&url, &["status"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("logged in as observer but the database says this session is postgres"),
        "{err}"
    );
    // Logged in as the user the server sees: nothing to say.
    let direct = on_url(&db.url_through(&pooler, "postgres"), &["status"]);
    assert!(stderr(&direct).is_empty(), "{}", stderr(&direct));
}

/// The live console through a pooler in each mode: the board, and an action confirmed by keys.
#[tokio::test(flavor = "multi_thread")]
async fn the_live_console_acts_through_pgbouncer_in_both_modes() {
    for mode in MODES {
        let db = TestDb::migrated().await;
        let failed = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
        fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
        let pooler = pooler(&db, mode).await;
        let url = db.url_through(&pooler, "postgres");
        let mut console = Console::start(&["watch", "--database-url", &url], &[], 100, 30);
        console.wait_ready("READ-WRITE", 20);
        console.wait_for("FAILED", 20);
        // The failed space comes first in attention order.
        console.send("r");
        console.wait_for("will change", 10);
        console.reason_and_yes("through the pooler");
        console.wait_for("retry applied", 15);
        let run_state: String = sqlx::query_scalar(
            "SELECT run_state FROM legacy_space_publication_bootstraps WHERE id = $1",
        )
        .bind(failed.bootstrap)
        .fetch_one(&db.pool)
        .await
        .expect("state");
        assert_eq!(run_state, "queued", "{mode:?}");
        assert_eq!(fixture::audit_count(&db.pool).await, 1, "{mode:?}");
        console.send("\r");
        console.send("q");
        assert_eq!(console.wait_exit(10), 0, "{mode:?}");
    }
}

/// The rehearsal tools through a transaction pooler: `fixture` and `simulate` run every
/// statement inside a transaction (a pooler may run an unnamed statement's two halves on
/// different server connections otherwise) and set nothing for the session.
#[tokio::test(flavor = "multi_thread")]
async fn fixture_and_simulate_work_through_a_transaction_pooler() {
    let db = TestDb::empty().await;
    let pooler = pooler(&db, PoolMode::Transaction).await;
    let url = db.url_through(&pooler, "postgres");
    expect(
        &url,
        &[
            "fixture",
            "--spaces",
            "200",
            "--tenants",
            "4",
            "--items-per-space",
            "3",
            // Most unfinished spaces queued, so the simulated workers have work to claim.
            "--workers",
            "10",
            "--create-standin",
        ],
        0,
        &pooler,
    );
    let before: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM legacy_space_publication_bootstraps WHERE checkpoint <> 'pending_snapshot'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("ledger");
    let simulated = expect(
        &url,
        &[
            "simulate",
            "--no-seed",
            "--duration-secs",
            "6",
            "--time-scale",
            "0.1",
            "--report-every",
            "1",
            "--no-faults",
        ],
        0,
        &pooler,
    );
    assert!(simulated.contains("readable"), "{simulated}");
    let after: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM legacy_space_publication_bootstraps WHERE checkpoint <> 'pending_snapshot'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("ledger");
    assert!(
        after > before,
        "the simulated workers made progress: {before} → {after}"
    );
    let log = pooler.log();
    assert!(
        !log.contains("already exists") && !log.contains("does not exist"),
        "{log}"
    );
}
