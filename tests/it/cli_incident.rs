//! The command line in an incident: scope and input decided before anything is planned,
//! request ids that make a re-run safe, lease removal guarded by evidence, missing grants
//! named, and an interactive confirmation that holds on a busy job.

use crate::common;

use std::time::Duration;

use bootstrap_console::sandbox::protocol;
use common::TestDb;
use common::cli::{assert_one_sentence, on, on_with_input, stderr, stdout};
use common::fixture::{self, JobSpec};
use common::pty::Console;

/// The request id a run printed (`request <uuid>`).
fn request_of(output: &str) -> String {
    output
        .lines()
        .find_map(|l| l.strip_prefix("request "))
        .unwrap_or_else(|| panic!("a request line in:\n{output}"))
        .trim()
        .to_string()
}

#[tokio::test]
async fn an_empty_or_unknown_tenant_scope_is_said_never_taken_for_all_tenants() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    fixture::job(&db.pool, &JobSpec::new("globex", "running")).await;
    fixture::space(&db.pool, "initech").await;
    let image = fixture::ledger_image(&db.pool).await;

    let empty = on(
        &db,
        &[
            "cancel",
            "--tenant",
            "",
            "--state",
            "running",
            "--reason",
            "x",
            "--dry-run",
        ],
    );
    assert_eq!(empty.status.code(), Some(2), "{}", stdout(&empty));
    assert!(
        stderr(&empty).contains("an empty tenant is not a scope"),
        "{}",
        stderr(&empty)
    );
    assert!(stdout(&empty).is_empty(), "nothing was planned");

    let typo = on(&db, &["status", "--tenant", "Acme", "--attention"]);
    assert_eq!(typo.status.code(), Some(7), "not an all-clear");
    assert_eq!(
        assert_one_sentence(&typo).trim(),
        "bootstrap-console: no tenant Acme has bootstraps or knowledge spaces; did you mean acme?"
    );
    let nothing = on(&db, &["status", "--tenant", "initech"]);
    assert_eq!(nothing.status.code(), Some(7));
    assert!(
        assert_one_sentence(&nothing)
            .contains("tenant initech has knowledge spaces but no bootstraps"),
        "{}",
        stderr(&nothing)
    );
    let cancel = on(
        &db,
        &[
            "cancel", "--tenant", "acmee", "--state", "running", "--reason", "x", "--yes",
        ],
    );
    assert_eq!(cancel.status.code(), Some(7));
    assert!(assert_one_sentence(&cancel).contains("did you mean acme?"));
    assert_eq!(fixture::ledger_image(&db.pool).await, image);
}

#[tokio::test]
async fn the_reason_is_checked_up_front_and_may_come_from_a_file_or_standard_input() {
    let db = TestDb::migrated().await;
    let first = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let second = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let image = fixture::ledger_image(&db.pool).await;
    let space = first.space.to_string();

    let long = "x".repeat(501);
    let dry = on(&db, &["retry", &space, "--reason", &long, "--dry-run"]);
    assert_eq!(dry.status.code(), Some(2), "{}", stdout(&dry));
    assert!(
        assert_one_sentence(&dry).contains("the reason is 501 characters long; keep it to 500")
    );
    assert!(stdout(&dry).is_empty(), "refused before planning");
    let blank = on(&db, &["retry", &space, "--reason", "   ", "--yes"]);
    assert_eq!(blank.status.code(), Some(2));
    assert!(assert_one_sentence(&blank).contains("must say why"));
    // What would act on a terminal, reorder text or hide, never reaches the audit log or the
    // platform's error message (they are read by tools that do not defuse it).
    for hostile in [
        "fixed \u{1b}]0;pwned\u{7}",
        "fixed \u{202e}desrever",
        "\u{200b}",
    ] {
        let refused = on(&db, &["retry", &space, "--reason", hostile, "--yes"]);
        assert_eq!(refused.status.code(), Some(2), "{hostile:?}");
        let sentence = assert_one_sentence(&refused);
        assert!(
            sentence.contains("a character that does not show as itself")
                && !sentence.contains('\u{1b}'),
            "{sentence}"
        );
    }
    assert_eq!(fixture::ledger_image(&db.pool).await, image);

    let dir = tempfile::tempdir().expect("temp dir");
    let nul = dir.path().join("nul.txt");
    std::fs::write(&nul, "fixed\0").expect("a reason file with a NUL");
    let nul = nul.to_str().expect("path");
    let refused = on(&db, &["retry", &space, "--reason-file", nul, "--dry-run"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stdout(&refused));
    assert!(assert_one_sentence(&refused).contains("does not show as itself"));
    let crlf = dir.path().join("crlf.txt");
    std::fs::write(&crlf, "INC-4211\r\nthe parser fix is deployed\r\n").expect("CRLF lines");
    let crlf = crlf.to_str().expect("path");
    let planned = on(&db, &["retry", &space, "--reason-file", crlf, "--dry-run"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stderr(&planned));
    let file = dir.path().join("reason.txt");
    std::fs::write(&file, "INC-4211: the parser fix is deployed\n").expect("reason file");
    let from_file = on(
        &db,
        &[
            "retry",
            &space,
            "--reason-file",
            file.to_str().expect("path"),
            "--yes",
        ],
    );
    assert_eq!(from_file.status.code(), Some(0), "{}", stdout(&from_file));
    let piped = on_with_input(
        &db,
        &[
            "retry",
            &second.space.to_string(),
            "--reason-file",
            "-",
            "--yes",
        ],
        "INC-4211: second space, same fix\n",
    );
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    let reasons: Vec<String> =
        sqlx::query_scalar("SELECT reason FROM bootstrap_console.audit_log ORDER BY id")
            .fetch_all(&db.pool)
            .await
            .expect("audit");
    assert_eq!(
        reasons,
        [
            "INC-4211: the parser fix is deployed",
            "INC-4211: second space, same fix"
        ]
    );
}

#[tokio::test]
async fn a_run_sent_again_with_its_request_id_applies_nothing_twice() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let space = job.space.to_string();
    let first = on(&db, &["retry", &space, "--reason", "parser fixed", "--yes"]);
    assert_eq!(first.status.code(), Some(0), "{}", stdout(&first));
    let request = request_of(&stdout(&first));
    // Every action is in the console's log, by its request.
    let log = std::fs::read_to_string(common::pty::console_log_dir().join("console.log"))
        .expect("the console's log");
    assert!(
        log.lines().any(|l| l.contains(&format!(
            "action retry on {} of request {request}",
            job.bootstrap
        )) && l.contains("Applied")),
        "no log line for request {request}"
    );
    // The id printed is the one the audit log can be searched by.
    let logged: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM bootstrap_console.audit_log WHERE request_id = $1::uuid",
    )
    .bind(&request)
    .fetch_one(&db.pool)
    .await
    .expect("audit");
    assert_eq!(logged, 1);

    // The job is queued now: a new retry is refused, the same request is not.
    let again = on(
        &db,
        &[
            "retry",
            &space,
            "--reason",
            "parser fixed",
            "--yes",
            "--request-id",
            &request,
        ],
    );
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
    assert!(
        stdout(&again).contains("retry already applied (audit record 1)")
            && stdout(&again).contains("0 applied, 1 already applied, 0 refused"),
        "{}",
        stdout(&again)
    );
    let told = on(
        &db,
        &[
            "retry",
            &space,
            "--reason",
            "parser fixed",
            "--dry-run",
            "--request-id",
            &request,
        ],
    );
    assert_eq!(told.status.code(), Some(0), "{}", stdout(&told));
    assert!(
        stdout(&told).contains("dry run: 0 would be applied, 1 already applied, 0 refused"),
        "{}",
        stdout(&told)
    );
    assert_eq!(fixture::audit_count(&db.pool).await, 1);
    let fresh = on(&db, &["retry", &space, "--reason", "again", "--yes"]);
    assert_eq!(fresh.status.code(), Some(3));
    assert!(stdout(&fresh).contains("is queued, retry needs failed or canceled"));

    let by_filter = on(
        &db,
        &[
            "retry",
            "--state",
            "failed",
            "--reason",
            "x",
            "--yes",
            "--request-id",
            &request,
        ],
    );
    assert_eq!(by_filter.status.code(), Some(2));
    assert!(assert_one_sentence(&by_filter).contains("name them by id"));
}

#[tokio::test]
async fn a_lease_that_is_not_an_orphan_suspect_needs_force_and_is_audited_as_forced() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "queued")).await;
    let lease = fixture::lease(&db.pool, "acme", job.space, 120)
        .await
        .to_string();
    let refused = on(
        &db,
        &[
            "lease",
            "remove",
            &lease,
            "--reason",
            "looks stuck",
            "--yes",
        ],
    );
    assert_eq!(refused.status.code(), Some(3), "{}", stdout(&refused));
    let text = stdout(&refused);
    assert!(
        text.contains("operation bulk-upload by tenant acme"),
        "{text}"
    );
    assert!(
        text.contains("NOT an orphan suspect: held 2m0"),
        "the evidence is shown: {text}"
    );
    assert!(text.contains("blocks space"), "{text}");
    assert!(text.contains("remove it only with force"), "{text}");
    assert_eq!(fixture::audit_count(&db.pool).await, 0);

    let forced = on(
        &db,
        &[
            "lease",
            "remove",
            &lease,
            "--reason",
            "pod is gone",
            "--force",
            "--yes",
        ],
    );
    assert_eq!(forced.status.code(), Some(0), "{}", stdout(&forced));
    assert_eq!(fixture::audit_outcomes(&db.pool).await, ["applied_forced"]);
}

/// The URL of `db` for another role (trusted locally, as the private cluster is).
/// A console session opened as `role` (password `pw`): it must open whatever the role lacks.
async fn session_as(db: &TestDb, role: &str) -> bootstrap_console::domain::session::Session {
    let target = bootstrap_console::store::connect::Target::from_options(
        db.options().username(role).password("pw"),
    );
    bootstrap_console::domain::session::Session::open(&target, Default::default())
        .await
        .unwrap_or_else(|e| panic!("role {role} can still watch: {e}"))
}

/// What the detail of `bootstrap` shows of its audit records.
async fn detail_audit(
    session: &bootstrap_console::domain::session::Session,
    bootstrap: uuid::Uuid,
) -> Result<Vec<bootstrap_console::domain::model::AuditRecord>, String> {
    let detail = session
        .reads()
        .detail(bootstrap)
        .await
        .expect("the detail loads");
    detail.expect("exists").audit
}

#[tokio::test]
async fn missing_grants_are_named_and_an_unreadable_audit_table_only_hides_the_audit() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let (watcher, blind) = (format!("watcher_{}", db.name), format!("blind_{}", db.name));
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{watcher}\" LOGIN PASSWORD 'pw'; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO \"{watcher}\"; \
         CREATE ROLE \"{blind}\" LOGIN PASSWORD 'pw'; \
         GRANT SELECT ON legacy_space_publication_bootstrap_items, \
           knowledge_space_mutation_leases TO \"{blind}\";"
    )))
    .execute(&db.pool)
    .await
    .expect("roles");

    // No USAGE on the console's schema: it still watches, and says what it cannot do.
    let session = session_as(&db, &watcher).await;
    let access = session.topology().access().clone();
    let reason = access.read_only_reason().expect("read-only");
    assert!(
        reason.contains("USAGE on schema bootstrap_console"),
        "{reason}"
    );
    assert_eq!(
        detail_audit(&session, job.bootstrap).await,
        Err(format!(
            "audit unavailable: role {watcher} lacks USAGE on schema bootstrap_console"
        ))
    );
    let audit = session
        .reads()
        .recent_audit(10)
        .await
        .expect_err("not readable");
    assert!(
        audit
            .to_string()
            .contains("lacks USAGE on schema bootstrap_console")
    );

    let status = on(&db, &["status"]);
    assert_eq!(status.status.code(), Some(1), "{}", stderr(&status));
    let watched = common::cli::run(&["status", "--database-url", &db.url_as(&watcher)]);
    assert_eq!(watched.status.code(), Some(1), "{}", stderr(&watched));
    let retry = common::cli::run(&[
        "retry",
        &job.space.to_string(),
        "--reason",
        "x",
        "--yes",
        "--database-url",
        &db.url_as(&watcher),
    ]);
    assert_eq!(
        retry.status.code(),
        Some(8),
        "a missing grant, not a refusal"
    );
    assert!(
        assert_one_sentence(&retry).contains(&format!(
            "role {watcher} lacks USAGE on schema bootstrap_console, EXECUTE on function \
             bootstrap_console.retry_bootstrap"
        )),
        "{}",
        stderr(&retry)
    );
    assert!(stdout(&retry).is_empty(), "nothing was planned");

    // USAGE and INSERT (an earlier console's grant), but no SELECT on the audit log: the
    // detail says so, the board works.
    let clerk = format!("clerk_{}", db.name);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{clerk}\" LOGIN PASSWORD 'pw'; \
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO \"{clerk}\"; \
         GRANT USAGE ON SCHEMA bootstrap_console TO \"{clerk}\"; \
         GRANT INSERT ON bootstrap_console.audit_log TO \"{clerk}\";"
    )))
    .execute(&db.pool)
    .await
    .expect("clerk");
    let session = session_as(&db, &clerk).await;
    assert_eq!(
        detail_audit(&session, job.bootstrap).await,
        Err(format!(
            "audit unavailable: role {clerk} lacks SELECT on bootstrap_console.audit_log"
        ))
    );
    assert!(
        session
            .topology()
            .access()
            .clone()
            .read_only_reason()
            .is_some_and(
                |r| r.ends_with(", SELECT on bootstrap_console.audit_log") && !r.contains("INSERT")
            ),
        "{:?}",
        session.topology().access().clone()
    );
    session.close().await;

    // No SELECT on the bootstrap table: nothing to watch, and the grant is named.
    let blinded = common::cli::run(&["status", "--database-url", &db.url_as(&blind)]);
    assert_eq!(blinded.status.code(), Some(8), "{}", stderr(&blinded));
    assert!(
        assert_one_sentence(&blinded).contains(&format!(
            "role {blind} lacks SELECT on legacy_space_publication_bootstraps"
        )),
        "{}",
        stderr(&blinded)
    );
}

#[tokio::test]
async fn the_interactive_confirmation_holds_on_a_busy_job() {
    let db = TestDb::migrated().await;
    let job = fixture::job(
        &db.pool,
        &JobSpec {
            items: vec!["pending"; 400],
            checkpoint: "snapshot_captured",
            ..JobSpec::new("acme", "queued")
        },
    )
    .await;
    let mut claim = protocol::claim(&db.pool, "worker-a", Duration::from_secs(30), 1)
        .await
        .expect("claim")
        .pop()
        .expect("claimed");
    let url = db.url();
    let space = job.space.to_string();
    let mut cli = Console::start(
        &[
            "cancel",
            &space,
            "--reason",
            "bad source data",
            "--database-url",
            &url,
        ],
        &[],
        100,
        30,
    );
    cli.wait_for("type yes to cancel", 20);
    // The worker commits documents while the operator reads the plan.
    for _ in 0..10 {
        let item = protocol::next_item(&db.pool, &claim)
            .await
            .expect("next")
            .expect("an item");
        protocol::bind_item(&db.pool, &mut claim, &item)
            .await
            .expect("bind");
        protocol::complete_item(&db.pool, &mut claim, &item)
            .await
            .expect("complete");
    }
    cli.send("yes\r");
    let screen = cli.wait_for("1 applied", 20);
    assert!(
        screen.contains("cancel applied") && screen.contains("progress 0 → 10 of 400"),
        "{screen}"
    );
    assert_eq!(cli.wait_exit(10), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_on_a_tenant_that_matches_nothing_shows_an_explicit_empty_state() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let url = db.url();
    let mut console = Console::start(
        &["watch", "--database-url", &url, "--tenant", "Acme"],
        &[],
        100,
        30,
    );
    let screen = console.wait_for("nothing to show", 20);
    assert!(
        screen.contains("no tenant Acme has bootstraps or knowledge spaces; did you mean acme?"),
        "{screen}"
    );
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

#[tokio::test]
async fn an_older_console_schema_is_brought_forward_keeping_its_records() {
    use bootstrap_console::store::schema::{self, CONSOLE_UNITS, LEGACY_SPACE_BOOTSTRAP};
    // The console schema as earlier releases left it (through 0001, through 0002), each with a
    // record written by that release.
    for through in [1, 2, 3] {
        let db = TestDb::empty().await;
        let mut conn = db.connect().await;
        schema::apply_unit(&mut conn, &schema::PLATFORM_STANDIN)
            .await
            .expect("stand-in");
        schema::apply_unit(&mut conn, &LEGACY_SPACE_BOOTSTRAP)
            .await
            .expect("0009");
        for unit in &CONSOLE_UNITS[..through] {
            schema::apply_unit(&mut conn, unit).await.expect("unit");
            sqlx::query(
                "INSERT INTO bootstrap_console.schema_migrations (version, name) VALUES ($1, $2)",
            )
            .bind(unit.version)
            .bind(unit.name)
            .execute(&db.pool)
            .await
            .expect("recorded");
        }
        let jobs = [
            fixture::job(&db.pool, &JobSpec::new("acme", "running")).await,
            fixture::job(&db.pool, &JobSpec::new("acme", "running")).await,
        ];
        let old_request = (through >= 2).then(uuid::Uuid::now_v7);
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO bootstrap_console.audit_log (actor, host, action, tenant_id, \
               knowledge_space_id, bootstrap_id, reason, outcome{}) \
             VALUES ('ops', 'jump', 'retry', 'acme', $1, $2, 'an earlier release', 'applied'{})",
            if through >= 2 { ", request_id" } else { "" },
            if through >= 2 { ", $3" } else { "" },
        )))
        .bind(jobs[0].space)
        .bind(jobs[0].bootstrap)
        .bind(old_request)
        .execute(&db.pool)
        .await
        .expect("an old record");
        let image = fixture::ledger_image(&db.pool).await;

        // A bulk cancel: both records of one request share its request id.
        let args = ["cancel", "--state", "running", "--reason", "x", "--yes"];
        let outdated = on(&db, &args);
        assert_eq!(outdated.status.code(), Some(5), "{}", stdout(&outdated));
        assert!(
            assert_one_sentence(&outdated).contains("bootstrap-console migrate"),
            "{}",
            stderr(&outdated)
        );
        assert_eq!(fixture::ledger_image(&db.pool).await, image);

        let migrated = on(&db, &["migrate"]);
        assert_eq!(migrated.status.code(), Some(0), "{}", stderr(&migrated));
        let verified = on(&db, &["audit", "verify"]);
        assert_eq!(verified.status.code(), Some(0), "{}", stdout(&verified));
        let kept: Vec<(String, Option<uuid::Uuid>, Option<uuid::Uuid>)> = sqlx::query_as(
            "SELECT reason, request_id, action_id FROM bootstrap_console.audit_log ORDER BY id",
        )
        .fetch_all(&db.pool)
        .await
        .expect("audit");
        assert_eq!(
            kept,
            vec![("an earlier release".to_string(), old_request, None)]
        );

        let cancel = on(&db, &args);
        assert_eq!(
            cancel.status.code(),
            Some(0),
            "through {through}: {}",
            stdout(&cancel)
        );
        assert_eq!(fixture::audit_count(&db.pool).await, 3);
    }
}

#[tokio::test]
async fn a_lease_removal_sent_again_after_the_lease_is_gone_says_already_applied() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "queued")).await;
    let lease = fixture::lease(&db.pool, "acme", job.space, 7200)
        .await
        .to_string();
    let first = on(
        &db,
        &[
            "lease",
            "remove",
            &lease,
            "--reason",
            "writer is gone",
            "--yes",
        ],
    );
    assert_eq!(first.status.code(), Some(0), "{}", stdout(&first));
    let request = request_of(&stdout(&first));

    let again = on(
        &db,
        &[
            "lease",
            "remove",
            &lease,
            "--reason",
            "writer is gone",
            "--yes",
            "--request-id",
            &request,
        ],
    );
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
    assert!(
        stdout(&again).contains("remove lease already applied (audit record 1)"),
        "{}",
        stdout(&again)
    );
    // A new request for a lease that is gone is refused, as before.
    let fresh = on(&db, &["lease", "remove", &lease, "--reason", "x", "--yes"]);
    assert_eq!(fresh.status.code(), Some(3), "{}", stdout(&fresh));
    assert_eq!(fixture::audit_count(&db.pool).await, 1);
}

#[tokio::test]
async fn an_unknown_outcome_exits_6_and_says_how_to_finish_the_request() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let holder = fixture::hold_row(&db.pool, job.bootstrap).await;
    let bootstrap = job.bootstrap.to_string();
    let run = |extra: &[&str]| {
        let mut all = vec!["cancel", bootstrap.as_str(), "--reason", "stop it", "--yes"];
        all.extend(extra);
        on(&db, &all)
    };

    // A new request waits out the lock timeout: it alone was tried, and it wrote nothing.
    let first = run(&[]);
    assert_eq!(first.status.code(), Some(4), "{}", stdout(&first));
    assert!(stdout(&first).contains("not applied"), "{}", stdout(&first));
    let request = request_of(&stdout(&first));

    // Sent again while the row is still held, the request's outcome is unknown: what holds
    // the row could be its earlier run. The exact command that settles it is printed.
    let held = run(&["--request-id", &request]);
    assert_eq!(held.status.code(), Some(6), "{}", stdout(&held));
    let out = stdout(&held);
    assert!(out.contains("outcome unknown"), "{out}");
    let advice = format!(
        "`bootstrap-console cancel {bootstrap} --request-id {request} --reason 'stop it' --dry-run`"
    );
    assert!(out.contains(&advice), "{out}");
    let told = run(&["--request-id", &request, "--dry-run"]);
    assert_eq!(told.status.code(), Some(6), "{}", stdout(&told));
    assert!(
        stdout(&told).contains("outcome still unknown — another transaction holds the row"),
        "{}",
        stdout(&told)
    );
    holder.rollback().await.expect("release");

    // The advice, followed once the row is free: the dry run tells, the run finishes the
    // request once.
    let told = run(&["--request-id", &request, "--dry-run"]);
    assert_eq!(told.status.code(), Some(0), "{}", stdout(&told));
    assert!(
        stdout(&told).contains("1 would be applied"),
        "{}",
        stdout(&told)
    );
    let finished = run(&["--request-id", &request]);
    assert_eq!(finished.status.code(), Some(0), "{}", stdout(&finished));
    let again = run(&["--request-id", &request]);
    assert_eq!(again.status.code(), Some(0));
    assert!(
        stdout(&again).contains("cancel already applied (audit record 1)"),
        "{}",
        stdout(&again)
    );
    assert_eq!(fixture::audit_count(&db.pool).await, 1);
}

#[tokio::test]
async fn a_role_with_exactly_the_named_grants_can_take_every_action() {
    let db = TestDb::migrated().await;
    let failed = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let running = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let lease = fixture::lease(&db.pool, "acme", running.space, 7200).await;
    let operator = format!("operator_{}", db.name);
    // What the console names when a grant is missing, and nothing more.
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{operator}\" LOGIN PASSWORD 'pw'; \
         GRANT SELECT ON legacy_space_publication_bootstraps, \
           legacy_space_publication_bootstrap_items, knowledge_space_mutation_leases \
           TO \"{operator}\"; \
         GRANT USAGE ON SCHEMA bootstrap_console TO \"{operator}\"; \
         GRANT SELECT ON bootstrap_console.audit_log TO \"{operator}\"; \
         GRANT EXECUTE ON FUNCTION bootstrap_console.retry_bootstrap, \
           bootstrap_console.cancel_bootstrap, bootstrap_console.remove_mutation_lease, \
           bootstrap_console.await_action_row TO \"{operator}\";"
    )))
    .execute(&db.pool)
    .await
    .expect("an operator role");
    let url = db.url_as(&operator);
    let as_operator = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--reason", "incident 7", "--yes", "--database-url", &url]);
        common::cli::run(&all)
    };
    let (failed, running, lease) = (
        failed.space.to_string(),
        running.space.to_string(),
        lease.to_string(),
    );
    for (args, what) in [
        (vec!["retry", failed.as_str()], "retry"),
        (vec!["cancel", running.as_str()], "cancel"),
        (vec!["lease", "remove", lease.as_str()], "lease removal"),
    ] {
        let output = as_operator(&args);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{what}: {}{}",
            stdout(&output),
            stderr(&output)
        );
    }
    assert_eq!(fixture::audit_count(&db.pool).await, 3);
}

#[tokio::test]
async fn ids_are_taken_by_a_unique_prefix_and_an_ambiguous_one_lists_candidates() {
    let db = TestDb::migrated().await;
    // Time-ordered ids share their first digits, as UUIDv7 ids do.
    let ids = [
        "01a22fde-0000-7000-8000-00000000000a",
        "01a22fde-0000-7000-8000-00000000000b",
        "01a22fe0-0000-7000-8000-00000000000c",
    ]
    .map(|id| uuid::Uuid::parse_str(id).expect("uuid"));
    for id in ids {
        let spec = JobSpec {
            id: Some(id),
            ..JobSpec::new("acme", "failed")
        };
        fixture::job(&db.pool, &spec).await;
    }
    let retry = |id: &str| {
        on(
            &db,
            &[
                "retry",
                id,
                "--reason",
                "parser fixed",
                "--yes",
                "--dry-run",
            ],
        )
    };
    let ambiguous = retry("01a22fde");
    assert_eq!(ambiguous.status.code(), Some(2), "{}", stdout(&ambiguous));
    let sentence = assert_one_sentence(&ambiguous);
    assert!(
        sentence.contains("01a22fde names more than one bootstrap id")
            && sentence.contains(&ids[0].to_string())
            && sentence.contains(&ids[1].to_string()),
        "{sentence}"
    );
    // Hyphens and case do not matter; enough digits name one id.
    let unique = retry("01A22FE0-0000");
    assert_eq!(unique.status.code(), Some(0), "{}", stderr(&unique));
    assert!(
        stdout(&unique).contains("1 would be applied"),
        "{}",
        stdout(&unique)
    );
    let tail = retry("01a22fde00007000800000000000000b");
    assert_eq!(tail.status.code(), Some(0), "a whole id without hyphens");
    let none = retry("ffff0000");
    assert_eq!(none.status.code(), Some(3));
    assert!(stdout(&none).contains("no bootstrap or space id starts with it"));
    let short = retry("01a");
    assert_eq!(short.status.code(), Some(2));
    assert!(assert_one_sentence(&short).contains("at least 4 hex digits"));

    // Leases too, through their own primary key.
    let lease = fixture::lease(&db.pool, "acme", ids[2], 7200).await;
    let prefix = &lease.simple().to_string()[..10];
    let removed = on(
        &db,
        &[
            "lease",
            "remove",
            prefix,
            "--reason",
            "gone",
            "--yes",
            "--dry-run",
        ],
    );
    assert_eq!(removed.status.code(), Some(0), "{}", stderr(&removed));
    assert!(
        stdout(&removed).contains("1 would be applied"),
        "{}",
        stdout(&removed)
    );
}
