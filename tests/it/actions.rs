//! The operator actions against a real PostgreSQL: what is allowed from which run state, what
//! each writes, and every way an action is refused without writing anything.

use crate::common;

use bootstrap_console::domain::actions::{self, Action, Outcome, Refusal, RequestId};
use bootstrap_console::domain::model::MutationLease;
use bootstrap_console::domain::model::RunState;
use bootstrap_console::domain::session::Session;
use bootstrap_console::domain::session::SessionOptions;
use bootstrap_console::sandbox::protocol::{self, StepError};
use common::TestDb;
use common::fixture::{self, JobSpec};
use std::time::Duration;

const STATES: [&str; 5] = ["queued", "running", "succeeded", "failed", "canceled"];

async fn retry(db: &TestDb, job: &fixture::Job) -> Action {
    Action::retry(
        fixture::seen(&db.pool, job.bootstrap).await,
        RequestId::new(),
    )
}

async fn cancel(db: &TestDb, job: &fixture::Job) -> Action {
    Action::cancel(
        fixture::seen(&db.pool, job.bootstrap).await,
        RequestId::new(),
    )
}

/// The lease on the screen: the first of the leases view.
async fn first_lease(session: &Session) -> MutationLease {
    session.reads().leases().await.expect("leases").leases[0]
        .lease
        .clone()
}

fn remove(lease: &MutationLease, force: bool) -> Action {
    Action::remove_lease(lease.identity(), force, RequestId::new())
}

#[derive(sqlx::FromRow, Debug)]
struct JobRow {
    run_state: String,
    checkpoint: String,
    row_version: i32,
    worker_id: Option<String>,
    lease_token: Option<uuid::Uuid>,
    completed_at: Option<chrono::DateTime<chrono::Utc>>,
    last_error_code: Option<String>,
    last_error_message: Option<String>,
    total_documents: i32,
    completed_documents: i32,
}

async fn job_row(db: &TestDb, id: uuid::Uuid) -> JobRow {
    sqlx::query_as(
        "SELECT run_state, checkpoint, row_version, worker_id, lease_token, completed_at, \
                last_error_code, last_error_message, total_documents, completed_documents \
         FROM legacy_space_publication_bootstraps WHERE id = $1",
    )
    .bind(id)
    .fetch_one(&db.pool)
    .await
    .expect("job row")
}

async fn item_statuses(db: &TestDb, id: uuid::Uuid) -> Vec<(String, bool, bool)> {
    sqlx::query_as(
        "SELECT status, compilation_attempt_id IS NOT NULL, last_error IS NOT NULL \
         FROM legacy_space_publication_bootstrap_items WHERE bootstrap_id = $1 ORDER BY ordinal",
    )
    .bind(id)
    .fetch_all(&db.pool)
    .await
    .expect("items")
}

#[tokio::test]
async fn retry_and_cancel_are_allowed_exactly_from_their_run_states_and_write_what_spec_says() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    for state in STATES {
        for (name, allowed_from) in [
            ("retry", ["failed", "canceled"]),
            ("cancel", ["queued", "running"]),
        ] {
            let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", state)).await;
            let items_before = item_statuses(&db, job.bootstrap).await;
            let before = job_row(&db, job.bootstrap).await;
            let action = if name == "retry" {
                retry(&db, &job).await
            } else {
                cancel(&db, &job).await
            };
            let audits = fixture::audit_count(&db.pool).await;

            let plan = actions::plan(&session, &action).await.expect("plan");
            let outcome = actions::apply(&session, &action, "rollout incident 42")
                .await
                .expect("apply");
            let after = job_row(&db, job.bootstrap).await;
            let items_after = item_statuses(&db, job.bootstrap).await;

            if !allowed_from.contains(&state) {
                let expected = format!("is {state}, {name} needs");
                assert!(plan.verdict.is_err(), "{name} from {state}: plan refuses");
                match outcome {
                    Outcome::Refused(refusal) => {
                        assert!(refusal.to_string().contains(&expected), "{refusal}")
                    }
                    other => panic!("{name} from {state} must be refused: {other:?}"),
                }
                assert_eq!(after.row_version, before.row_version, "nothing written");
                assert_eq!(items_after, items_before);
                assert_eq!(fixture::audit_count(&db.pool).await, audits);
                continue;
            }
            assert!(
                plan.verdict.is_ok(),
                "{name} from {state}: {:?}",
                plan.verdict
            );
            let Outcome::Applied(applied) = outcome else {
                panic!("{name} from {state} must apply: {outcome:?}");
            };
            assert_eq!(fixture::audit_count(&db.pool).await, audits + 1);
            assert_eq!(after.row_version, before.row_version + 1);
            assert_eq!(
                after.checkpoint, before.checkpoint,
                "the checkpoint is kept"
            );
            assert_eq!(after.total_documents, before.total_documents);
            assert_eq!(after.completed_documents, before.completed_documents);
            assert!(
                after.worker_id.is_none() && after.lease_token.is_none(),
                "lease cleared"
            );
            assert_eq!(applied.before["run_state"], state);
            if name == "retry" {
                assert_eq!(after.run_state, "queued");
                assert!(after.completed_at.is_none());
                assert!(after.last_error_code.is_none() && after.last_error_message.is_none());
                // failed and running items back to pending, the rest untouched
                for ((b, _, _), (a, attempt, error)) in items_before.iter().zip(&items_after) {
                    if b == "failed" || b == "running" {
                        assert_eq!((a.as_str(), *attempt, *error), ("pending", false, false));
                    } else {
                        assert_eq!(a, b);
                    }
                }
            } else {
                assert_eq!(after.run_state, "canceled");
                assert!(after.completed_at.is_some());
                assert_eq!(after.last_error_code.as_deref(), Some("operator_canceled"));
                assert_eq!(
                    after.last_error_message.as_deref(),
                    Some("rollout incident 42")
                );
                assert_eq!(items_after, items_before, "cancel leaves items alone");
            }
            assert_eq!(
                applied.after.as_ref().expect("after")["run_state"],
                after.run_state
            );
        }
    }
}

#[tokio::test]
async fn the_audit_record_says_who_did_what_to_which_row_and_why() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let Outcome::Applied(applied) =
        actions::apply(&session, &retry(&db, &job).await, "  compiler fixed  ")
            .await
            .expect("apply")
    else {
        panic!("retry applies");
    };
    let record: bootstrap_console::store::rows::AuditRow =
        sqlx::query_as("SELECT * FROM bootstrap_console.audit_log WHERE id = $1")
            .bind(applied.audit_id)
            .fetch_one(&db.pool)
            .await
            .expect("audit row");
    let written_on_db_clock: bool = sqlx::query_scalar(
        "SELECT abs(extract(epoch FROM now() - at)) < 60 FROM bootstrap_console.audit_log",
    )
    .fetch_one(&db.pool)
    .await
    .expect("clock");
    assert_eq!(record.actor, session.actor().user);
    assert_eq!(record.host, session.actor().host);
    assert_eq!(
        (record.action.as_str(), record.tenant_id.as_str()),
        ("retry", "tenant-a")
    );
    assert_eq!(
        (record.knowledge_space_id, record.bootstrap_id),
        (job.space, Some(job.bootstrap))
    );
    assert_eq!(
        record.reason, "compiler fixed",
        "the reason is stored trimmed"
    );
    assert_eq!(record.row_before.expect("before")["run_state"], "failed");
    assert_eq!(record.row_after.expect("after")["run_state"], "queued");
    assert_eq!(record.outcome, "applied");
    assert!(written_on_db_clock);
}

#[tokio::test]
async fn an_exact_row_version_that_moved_is_refused_and_writes_nothing() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let stale = retry(&db, &job)
        .await
        .with_exact_row_version(job.row_version - 2);
    let image = fixture::ledger_image(&db.pool).await;

    let outcome = actions::apply(&session, &stale, "retry it")
        .await
        .expect("apply");

    let Outcome::Refused(refusal) = outcome else {
        panic!("stale must be refused")
    };
    assert_eq!(
        refusal.to_string(),
        format!(
            "bootstrap of space {} changed since you looked (row_version 5 → 7, now failed)",
            &job.space.simple().to_string()[..8]
        )
    );
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "nothing written"
    );
}

#[tokio::test]
async fn a_worker_fenced_out_by_cancel_cannot_write_and_the_job_stays_canceled() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    let ttl = Duration::from_secs(30);
    let mut claims = protocol::claim(&db.pool, "worker-a", ttl, 10)
        .await
        .expect("claim");
    let mut claim = claims.pop().expect("claimed the job");
    let mut worker = db.connect().await;
    protocol::heartbeat(&mut worker, &mut claim, ttl)
        .await
        .expect("live lease heartbeats");

    let seen = job_row(&db, job.bootstrap).await.row_version;
    let canceled = actions::apply(&session, &cancel(&db, &job).await, "stop this space")
        .await
        .expect("cancel");
    assert!(matches!(canceled, Outcome::Applied(_)));

    let fenced = protocol::heartbeat(&mut worker, &mut claim, ttl).await;
    assert!(
        matches!(fenced, Err(StepError::LostLease(id)) if id == job.bootstrap),
        "{fenced:?}"
    );
    let after = job_row(&db, job.bootstrap).await;
    assert_eq!(after.run_state, "canceled");
    assert_eq!(after.row_version, seen + 1);
    // Nor can another worker pick up a canceled job.
    assert!(
        protocol::claim(&db.pool, "worker-b", ttl, 10)
            .await
            .expect("claim")
            .is_empty()
    );
}

#[tokio::test]
async fn two_operators_retrying_the_same_job_at_once_apply_exactly_once() {
    let db = TestDb::migrated().await;
    let first = db.session(SessionOptions::default()).await;
    let second = db.session(SessionOptions::default()).await;
    for round in 0..5 {
        let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
        let action = retry(&db, &job).await;
        let audits = fixture::audit_count(&db.pool).await;
        let (a, b) = tokio::join!(
            actions::apply(&first, &action, "operator one"),
            actions::apply(&second, &action, "operator two"),
        );
        let outcomes = [a.expect("first"), b.expect("second")];
        let applied = outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Applied(_)))
            .count();
        assert_eq!(
            applied, 1,
            "round {round}: exactly one applies: {outcomes:?}"
        );
        // The same request twice: the second finds it applied, under the row lock.
        assert!(
            outcomes
                .iter()
                .any(|o| matches!(o, Outcome::AlreadyApplied { .. })),
            "{outcomes:?}"
        );
        assert_eq!(fixture::audit_count(&db.pool).await, audits + 1);
        assert_eq!(
            job_row(&db, job.bootstrap).await.row_version,
            job.row_version + 1
        );
        // Two operators' own requests for the same job: one applies, the other is refused
        // by the state it finds under the row lock.
        let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
        let seen = fixture::seen(&db.pool, job.bootstrap).await;
        let (one, two) = (
            Action::retry(seen.clone(), RequestId::new()),
            Action::retry(seen, RequestId::new()),
        );
        let (a, b) = tokio::join!(
            actions::apply(&first, &one, "operator one"),
            actions::apply(&second, &two, "operator two"),
        );
        let outcomes = [a.expect("first"), b.expect("second")];
        let applied = outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Applied(_)))
            .count();
        assert_eq!(applied, 1, "round {round}: {outcomes:?}");
        assert!(
            outcomes
                .iter()
                .any(|o| matches!(o, Outcome::Refused(Refusal::RetriedMeanwhile { .. }))),
            "{outcomes:?}"
        );
        assert_eq!(fixture::audit_count(&db.pool).await, audits + 2);
    }
}

#[tokio::test]
async fn removing_a_lease_deletes_exactly_that_lease_with_an_audit_record() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    fixture::lease(&db.pool, "tenant-a", job.space, 1200).await;
    let lease = first_lease(&session).await;
    let action = remove(&lease, false);

    let plan = actions::plan(&session, &action).await.expect("plan");
    assert!(plan.verdict.is_ok(), "{:?}", plan.verdict);
    let outcome = actions::apply(&session, &action, "writer pod crashed")
        .await
        .expect("apply");

    let Outcome::Applied(applied) = outcome else {
        panic!("{outcome:?}")
    };
    assert!(applied.after.is_none());
    assert_eq!(applied.before["id"], lease.id.to_string());
    assert!(
        session
            .reads()
            .leases()
            .await
            .expect("leases")
            .leases
            .is_empty()
    );
    let (action_name, lease_id): (String, Option<uuid::Uuid>) =
        sqlx::query_as("SELECT action, lease_id FROM bootstrap_console.audit_log")
            .fetch_one(&db.pool)
            .await
            .expect("audit");
    assert_eq!(
        (action_name.as_str(), lease_id),
        ("remove_mutation_lease", Some(lease.id))
    );
    // The same request again: applied once, reported as such.
    let again = actions::apply(&session, &action, "again")
        .await
        .expect("apply");
    assert!(matches!(again, Outcome::AlreadyApplied { audit_id } if audit_id == applied.audit_id));
    // A new request to remove it: already gone.
    let again = actions::apply(&session, &remove(&lease, false), "again")
        .await
        .expect("apply");
    assert!(matches!(
        again,
        Outcome::Refused(Refusal::LeaseGone {
            replaced_by: None,
            ..
        })
    ));
}

#[tokio::test]
async fn removing_a_lease_that_was_replaced_by_a_new_one_is_refused() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    let old = fixture::lease(&db.pool, "tenant-a", job.space, 1800).await;
    let seen = first_lease(&session).await;
    // The writer finished and a new writer took the space.
    sqlx::query("DELETE FROM knowledge_space_mutation_leases WHERE id = $1")
        .bind(old)
        .execute(&db.pool)
        .await
        .expect("release");
    let new = fixture::lease(&db.pool, "tenant-a", job.space, 1).await;
    let image = fixture::ledger_image(&db.pool).await;

    let action = remove(&seen, true);
    let outcome = actions::apply(&session, &action, "orphan")
        .await
        .expect("apply");

    let Outcome::Refused(refusal) = outcome else {
        panic!("must be refused")
    };
    assert!(
        matches!(&refusal, Refusal::LeaseGone { replaced_by: Some((id, _)), .. } if id.id == new)
    );
    assert!(
        refusal
            .to_string()
            .contains("already gone; the space now has a new lease"),
        "{refusal}"
    );
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "the new lease is untouched"
    );
}

#[tokio::test]
async fn a_live_lease_with_heartbeat_columns_needs_force() {
    let db = TestDb::migrated().await;
    sqlx::query(
        "ALTER TABLE knowledge_space_mutation_leases \
           ADD COLUMN heartbeat_at timestamptz, ADD COLUMN expires_at timestamptz",
    )
    .execute(&db.pool)
    .await
    .expect("later lease columns");
    let session = db.session(SessionOptions::default()).await;
    assert!(session.topology().capabilities().lease_heartbeats);
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    let lease = fixture::lease(&db.pool, "tenant-a", job.space, 60).await;
    sqlx::query(
        "UPDATE knowledge_space_mutation_leases \
         SET heartbeat_at = now(), expires_at = now() + interval '2 minutes' WHERE id = $1",
    )
    .bind(lease)
    .execute(&db.pool)
    .await
    .expect("live");
    let seen = first_lease(&session).await;
    assert!(seen.expires_at.is_some());

    let unforced = remove(&seen, false);
    let outcome = actions::apply(&session, &unforced, "orphan?")
        .await
        .expect("apply");
    let Outcome::Refused(refusal @ Refusal::LeaseNotOrphan { .. }) = outcome else {
        panic!("a live lease needs force: {outcome:?}")
    };
    assert!(
        refusal.to_string().contains("heartbeat live for"),
        "{refusal}"
    );
    assert_eq!(fixture::audit_count(&db.pool).await, 0);

    let forced = remove(&seen, true);
    let outcome = actions::apply(&session, &forced, "writer host is gone")
        .await
        .expect("apply");
    assert!(matches!(outcome, Outcome::Applied(_)), "{outcome:?}");
    assert_eq!(fixture::audit_outcomes(&db.pool).await, ["applied_forced"]);
}

#[tokio::test]
async fn actions_outside_the_tenant_scope_are_refused_and_write_nothing() {
    let db = TestDb::migrated().await;
    let scoped = db
        .session(SessionOptions {
            tenant: Some("tenant-b".into()),
            ..SessionOptions::default()
        })
        .await;
    let failed = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let running = fixture::job(&db.pool, &JobSpec::new("tenant-a", "running")).await;
    fixture::lease(&db.pool, "tenant-a", failed.space, 1800).await;
    let unscoped = db.session(SessionOptions::default()).await;
    let lease = first_lease(&unscoped).await;
    let image = fixture::ledger_image(&db.pool).await;

    for action in [
        retry(&db, &failed).await,
        cancel(&db, &running).await,
        remove(&lease, false),
    ] {
        let plan = actions::plan(&scoped, &action).await.expect("plan");
        assert!(
            matches!(plan.verdict, Err(Refusal::OutsideScope { .. })),
            "{:?}",
            plan.verdict
        );
        let outcome = actions::apply(&scoped, &action, "not mine")
            .await
            .expect("apply");
        let Outcome::Refused(refusal) = outcome else {
            panic!("{action:?} must be refused")
        };
        assert!(
            refusal.to_string().contains("outside this console's scope"),
            "{refusal}"
        );
    }
    assert_eq!(fixture::ledger_image(&db.pool).await, image);
    // Nor does the scoped session see the other tenant's rows.
    assert!(
        scoped
            .reads()
            .load_fleet(Default::default())
            .await
            .expect("board")
            .is_empty()
    );
    assert!(
        scoped
            .reads()
            .leases()
            .await
            .expect("leases")
            .leases
            .is_empty()
    );
    assert!(
        scoped
            .reads()
            .detail(failed.bootstrap)
            .await
            .expect("detail")
            .is_none()
    );
}

#[tokio::test]
async fn every_action_in_read_only_mode_is_refused_and_writes_nothing() {
    let db = TestDb::migrated().await;
    let session = db
        .session(SessionOptions {
            read_only: true,
            ..SessionOptions::default()
        })
        .await;
    let failed = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let queued = fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    fixture::lease(&db.pool, "tenant-a", queued.space, 1800).await;
    let lease = first_lease(&session).await;
    let image = fixture::ledger_image(&db.pool).await;

    for action in [
        retry(&db, &failed).await,
        cancel(&db, &queued).await,
        remove(&lease, true),
    ] {
        let outcome = actions::apply(&session, &action, "try anyway")
            .await
            .expect("apply");
        let Outcome::Refused(refusal) = outcome else {
            panic!("read-only must refuse")
        };
        assert_eq!(
            refusal.to_string(),
            "the console is read-only: started with --read-only"
        );
    }
    assert_eq!(fixture::ledger_image(&db.pool).await, image);
}

#[tokio::test]
async fn an_unknown_id_an_empty_reason_and_a_missing_audit_table_are_refused() {
    let db = TestDb::migrated().await;
    let session = db.session(SessionOptions::default()).await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let image = fixture::ledger_image(&db.pool).await;

    let mut never_seen = fixture::seen(&db.pool, job.bootstrap).await;
    never_seen.id = uuid::Uuid::new_v4();
    let unknown = Action::retry(never_seen, RequestId::new());
    let outcome = actions::apply(&session, &unknown, "why not")
        .await
        .expect("apply");
    assert!(matches!(
        outcome,
        Outcome::Refused(Refusal::UnknownBootstrap { .. })
    ));
    let outcome = actions::apply(&session, &retry(&db, &job).await, "   ")
        .await
        .expect("apply");
    assert!(matches!(outcome, Outcome::Refused(Refusal::MissingReason)));
    assert_eq!(fixture::ledger_image(&db.pool).await, image);

    sqlx::query("DROP SCHEMA bootstrap_console CASCADE")
        .execute(&db.pool)
        .await
        .expect("drop the audit schema");
    let without_audit = db.session(SessionOptions::default()).await;
    let outcome = actions::apply(&without_audit, &retry(&db, &job).await, "retry")
        .await
        .expect("apply");
    let Outcome::Refused(refusal) = outcome else {
        panic!("no audit table, no action")
    };
    assert!(
        refusal.to_string().contains("bootstrap-console migrate"),
        "{refusal}"
    );
    assert_eq!(
        job_row(&db, job.bootstrap).await.run_state,
        RunState::Failed.as_str()
    );
}

/// The rule of retry and cancel is the database's (console schema unit 0005), the one the plan
/// and the action both evaluate: each verdict, case by case. Progress never refuses; only the
/// state the action rests on does, or a row version a script demanded.
#[tokio::test(flavor = "multi_thread")]
async fn the_databases_rule_decides_retry_and_cancel() {
    let db = TestDb::migrated().await;
    let at = |minutes: i64| {
        chrono::DateTime::<chrono::Utc>::from_timestamp(1_800_000_000 + minutes * 60, 0)
            .expect("an instant")
    };
    type Case = (
        &'static str,
        &'static str,
        Option<i64>,
        Option<i32>,
        &'static str,
        Option<i64>,
        i32,
        Option<&'static str>,
    );
    // (action, seen state, seen completed_at, --row-version, state now, completed_at now,
    //  row version now, verdict)
    let cases: [Case; 12] = [
        ("cancel", "running", None, None, "running", None, 39, None),
        ("cancel", "queued", None, None, "running", None, 4, None),
        (
            "cancel",
            "running",
            None,
            None,
            "succeeded",
            Some(5),
            31,
            Some("finished"),
        ),
        (
            "cancel",
            "succeeded",
            Some(1),
            None,
            "succeeded",
            Some(1),
            9,
            Some("wrong_state"),
        ),
        (
            "cancel",
            "running",
            None,
            Some(30),
            "running",
            None,
            31,
            Some("stale"),
        ),
        (
            "cancel",
            "running",
            None,
            Some(31),
            "running",
            None,
            31,
            None,
        ),
        (
            "retry",
            "failed",
            Some(3),
            None,
            "failed",
            Some(3),
            13,
            None,
        ),
        (
            "retry",
            "failed",
            Some(3),
            None,
            "queued",
            None,
            13,
            Some("retried_meanwhile"),
        ),
        (
            "retry",
            "failed",
            Some(3),
            None,
            "failed",
            Some(9),
            20,
            Some("new_episode"),
        ),
        (
            "retry",
            "failed",
            Some(3),
            None,
            "canceled",
            Some(3),
            14,
            Some("new_episode"),
        ),
        (
            "retry",
            "succeeded",
            Some(1),
            None,
            "succeeded",
            Some(1),
            9,
            Some("wrong_state"),
        ),
        (
            "rename",
            "failed",
            None,
            None,
            "failed",
            None,
            1,
            Some("unknown_action"),
        ),
    ];
    for (action, seen, seen_at, exact, now, now_at, version, expected) in cases {
        let verdict: Option<String> = sqlx::query_scalar(
            "SELECT bootstrap_console.bootstrap_action_refusal($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(action)
        .bind(seen)
        .bind(seen_at.map(at))
        .bind(exact)
        .bind(now)
        .bind(now_at.map(at))
        .bind(version)
        .fetch_one(&db.pool)
        .await
        .expect("the rule");
        assert_eq!(
            verdict.as_deref(),
            expected,
            "{action} seen {seen} now {now} (v{version})"
        );
    }
}

/// The orphan rule, in its two places: the database's (what a removal is decided by) and the
/// console's (what the board judges between polls as time passes). The same answer at every
/// instant around each edge: the threshold, a heartbeat's expiry before and after it, none.
#[tokio::test(flavor = "multi_thread")]
async fn the_orphan_rule_is_the_same_in_the_database_and_on_the_board() {
    use bootstrap_console::domain::signals::{Thresholds, lease_is_orphan_suspect};
    use chrono::Duration as Span;
    let db = TestDb::migrated().await;
    let thresholds = Thresholds::default();
    let acquired = chrono::DateTime::<chrono::Utc>::from_timestamp(1_800_000_000, 0).expect("t");
    let edge = thresholds.orphan_after;
    let expiries = [
        None,
        Some(acquired + edge - Span::minutes(3)),
        Some(acquired + edge),
        Some(acquired + edge + Span::minutes(7)),
    ];
    let mut compared = 0;
    for expires in expiries {
        let edges = [acquired + edge, expires.unwrap_or(acquired + edge)];
        for at in edges {
            for step in [-60_000_000, -1, 0, 1, 2, 60_000_000] {
                let now = at + Span::microseconds(step);
                let board = lease_is_orphan_suspect(acquired, expires, now, &thresholds);
                let database: bool = sqlx::query_scalar(
                    "SELECT $3 >= bootstrap_console.lease_orphan_at($1, $2, \
                     $4 * interval '1 microsecond')",
                )
                .bind(acquired)
                .bind(expires)
                .bind(now)
                .bind(edge.num_microseconds().expect("a threshold"))
                .fetch_one(&db.pool)
                .await
                .expect("the rule");
                assert_eq!(board, database, "expires {expires:?}, now {now}");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 48);
}

/// The rule a lease removal rests on, as the database holds it: the lease seen (tenant, space,
/// acquisition), then an orphan suspect unless forced.
#[tokio::test(flavor = "multi_thread")]
async fn the_databases_rule_decides_a_lease_removal() {
    let db = TestDb::migrated().await;
    let acquired = chrono::DateTime::<chrono::Utc>::from_timestamp(1_800_000_000, 0).expect("t");
    let space = uuid::Uuid::from_u128(7);
    let old = acquired + chrono::Duration::hours(1);
    let young = acquired + chrono::Duration::minutes(5);
    // "Older than" the threshold: the first instant after it.
    let at_threshold = acquired + chrono::Duration::minutes(15);
    let just_past = at_threshold + chrono::Duration::microseconds(1);
    // (tenant now, acquired now, now, force, verdict)
    let cases = [
        ("acme", acquired, at_threshold, false, Some("not_orphan")),
        ("acme", acquired, just_past, false, None),
        ("acme", acquired, old, false, None),
        ("acme", acquired, young, false, Some("not_orphan")),
        ("acme", acquired, young, true, Some("forced")),
        ("acme", acquired, old, true, None),
        ("other", acquired, old, false, Some("changed")),
        ("acme", young, old, true, Some("changed")),
    ];
    for (tenant, acquired_now, now, force, expected) in cases {
        let verdict: Option<String> = sqlx::query_scalar(
            "SELECT bootstrap_console.lease_removal_refusal('acme', $1, $2, $3, $4, $1, $5, \
             NULL, $6, interval '15 minutes')",
        )
        .bind(space)
        .bind(acquired)
        .bind(force)
        .bind(tenant)
        .bind(acquired_now)
        .bind(now)
        .fetch_one(&db.pool)
        .await
        .expect("the rule");
        assert_eq!(
            verdict.as_deref(),
            expected,
            "{tenant} {acquired_now} {now} {force}"
        );
    }
}
