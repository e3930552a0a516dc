//! Actions in an incident, against a real PostgreSQL: a busy job can still be canceled, a
//! retry rests on the episode the operator saw, a request applies once however often it is
//! sent, and an apply whose answer never comes is resolved by its request id — never left
//! hanging, never applied behind the operator's back.

use crate::common;

use std::time::Duration;

use bootstrap_console::domain::actions::{
    self, Action, Kind, Lookup, Outcome, Refusal, RequestId, Verdict,
};
use bootstrap_console::domain::session::{Session, SessionOptions};
use bootstrap_console::sandbox::protocol::{self, StepError};
use bootstrap_console::store::write::Backend;
use common::TestDb;
use common::fixture::{self, JobSpec};

const TTL: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_cancel_holds_against_a_worker_committing_progress_during_the_confirmation() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(
        &db.pool,
        &JobSpec {
            items: vec!["pending"; 400],
            checkpoint: "snapshot_captured",
            ..JobSpec::new("tenant-a", "queued")
        },
    )
    .await;
    let mut claim = protocol::claim(&db.pool, "worker-a", TTL, 1)
        .await
        .expect("claim")
        .pop()
        .expect("claimed");
    // What the operator sees when they press `c`, and the plan they read.
    let action = Action::cancel(
        fixture::seen(&db.pool, job.bootstrap).await,
        RequestId::new(),
    );
    let plan = actions::plan(&session, &action).await.expect("plan");
    assert!(plan.verdict.is_ok(), "{:?}", plan.verdict);

    // The worker keeps committing documents while the operator types the reason.
    let pool = db.pool.clone();
    let worker = tokio::spawn(async move {
        let mut done = 0;
        loop {
            let Some(item) = protocol::next_item(&pool, &claim).await.expect("next") else {
                return (done, None);
            };
            if let Err(e) = protocol::bind_item(&pool, &mut claim, &item).await {
                return (done, Some(e));
            }
            if let Err(e) = protocol::complete_item(&pool, &mut claim, &item).await {
                return (done, Some(e));
            }
            done += 1;
        }
    });
    let seen = action
        .seen_bootstrap()
        .expect("a bootstrap")
        .completed_documents;
    common::until("the worker committed documents", 30, || async {
        common::completed_documents(&db.pool, job.bootstrap).await > seen
    })
    .await;
    // The dialog's re-plan says what moved and that the decision still holds.
    let replanned = actions::plan(&session, &action).await.expect("plan");
    assert!(replanned.verdict.is_ok(), "{:?}", replanned.verdict);
    let moved = replanned.meanwhile.expect("the worker moved");
    assert!(moved.ends_with("; still running"), "{moved}");
    let outcome = actions::apply(&session, &action, "stop: bad source data")
        .await
        .expect("apply");

    let Outcome::Applied(applied) = outcome else {
        panic!("a busy job must be cancellable: {outcome:?}")
    };
    let meanwhile = applied.meanwhile.expect("the worker moved meanwhile");
    assert!(
        meanwhile.starts_with("since you looked: ")
            && meanwhile.contains("progress 0 → ")
            && !meanwhile.contains("still"),
        "{meanwhile}"
    );
    let (done, stopped) = worker.await.expect("worker");
    assert!(done > 0, "the worker made progress during the confirmation");
    assert!(
        matches!(stopped, Some(StepError::LostLease(id)) if id == job.bootstrap),
        "the cancel fenced the worker out: {stopped:?}"
    );
    let (state, code): (String, Option<String>) = sqlx::query_as(
        "SELECT run_state, last_error_code FROM legacy_space_publication_bootstraps WHERE id = $1",
    )
    .bind(job.bootstrap)
    .fetch_one(&db.pool)
    .await
    .expect("row");
    assert_eq!(
        (state.as_str(), code.as_deref()),
        ("canceled", Some("operator_canceled"))
    );
}

#[tokio::test]
async fn a_retry_holds_against_unrelated_writes_and_refuses_a_new_episode() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;

    // An unrelated write to the row (same failed episode): the retry still applies.
    let touched = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let retry = Action::retry(
        fixture::seen(&db.pool, touched.bootstrap).await,
        RequestId::new(),
    );
    sqlx::query(
        "UPDATE legacy_space_publication_bootstraps \
         SET row_version = row_version + 1, updated_at = now() WHERE id = $1",
    )
    .bind(touched.bootstrap)
    .execute(&db.pool)
    .await
    .expect("unrelated write");
    let outcome = actions::apply(&session, &retry, "compiler fixed")
        .await
        .expect("apply");
    assert!(matches!(outcome, Outcome::Applied(_)), "{outcome:?}");

    // Retried by someone else, and failed again: a new episode the operator has not seen.
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let mine = Action::retry(
        fixture::seen(&db.pool, job.bootstrap).await,
        RequestId::new(),
    );
    let theirs = Action::retry(
        fixture::seen(&db.pool, job.bootstrap).await,
        RequestId::new(),
    );
    let outcome = actions::apply(&session, &theirs, "someone else")
        .await
        .expect("their retry");
    assert!(matches!(outcome, Outcome::Applied(_)), "{outcome:?}");
    let refused = actions::apply(&session, &mine, "mine")
        .await
        .expect("apply");
    assert!(
        matches!(
            &refused,
            Outcome::Refused(r @ Refusal::RetriedMeanwhile { .. })
                if r.to_string().contains("was retried since you looked (failed → queued)")
        ),
        "{refused:?}"
    );
    let mut claim = protocol::claim(&db.pool, "worker-a", TTL, 10)
        .await
        .expect("claim")
        .into_iter()
        .find(|c| c.bootstrap_id == job.bootstrap)
        .expect("claimed the retried job");
    protocol::fail(&db.pool, &mut claim, None, "compile_failed", "again")
        .await
        .expect("fail again");
    let image = fixture::ledger_image(&db.pool).await;
    let audits = fixture::audit_count(&db.pool).await;

    let plan = actions::plan(&session, &mine).await.expect("plan");
    assert!(plan.decision_changed(), "{:?}", plan.verdict);
    let refused = actions::apply(&session, &mine, "mine")
        .await
        .expect("apply");
    let Outcome::Refused(refusal @ Refusal::NewEpisode { .. }) = refused else {
        panic!("a new episode refuses the old decision: {refused:?}")
    };
    assert!(
        refusal
            .to_string()
            .contains("was retried since you looked and is failed again"),
        "{refusal}"
    );
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "nothing written"
    );
    assert_eq!(fixture::audit_count(&db.pool).await, audits);

    // The operator confirms the new plan: decided on what is there now, it applies.
    let again = plan.replanned_action();
    assert_eq!(
        (again.request(), again.action_id()),
        (mine.request(), mine.action_id()),
        "still the same request"
    );
    let outcome = actions::apply(&session, &again, "mine, after reading the new failure")
        .await
        .expect("apply");
    assert!(matches!(outcome, Outcome::Applied(_)), "{outcome:?}");
}

#[tokio::test]
async fn a_request_sent_again_is_answered_already_applied_instead_of_a_state_refusal() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let request = RequestId::new();
    let action = Action::retry(fixture::seen(&db.pool, job.bootstrap).await, request);
    let Outcome::Applied(first) = actions::apply(&session, &action, "parser fixed")
        .await
        .expect("apply")
    else {
        panic!("the first attempt applies")
    };
    // The record carries the request as the operator saw it, and the action's own id.
    let stored: (Option<uuid::Uuid>, Option<uuid::Uuid>) = sqlx::query_as(
        "SELECT request_id, action_id FROM bootstrap_console.audit_log WHERE id = $1",
    )
    .bind(first.audit_id)
    .fetch_one(&db.pool)
    .await
    .expect("audit");
    assert_eq!(stored, (Some(request.uuid()), Some(action.action_id())));
    assert_eq!(
        action.action_id(),
        request.for_subject(Kind::Retry, job.bootstrap)
    );

    // The job is queued now, so a new retry would be refused; the same request is not.
    let plan = actions::plan(&session, &action).await.expect("plan");
    assert_eq!(plan.applied_before, Some(first.audit_id));
    let again = actions::apply(&session, &action, "parser fixed")
        .await
        .expect("apply");
    assert_eq!(
        again,
        Outcome::AlreadyApplied {
            audit_id: first.audit_id
        }
    );
    let (verdict, sentence) = actions::sentence(&action, &Ok(again), &session.names());
    assert_eq!(verdict, Verdict::Applied);
    assert!(sentence.ends_with(&format!(
        "retry already applied (audit record {})",
        first.audit_id
    )));
    assert_eq!(fixture::audit_count(&db.pool).await, 1);
    // Looking it up tells the same.
    assert_eq!(
        actions::resolve(&session, &action, None)
            .await
            .expect("lookup"),
        Lookup::Applied {
            audit_id: first.audit_id
        }
    );
    // The same request id given to another command is another request: never "already
    // applied" for what the first one did.
    let cancel = Action::cancel(fixture::seen(&db.pool, job.bootstrap).await, request);
    assert_ne!(cancel.action_id(), action.action_id());
    let plan = actions::plan(&session, &cancel).await.expect("plan");
    assert_eq!(plan.applied_before, None);
    assert!(plan.verdict.is_ok(), "{plan:?}");
}

#[tokio::test]
async fn a_row_held_by_another_transaction_is_not_applied_for_a_new_request_and_unknown_for_a_redriven_one()
 {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "running")).await;
    let seen = fixture::seen(&db.pool, job.bootstrap).await;
    // Another transaction holds the row: a long write, or a stalled earlier run.
    let holder = fixture::hold_row(&db.pool, job.bootstrap).await;
    let apply = |action: Action, deadline: Duration| {
        let session = session.clone();
        async move {
            actions::apply_bounded(
                &session,
                &action,
                "operator asked",
                deadline,
                std::future::pending(),
            )
            .await
            .expect("an answer")
        }
    };
    let found = |outcome: &Outcome| match outcome {
        Outcome::Interrupted { found, .. } => found.clone(),
        other => panic!("{other:?}"),
    };

    // A new request: this attempt is the only one, and it wrote nothing — whether the lock
    // wait ran out (5 s) or the deadline came first and its transaction was ended.
    let fresh = Action::cancel(seen.clone(), RequestId::new());
    for deadline in [Duration::from_secs(60), Duration::from_millis(500)] {
        let outcome = apply(fresh.clone(), deadline).await;
        assert_eq!(found(&outcome), Lookup::NotApplied, "{outcome:?}");
        let (verdict, sentence) = actions::sentence(&fresh, &Ok(outcome), &session.names());
        assert_eq!(verdict, Verdict::Failed);
        assert!(sentence.contains("not applied"), "{sentence}");
    }

    // A re-driven request: what holds the row may be its earlier run, which may still commit.
    let redriven = Action::cancel(seen, RequestId::from_uuid(uuid::Uuid::now_v7()));
    for deadline in [Duration::from_secs(60), Duration::from_millis(500)] {
        let outcome = apply(redriven.clone(), deadline).await;
        assert_eq!(found(&outcome), Lookup::RowLocked, "{outcome:?}");
        let (verdict, sentence) = actions::sentence(&redriven, &Ok(outcome), &session.names());
        assert_eq!(verdict, Verdict::Unknown);
        assert!(
            sentence.contains("this attempt wrote nothing, but another transaction holds the row"),
            "{sentence}"
        );
    }
    holder.rollback().await.expect("rollback");
    assert_eq!(fixture::audit_count(&db.pool).await, 0);
}

#[tokio::test]
async fn the_lookup_never_ends_a_connection_that_went_on_to_other_work() {
    let (db, session, _, action) = cancel_of("running").await;
    let mut conn = db.connect().await;
    // The abandoned transaction ended; its connection now serves another one.
    let (pid, xact_start): (i32, chrono::DateTime<chrono::Utc>) =
        sqlx::query_as("SELECT pg_backend_pid(), now()")
            .fetch_one(&mut conn)
            .await
            .expect("backend");
    sqlx::raw_sql("BEGIN")
        .execute(&mut conn)
        .await
        .expect("begin");
    sqlx::query("SELECT pg_sleep(0.01)")
        .execute(&mut conn)
        .await
        .expect("work");
    let found = actions::resolve(&session, &action, Some(Backend { pid, xact_start }))
        .await
        .expect("lookup");
    assert_eq!(found, Lookup::NotApplied);
    let alive: i32 = sqlx::query_scalar("SELECT 1")
        .fetch_one(&mut conn)
        .await
        .expect("the other work's connection is still alive");
    assert_eq!(alive, 1);
}

/// A deferred trigger that makes COMMIT of an audit record with this reason take `secs`.
async fn stall_commits(db: &TestDb, reason: &str, secs: f64) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS \
           $$ BEGIN PERFORM pg_sleep({secs}); RETURN NULL; END $$; \
         CREATE CONSTRAINT TRIGGER stall AFTER INSERT ON bootstrap_console.audit_log \
           DEFERRABLE INITIALLY DEFERRED FOR EACH ROW \
           WHEN (NEW.reason = '{reason}') EXECUTE FUNCTION stall();"
    )))
    .execute(&db.pool)
    .await
    .expect("a trigger that stalls commits");
}

/// A job in `state` and a new cancel request for it, as the operator saw it.
async fn cancel_of(state: &'static str) -> (TestDb, Session, fixture::Job, Action) {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", state)).await;
    let action = Action::cancel(
        fixture::seen(&db.pool, job.bootstrap).await,
        RequestId::new(),
    );
    (db, session, job, action)
}

/// [`cancel_of`], whose commit, given `reason`, stalls `secs`.
async fn stalled_cancel(
    reason: &str,
    secs: f64,
    state: &'static str,
) -> (TestDb, Session, fixture::Job, Action) {
    let setup = cancel_of(state).await;
    stall_commits(&setup.0, reason, secs).await;
    setup
}

#[tokio::test]
async fn an_apply_stalled_at_commit_ends_at_its_deadline_and_is_resolved_by_request_id() {
    // The commit stalls ten minutes: an answer in the test's time is the deadline's.
    let (db, session, _, action) = stalled_cancel("stall at commit", 600.0, "running").await;
    let image = fixture::ledger_image(&db.pool).await;

    let outcome = tokio::time::timeout(
        Duration::from_secs(120),
        actions::apply_bounded(
            &session,
            &action,
            "stall at commit",
            Duration::from_millis(500),
            std::future::pending(),
        ),
    )
    .await
    .expect("the operator was not kept waiting for the stalled commit")
    .expect("an answer");

    // The stalled transaction was ended, so the lookup can say for certain: not applied.
    let Outcome::Interrupted { why, found, .. } = &outcome else {
        panic!("{outcome:?}")
    };
    assert!(why.contains("deadline of 0.5s"), "{why}");
    assert_eq!(*found, Lookup::NotApplied);
    let (verdict, sentence) = actions::sentence(&action, &Ok(outcome.clone()), &session.names());
    assert_eq!(verdict, Verdict::Failed);
    assert!(sentence.contains("not applied"), "{sentence}");
    assert_eq!(fixture::ledger_image(&db.pool).await, image);
    assert_eq!(fixture::audit_count(&db.pool).await, 0);

    // Stopping the wait by hand (Esc) is the same path.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let waiting = tokio::spawn({
        let session = session.clone();
        let action = action.clone();
        async move {
            actions::apply_bounded(
                &session,
                &action,
                "stall at commit",
                Duration::from_secs(60),
                async {
                    let _ = stopped.await;
                },
            )
            .await
        }
    });
    stalled_backend(&db).await;
    let _ = stop.send(());
    let outcome = waiting.await.expect("task").expect("an answer");
    assert!(
        matches!(&outcome, Outcome::Interrupted { why, found: Lookup::NotApplied, .. } if why == "you stopped waiting"),
        "{outcome:?}"
    );
    assert_eq!(fixture::audit_count(&db.pool).await, 0);
}

/// The console's backend on `db` once it sits in a stalled commit (the deferred trigger).
async fn stalled_backend(db: &TestDb) -> Backend {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let found: Option<(i32, chrono::DateTime<chrono::Utc>)> = sqlx::query_as(
            "SELECT pid, xact_start FROM pg_stat_activity WHERE datname = current_database() \
             AND wait_event = 'PgSleep' AND application_name = 'bootstrap-console'",
        )
        .fetch_optional(&db.pool)
        .await
        .expect("activity");
        if let Some((pid, xact_start)) = found {
            return Backend { pid, xact_start };
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the commit never reached the stalling trigger"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether this process may signal `pid` (a private cluster's backend, run as root).
fn can_signal(pid: i32) -> bool {
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn signal(name: &str, pid: i32) {
    let done = std::process::Command::new("kill")
        .args([name, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(done.success(), "kill {name} {pid}");
}

#[tokio::test]
async fn a_frozen_server_is_reported_unknown_with_its_backend_and_resolved_once_it_resumes() {
    let (db, session, job, action) = stalled_cancel("freeze at commit", 1.5, "queued").await;
    let applying = tokio::spawn({
        let session = session.clone();
        let action = action.clone();
        async move {
            actions::apply_bounded(
                &session,
                &action,
                "freeze at commit",
                Duration::from_secs(1),
                std::future::pending(),
            )
            .await
        }
    });
    // The backend sits in its commit (the deferred trigger); freeze it there.
    let backend = stalled_backend(&db).await;
    let pid = backend.pid;
    assert!(
        can_signal(pid),
        "this test freezes a server process: run it as root or as the server's user, on this host"
    );
    signal("-STOP", pid);
    let outcome = applying.await.expect("task").expect("an answer");
    signal("-CONT", pid);

    let Outcome::Interrupted {
        why,
        found,
        backend: kept,
    } = &outcome
    else {
        panic!("interrupted: {outcome:?}");
    };
    assert_eq!(why, "no answer within the deadline of 1s");
    assert_eq!(found, &Lookup::StillOpen { backend_pid: pid });
    assert_eq!(
        kept.map(|b| b.pid),
        Some(pid),
        "the attempt's transaction is kept"
    );
    let (verdict, sentence) = actions::sentence(&action, &Ok(outcome), &session.names());
    assert_eq!(verdict, Verdict::Unknown);
    assert!(
        sentence.contains(&format!(
            "outcome unknown — no answer within the deadline of 1s; backend pid {pid} still open"
        )),
        "{sentence}"
    );
    // Resumed, the abandoned backend ends without committing; the lookup now knows.
    assert_eq!(
        actions::resolve(&session, &action, Some(backend))
            .await
            .expect("lookup"),
        Lookup::NotApplied
    );
    assert_eq!(fixture::audit_count(&db.pool).await, 0);
    let state: String = sqlx::query_scalar(
        "SELECT run_state FROM legacy_space_publication_bootstraps WHERE id = $1",
    )
    .bind(job.bootstrap)
    .fetch_one(&db.pool)
    .await
    .expect("row");
    assert_eq!(state, "queued");
}

#[tokio::test]
async fn a_young_lease_is_not_removed_without_force_and_its_plan_shows_the_evidence() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    fixture::lease(&db.pool, "tenant-a", job.space, 120).await;
    let lease = session.reads().leases().await.expect("leases").leases[0]
        .lease
        .clone();
    let image = fixture::ledger_image(&db.pool).await;

    let unforced = Action::remove_lease(lease.identity(), false, RequestId::new());
    let plan = actions::plan(&session, &unforced).await.expect("plan");
    assert_eq!(plan.evidence[0], "operation bulk-upload by tenant tenant-a");
    assert!(
        plan.evidence[1].starts_with("NOT an orphan suspect: held 2m0"),
        "{}",
        plan.evidence[1]
    );
    assert!(
        plan.evidence[2].starts_with("blocks space"),
        "{}",
        plan.evidence[2]
    );
    assert!(
        matches!(&plan.verdict, Err(r @ Refusal::LeaseNotOrphan { .. }) if r.to_string().contains("its writer may still be working")),
        "{:?}",
        plan.verdict
    );
    let outcome = actions::apply(&session, &unforced, "looks stuck")
        .await
        .expect("apply");
    assert!(
        matches!(outcome, Outcome::Refused(Refusal::LeaseNotOrphan { .. })),
        "{outcome:?}"
    );
    assert_eq!(fixture::ledger_image(&db.pool).await, image);

    let forced = Action::remove_lease(lease.identity(), true, RequestId::new());
    let plan = actions::plan(&session, &forced).await.expect("plan");
    assert!(plan.forced && plan.verdict.is_ok(), "{plan:?}");
    let outcome = actions::apply(&session, &forced, "the writer's pod is gone")
        .await
        .expect("apply");
    assert!(matches!(outcome, Outcome::Applied(_)), "{outcome:?}");
    assert_eq!(fixture::audit_outcomes(&db.pool).await, ["applied_forced"]);
}

/// In the live console, an action whose commit froze is shown unknown with the command that
/// settles it; once the server resumes, the console looks the request up again by itself,
/// shows what became of it in the dialog and the status line, and logs it.
#[tokio::test(flavor = "multi_thread")]
async fn the_live_console_settles_an_unknown_outcome_by_itself_once_the_server_resumes() {
    let (db, _session, _job, _) = stalled_cancel("frozen in the console", 1.5, "queued").await;
    let logs = tempfile::tempdir().expect("log dir");
    let log_dir = logs.path().to_str().expect("utf-8").to_string();
    let mut console = common::pty::Console::start(
        &[
            "watch",
            "--database-url",
            &db.url(),
            "--apply-deadline-secs",
            "1",
        ],
        &[("BOOTSTRAP_CONSOLE_LOG_DIR", &log_dir)],
        120,
        40,
    );
    console.wait_ready("READ-WRITE", 20);
    console.wait_for("queued", 20);
    console.send("c");
    console.wait_for("will change", 10);
    console.reason_and_yes("frozen in the console");
    let backend = stalled_backend(&db).await;
    assert!(
        can_signal(backend.pid),
        "this test freezes a server process: run it as root or as the server's user, on this host"
    );
    signal("-STOP", backend.pid);
    let unknown = console.wait_for("outcome unknown", 30);
    let unknown = if unknown.contains("to settle:") {
        unknown
    } else {
        console.wait_for("to settle:", 10)
    };
    signal("-CONT", backend.pid);
    assert!(unknown.contains("--request-id"), "{unknown}");
    assert!(unknown.contains("--dry-run"), "{unknown}");
    let settled = console.wait_until("the outcome to be settled", 60, |s| {
        !s.contains("outcome unknown")
            && (s.contains("not applied") || s.contains("cancel applied"))
    });
    let audits = fixture::audit_count(&db.pool).await;
    let said = if audits == 1 {
        "cancel applied"
    } else {
        "not applied"
    };
    assert!(settled.contains(said), "{audits} audit records:\n{settled}");
    let log = std::fs::read_to_string(logs.path().join("console.log")).expect("the log");
    assert!(log.contains("settled:"), "{log}");
    console.send("\r");
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}
