//! The command-line subcommands as a script runs them: the real binary against a real
//! PostgreSQL, checking output, exit codes and what was (not) written.

use crate::common;

use bootstrap_console::store::schema;
use common::TestDb;
use common::cli::{assert_one_sentence, on, run, run_with_env, stderr, stdout};
use common::fixture::{self, JobSpec};

async fn every_situation(db: &TestDb) -> Vec<fixture::Job> {
    let spec = |state| JobSpec::new("tenant-a", state);
    let mut jobs = vec![
        fixture::job(&db.pool, &spec("failed")).await,
        fixture::job(&db.pool, &spec("queued")).await,
        fixture::job(
            &db.pool,
            &JobSpec {
                lease_expires_in_secs: -120,
                heartbeat_ago_secs: 150,
                ..spec("running")
            },
        )
        .await,
        fixture::job(
            &db.pool,
            &JobSpec {
                updated_ago_secs: 900,
                ..spec("queued")
            },
        )
        .await,
        fixture::job(
            &db.pool,
            &JobSpec {
                heartbeat_ago_secs: 25,
                lease_expires_in_secs: 5,
                ..spec("running")
            },
        )
        .await,
        fixture::job(&db.pool, &spec("running")).await,
        fixture::job(&db.pool, &spec("canceled")).await,
        fixture::job(&db.pool, &JobSpec::new("tenant-b", "succeeded")).await,
    ];
    fixture::lease(&db.pool, "tenant-a", jobs[1].space, 1800).await;
    jobs.rotate_left(0);
    jobs
}

#[tokio::test]
async fn status_json_matches_the_database_and_the_exit_code_flags_attention() {
    let db = TestDb::migrated().await;
    let jobs = every_situation(&db).await;
    let output = on(&db, &["status", "--json"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "something needs attention: {}",
        stderr(&output)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("valid JSON");
    assert_eq!(report["schema"], "bootstrap-console.status/v2");
    let spaces = report["spaces"].as_array().expect("spaces");
    assert_eq!(spaces.len(), jobs.len());
    let expected_attention = [
        "failed",
        "blocked",
        "lease-expired",
        "stuck",
        "heartbeat-late",
        "running",
        "canceled",
        "succeeded",
    ];
    let in_order: Vec<&str> = spaces
        .iter()
        .map(|s| s["attention"].as_str().expect("attention"))
        .collect();
    assert_eq!(in_order, expected_attention, "attention order");

    let rows: Vec<(uuid::Uuid, String, String, i32, i32, i32)> = sqlx::query_as(
        "SELECT id, run_state, checkpoint, total_documents, completed_documents, row_version \
         FROM legacy_space_publication_bootstraps",
    )
    .fetch_all(&db.pool)
    .await
    .expect("rows");
    for (id, run_state, checkpoint, total, completed, version) in rows {
        let space = spaces
            .iter()
            .find(|s| s["bootstrap_id"] == id.to_string())
            .unwrap_or_else(|| panic!("{id} in the report"));
        assert_eq!(space["run_state"], run_state);
        assert_eq!(space["checkpoint"], checkpoint);
        assert_eq!(space["total_documents"], total);
        assert_eq!(space["completed_documents"], completed);
        assert_eq!(space["row_version"], version);
    }
    let blocked = &spaces[1];
    assert_eq!(blocked["signals"]["blocked_by_lease"], true);
    assert_eq!(blocked["mutation_lease"]["orphan_suspect"], true);
    assert_eq!(spaces[0]["last_error_code"], "compile_failed");
    let summary = &report["summary"];
    assert_eq!(summary["spaces"], 8);
    assert_eq!(summary["readable"], 1);
    assert_eq!(summary["by_group"]["needs_operator"], 4);
    assert_eq!(summary["by_group"]["watch"], 1, "the late heartbeat");
    assert_eq!(summary["by_group"]["progressing"], 1);
    assert_eq!(summary["by_group"]["done"], 2);
    assert_eq!(spaces[0]["group"], "needs_operator");
    assert_eq!(spaces[4]["group"], "watch");
    assert_eq!(summary["matrix"]["rebuilding"]["running"], 3);

    // Filters narrow it; a scope with nothing to look at exits 0.
    let failed = on(&db, &["status", "--json", "--state", "failed"]);
    let failed: serde_json::Value = serde_json::from_str(&stdout(&failed)).expect("json");
    assert_eq!(failed["spaces"].as_array().expect("spaces").len(), 1);
    let calm = on(&db, &["status", "--tenant", "tenant-b"]);
    assert_eq!(calm.status.code(), Some(0), "{}", stdout(&calm));
    let table = on(&db, &["status"]);
    let text = stdout(&table);
    assert!(
        text.lines().all(|l| l.chars().count() <= 80),
        "fits 80 columns:\n{text}"
    );
    assert!(
        text.contains("FAILED") && text.contains("BLOCKED"),
        "{text}"
    );
}

#[tokio::test]
async fn signal_thresholds_are_settings() {
    let db = TestDb::migrated().await;
    let spec = JobSpec {
        updated_ago_secs: 900,
        ..JobSpec::new("tenant-a", "queued")
    };
    fixture::job(&db.pool, &spec).await;
    let attention = |args: &[&str]| {
        let output = on(&db, args);
        let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("json");
        (
            output.status.code(),
            report["spaces"][0]["attention"]
                .as_str()
                .map(str::to_string),
        )
    };
    assert_eq!(
        attention(&["status", "--json"]),
        (Some(1), Some("stuck".into()))
    );
    assert_eq!(
        attention(&["status", "--json", "--stuck-after-mins", "20"]),
        (Some(0), Some("queued".into())),
        "15 idle minutes are not stuck at a 20-minute threshold"
    );
    let bad = on(&db, &["status", "--heartbeat-late-fraction", "1.5"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(assert_one_sentence(&bad).contains("between 0 and 1"));
}

#[tokio::test]
async fn hostile_text_is_defused_in_the_table_and_escaped_in_json() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    sqlx::query(
        "UPDATE legacy_space_publication_bootstraps SET last_error_code = $2 WHERE id = $1",
    )
    .bind(job.bootstrap)
    .bind("x\u{1b}]0;pwned\u{7}\u{9b}2J\u{202e}")
    .execute(&db.pool)
    .await
    .expect("hostile");
    for args in [
        &["status"][..],
        &["status", "--wide"],
        &["status", "--json"],
    ] {
        let output = on(&db, args);
        let out = stdout(&output);
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{9b}') && !out.contains('\u{202e}'),
            "{args:?}: {out:?}"
        );
    }
}

#[tokio::test]
async fn retry_applies_refuses_and_dry_runs_with_the_documented_exit_codes() {
    let db = TestDb::migrated().await;
    let failed = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    let running = fixture::job(&db.pool, &JobSpec::new("tenant-a", "running")).await;
    fixture::job(&db.pool, &JobSpec::new("tenant-b", "queued")).await;
    let space = failed.space.to_string();

    let image = fixture::ledger_image(&db.pool).await;
    let dry = on(&db, &["retry", &space, "--reason", "check", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert!(
        stdout(&dry).contains("run_state: failed → queued"),
        "{}",
        stdout(&dry)
    );
    assert!(stdout(&dry).contains("nothing was written"));
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "dry run writes nothing"
    );

    let wrong_state = on(
        &db,
        &[
            "retry",
            &running.space.to_string(),
            "--reason",
            "nope",
            "--yes",
        ],
    );
    assert_eq!(wrong_state.status.code(), Some(3));
    assert!(
        stdout(&wrong_state).contains("is running, retry needs failed or canceled"),
        "{}",
        stdout(&wrong_state)
    );
    let stale = on(
        &db,
        &[
            "retry",
            &space,
            "--reason",
            "x",
            "--yes",
            "--row-version",
            "3",
        ],
    );
    assert_eq!(stale.status.code(), Some(3));
    assert!(
        stdout(&stale).contains("changed since you looked (row_version 3 → 7"),
        "{}",
        stdout(&stale)
    );
    let outside = on(
        &db,
        &[
            "retry", &space, "--reason", "x", "--yes", "--tenant", "tenant-b",
        ],
    );
    assert_eq!(outside.status.code(), Some(3));
    assert!(
        stdout(&outside).contains("outside this console's scope"),
        "{}",
        stdout(&outside)
    );
    let typo = on(
        &db,
        &[
            "retry", &space, "--reason", "x", "--yes", "--tenant", "Tenant-A",
        ],
    );
    assert_eq!(typo.status.code(), Some(7), "a scope that matches nothing");
    assert!(
        assert_one_sentence(&typo).contains(
            "no tenant Tenant-A has bootstraps or knowledge spaces; did you mean tenant-a"
        ),
        "{}",
        stderr(&typo)
    );
    let unconfirmed = on(&db, &["retry", &space, "--reason", "x"]);
    assert_eq!(unconfirmed.status.code(), Some(2), "no terminal, no --yes");
    assert_one_sentence(&unconfirmed);
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "refusals write nothing"
    );

    let applied = on(&db, &["retry", &space, "--reason", "parser fixed", "--yes"]);
    assert_eq!(applied.status.code(), Some(0), "{}", stdout(&applied));
    assert!(stdout(&applied).contains("1 applied, 0 refused"));
    let (state, audits): (String, i64) = sqlx::query_as(
        "SELECT run_state, (SELECT count(*) FROM bootstrap_console.audit_log) \
         FROM legacy_space_publication_bootstraps WHERE id = $1",
    )
    .bind(failed.bootstrap)
    .fetch_one(&db.pool)
    .await
    .expect("state");
    assert_eq!((state.as_str(), audits), ("queued", 1));
}

#[tokio::test]
async fn bulk_actions_select_by_filter_act_one_by_one_and_respect_the_limit() {
    let db = TestDb::migrated().await;
    for _ in 0..3 {
        fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    }
    fixture::job(&db.pool, &JobSpec::new("tenant-b", "failed")).await;
    fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    let image = fixture::ledger_image(&db.pool).await;

    let capped = on(
        &db,
        &[
            "retry", "--state", "failed", "--reason", "x", "--yes", "--limit", "2",
        ],
    );
    assert_eq!(capped.status.code(), Some(2));
    assert!(assert_one_sentence(&capped).contains("more than 2 spaces match (--limit 2)"));
    assert_eq!(fixture::ledger_image(&db.pool).await, image);

    let bulk = on(
        &db,
        &[
            "retry",
            "--tenant",
            "tenant-a",
            "--state",
            "failed",
            "--reason",
            "incident 9",
            "--yes",
        ],
    );
    assert_eq!(bulk.status.code(), Some(0), "{}", stdout(&bulk));
    assert!(
        stdout(&bulk).contains("3 applied, 0 refused"),
        "{}",
        stdout(&bulk)
    );
    let left: Vec<(String, String)> = sqlx::query_as(
        "SELECT tenant_id, run_state FROM legacy_space_publication_bootstraps WHERE run_state = 'failed'",
    )
    .fetch_all(&db.pool)
    .await
    .expect("left");
    assert_eq!(left, vec![("tenant-b".to_string(), "failed".to_string())]);

    let cancel = on(
        &db,
        &[
            "cancel",
            "--tenant",
            "tenant-a",
            "--reason",
            "pause rollout",
            "--yes",
            "--state",
            "queued",
        ],
    );
    assert_eq!(cancel.status.code(), Some(0), "{}", stdout(&cancel));
    assert!(stdout(&cancel).contains("4 applied"), "{}", stdout(&cancel));
}

#[tokio::test]
async fn lease_remove_deletes_the_named_lease_and_refuses_a_gone_one() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("tenant-a", "queued")).await;
    let lease = fixture::lease(&db.pool, "tenant-a", job.space, 3600)
        .await
        .to_string();

    let dry = on(
        &db,
        &[
            "lease",
            "remove",
            &lease,
            "--reason",
            "writer gone",
            "--dry-run",
        ],
    );
    assert_eq!(dry.status.code(), Some(0), "{}", stdout(&dry));
    assert!(stdout(&dry).contains("deleted"), "{}", stdout(&dry));
    let removed = on(
        &db,
        &[
            "lease",
            "remove",
            &lease,
            "--reason",
            "writer gone",
            "--yes",
        ],
    );
    assert_eq!(removed.status.code(), Some(0), "{}", stdout(&removed));
    let again = on(
        &db,
        &["lease", "remove", &lease, "--reason", "again", "--yes"],
    );
    assert_eq!(again.status.code(), Some(3));
    assert!(
        stdout(&again).contains("no such lease"),
        "{}",
        stdout(&again)
    );
    assert_eq!(fixture::audit_count(&db.pool).await, 1);
}

#[tokio::test]
async fn migrate_twice_applies_once_and_then_says_there_is_nothing_to_do() {
    let db = TestDb::empty().await;
    let first = on(&db, &["migrate"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(stdout(&first).contains("applied console schema unit 0001_audit_log"));
    let second = on(&db, &["migrate"]);
    assert_eq!(second.status.code(), Some(0));
    assert!(
        stdout(&second).contains("already up to date"),
        "{}",
        stdout(&second)
    );
}

#[tokio::test]
async fn bad_connections_and_bad_input_get_one_sentence_a_code_and_no_write() {
    // A socket directory with no server in it.
    let unreachable = run(&[
        "status",
        "--database-url",
        "postgres://ops@%2Ftmp%2Fbc-no-such-server:5432/x",
    ]);
    assert_eq!(unreachable.status.code(), Some(4));
    let sentence = assert_one_sentence(&unreachable);
    assert!(
        sentence.contains("cannot reach the database")
            && sentence.contains("no such socket")
            && sentence.contains("--database-url, DATABASE_URL or the PG* variables")
            && sentence.contains("bootstrap-console demo"),
        "{sentence}"
    );
    // Nothing listens on a TCP port: said with its cause, not "pool timed out" after retries.
    let refused = run(&["status", "--database-url", "postgres://ops@127.0.0.1:1/x"]);
    assert_eq!(refused.status.code(), Some(4));
    assert!(
        assert_one_sentence(&refused).contains("connection refused"),
        "{}",
        stderr(&refused)
    );

    let malformed_url = run(&[
        "status",
        "--database-url",
        "postgres://ops:s3cret@host:notaport/x",
    ]);
    assert_eq!(malformed_url.status.code(), Some(2));
    let sentence = assert_one_sentence(&malformed_url);
    assert!(
        !sentence.contains("s3cret"),
        "the password is never printed: {sentence}"
    );

    let db = TestDb::empty().await;
    let mut conn = db.connect().await;
    schema::apply_unit(&mut conn, &schema::PLATFORM_STANDIN)
        .await
        .expect("stand-in");
    let no_ledger = on(&db, &["status"]);
    assert_eq!(no_ledger.status.code(), Some(5));
    assert!(assert_one_sentence(&no_ledger).contains("no bootstrap ledger"));

    let migrated = TestDb::migrated().await;
    fixture::job(&migrated.pool, &JobSpec::new("tenant-a", "failed")).await;
    let image = fixture::ledger_image(&migrated.pool).await;
    let malformed_id = on(
        &migrated,
        &["retry", "12345-not-an-id", "--reason", "x", "--yes"],
    );
    assert_eq!(malformed_id.status.code(), Some(2));
    assert!(assert_one_sentence(&malformed_id).contains("is not a space or bootstrap id"));
    let no_reason = on(
        &migrated,
        &["retry", "--state", "failed", "--reason", " ", "--yes"],
    );
    assert_eq!(no_reason.status.code(), Some(2));
    assert_eq!(
        fixture::ledger_image(&migrated.pool).await,
        image,
        "nothing written"
    );
}

#[tokio::test]
async fn a_wrong_password_is_a_login_refusal_that_never_shows_the_password() {
    let cluster = common::password_cluster().await;
    let url = cluster
        .url("postgres")
        .replace("postgres@", "ops:wr0ng-secret@");
    let output = run(&["status", "--database-url", &url]);
    assert_eq!(output.status.code(), Some(4));
    let sentence = assert_one_sentence(&output);
    assert!(sentence.contains("refused the login"), "{sentence}");
    assert!(!sentence.contains("wr0ng-secret"), "{sentence}");
}

#[test]
fn completions_are_printed_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let output = run(&["completions", shell]);
        assert_eq!(output.status.code(), Some(0));
        assert!(stdout(&output).contains("bootstrap-console"), "{shell}");
    }
}

#[test]
fn a_bad_polling_setting_is_refused_before_anything_starts() {
    for flag in ["--delta-slack-secs=-1", "--interval=0"] {
        let output = run(&["demo", "--text", flag]);
        assert_eq!(output.status.code(), Some(2), "{flag}: {}", stderr(&output));
        let sentence = assert_one_sentence(&output);
        assert!(sentence.contains("is outside"), "{sentence}");
        assert!(
            !stdout(&output).contains("SANDBOX"),
            "no private PostgreSQL was started"
        );
    }
}

#[tokio::test]
async fn under_a_locale_that_is_not_utf8_the_table_is_ascii_and_json_stays_utf8() {
    let db = TestDb::migrated().await;
    fixture::job(
        &db.pool,
        &JobSpec {
            error_message: "parser \u{1b}[2Jcrashed",
            ..JobSpec::new("株式会社\u{202e}", "failed")
        },
    )
    .await;
    let url = db.url();
    let table = common::cli::run_in_locale(&["status", "--wide", "--database-url", &url], "C");
    let text = stdout(&table);
    assert!(table.stdout.is_ascii(), "{text}");
    assert!(text.contains("\\u{682a}\\u{5f0f}"), "{text}");
    assert!(text.contains("parser \\ecrashed"), "{text}");
    let json = common::cli::run_in_locale(&["status", "--json", "--database-url", &url], "C");
    let document: serde_json::Value =
        serde_json::from_slice(&json.stdout).expect("JSON, whatever the locale");
    assert_eq!(document["spaces"][0]["tenant_id"], "株式会社\u{202e}");
}

#[tokio::test]
async fn a_read_url_where_nothing_answers_is_named_as_such() {
    let db = TestDb::migrated().await;
    fixture::job(&db.pool, &JobSpec::new("acme", "queued")).await;
    let nothing = "postgres://postgres@%2Ftmp%2Fbc-no-such-standby:5432/sandbox";
    let status = on(&db, &["status", "--read-url", nothing]);
    let err = stderr(&status);
    assert!(
        err.contains("--read-url") && err.contains("reading the primary instead"),
        "{err}"
    );
    assert!(
        stdout(&status).contains("1 of 1 spaces shown"),
        "{}",
        stdout(&status)
    );
    assert!(
        !err.contains("name the database with --database-url"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn audit_list_prints_the_newest_records_as_a_table_or_json() {
    let db = TestDb::migrated().await;
    let empty = on(&db, &["audit", "list"]);
    assert_eq!(empty.status.code(), Some(0), "{}", stderr(&empty));
    assert_eq!(stdout(&empty), "no audit records in scope\n");

    let a = fixture::job(&db.pool, &JobSpec::new("tenant-a", "failed")).await;
    // A tenant id written by another program, with an escape sequence in it.
    let b = fixture::job(&db.pool, &JobSpec::new("tb\u{1b}[2J", "failed")).await;
    for (job, reason) in [(&a, "first retry"), (&b, "second retry")] {
        let space = job.space.to_string();
        let done = on(&db, &["retry", &space, "--reason", reason, "--yes"]);
        assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    }
    let listed = on(&db, &["audit", "list"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let text = stdout(&listed);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("AT (UTC)") && lines[0].contains("REASON"));
    assert!(
        lines[1].contains("second retry") && lines[1].contains("tb␛"),
        "{text}"
    );
    assert!(
        lines[2].contains("first retry") && lines[2].contains("tenant-a"),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "no escape reaches the terminal");
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{text}");
    // `12-03 17:51:25` at 80 columns: month first.
    assert_eq!(lines[1].as_bytes()[2], b'-', "{text}");
    // A wider terminal gives the reason its room and the times their year.
    let wide = run_with_env(
        &["audit", "list", "--database-url", &db.url()],
        &[("COLUMNS", "120")],
    );
    let wide_text = stdout(&wide);
    // `2026-12-03 17:51:25`: the year first.
    assert!(
        wide_text.lines().skip(1).all(|l| l.as_bytes()[4] == b'-'
            && l.as_bytes()[7] == b'-'
            && l.chars().count() <= 120),
        "{wide_text}"
    );
    assert_eq!(wide_text.lines().count(), 3, "{wide_text}");

    let scoped = on(&db, &["audit", "list", "--tenant", "tenant-a", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&scoped.stdout).expect("JSON");
    assert_eq!(doc["schema"], "bootstrap-console.audit/v1");
    let records = doc["records"].as_array().expect("records");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["knowledge_space_id"], a.space.to_string());
    assert_eq!(records[0]["action"], "retry");
    assert_eq!(records[0]["reason"], "first retry");

    let one = on(&db, &["audit", "list", "--limit", "1", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&one.stdout).expect("JSON");
    assert_eq!(doc["records"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        doc["records"][0]["tenant_id"], "tb\u{1b}[2J",
        "newest first, whole"
    );
    assert!(
        !String::from_utf8_lossy(&one.stdout).contains('\u{1b}'),
        "escaped"
    );

    let no_log = TestDb::platform_only().await;
    let refused = on(&no_log, &["audit", "list"]);
    assert_ne!(refused.status.code(), Some(0));
    assert!(assert_one_sentence(&refused).contains("migrate"));
}
