//! The roles `bootstrap-console grants` prints, created from its output on a real PostgreSQL
//! and used for everything: every view, every action, `migrate`, and the audit log, which no
//! console role can change.

use crate::common;

use std::process::Output;

use common::TestDb;
use common::cli::{assert_one_sentence, run, stderr, stdout};
use common::fixture::{self, JobSpec};
use common::pty::Console;
use sqlx::{ConnectOptions, Connection, PgConnection};

/// Runs `grants` for a group role named after `duty` and this database, applies its output
/// as the owner (a superuser here), and creates a person who logs in and is a member of it.
/// Returns (group, person).
pub(crate) async fn person_with(db: &TestDb, duty: &str, extra: &[&str]) -> (String, String) {
    let group = format!("{duty}_{}", db.name);
    let person = format!("{duty}_person_{}", db.name);
    let script = grants_script(&group, extra);
    sqlx::raw_sql(sqlx::AssertSqlSafe(script))
        .execute(&db.pool)
        .await
        .expect("the printed SQL runs as the owner");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{person}\" LOGIN PASSWORD 'pw' IN ROLE \"{group}\""
    )))
    .execute(&db.pool)
    .await
    .expect("a person with the role");
    (group, person)
}

fn grants_script(group: &str, extra: &[&str]) -> String {
    let mut args = vec!["grants", "--role", group];
    args.extend(extra);
    let printed = run(&args);
    assert_eq!(printed.status.code(), Some(0), "{}", stderr(&printed));
    stdout(&printed)
}

/// The binary with `args`, logged in as `person`.
fn as_person(db: &TestDb, person: &str, args: &[&str]) -> Output {
    let url = db.url_as(person);
    let mut all = args.to_vec();
    all.extend(["--database-url", url.as_str()]);
    run(&all)
}

async fn connect_as(db: &TestDb, person: &str) -> PgConnection {
    db.options()
        .username(person)
        .password("pw")
        .connect()
        .await
        .expect("the person logs in")
}

/// The SQLSTATE and message of a statement that must fail.
async fn refused(conn: &mut PgConnection, sql: &str) -> (String, String) {
    match sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
        .execute(&mut *conn)
        .await
    {
        Ok(_) => panic!("{sql} was allowed"),
        Err(sqlx::Error::Database(e)) => (
            e.code().unwrap_or_default().to_string(),
            e.message().to_string(),
        ),
        Err(e) => panic!("{sql}: {e}"),
    }
}

/// The `audit chain head:` hash an action printed.
fn printed_head(output: &Output) -> String {
    let out = stdout(output);
    let line = out
        .lines()
        .find(|l| l.starts_with("audit chain head: "))
        .unwrap_or_else(|| panic!("no head line in {out}"));
    line.rsplit(' ').next().expect("a hash").to_string()
}

/// Every view, through a real terminal: none says a grant is missing.
fn every_view_renders(db: &TestDb, person: &str, access: &str, records: usize) {
    let url = db.url_as(person);
    let mut console = Console::start(&["watch", "--database-url", &url], &[], 120, 30);
    // The header names the access at once; the board's rows come with the first snapshot.
    let board = console.wait_until("the board", 20, |s| {
        s.contains(access) && s.contains("acme")
    });
    assert!(board.contains("acme"), "{board}");
    for (view, shown) in [
        ("tenants", "acme"),
        ("leases", "bulk-upload"),
        ("audit", "audit chain intact"),
        ("health", "finding"),
    ] {
        console.send("\t");
        let screen = console.wait_until(view, 20, |s| s.contains(shown));
        // What the role may not do is said once, in the status line; the views say nothing
        // is missing.
        let body: String = screen
            .lines()
            .filter(|l| !l.contains("read-only: ") && !l.contains("not possible: "))
            .collect();
        for wrong in [
            "lacks",
            "permission denied",
            "unavailable",
            "check failed",
            "not verified",
        ] {
            assert!(!body.contains(wrong), "{view} view says {wrong}:\n{screen}");
        }
        if view == "audit" {
            assert!(
                screen.contains(&format!("intact: {records} records")),
                "{screen}"
            );
        }
    }
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_role_from_grants_watches_acts_and_cannot_change_the_audit_log() {
    let db = TestDb::migrated().await;
    let failed = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let running = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let blocked = fixture::job(&db.pool, &JobSpec::new("acme", "queued")).await;
    let lease = fixture::lease(&db.pool, "acme", blocked.space, 3600).await;
    // A writer at work, whose lease stays: the leases view has a line to show.
    let writing = fixture::job(&db.pool, &JobSpec::new("acme", "queued")).await;
    fixture::lease(&db.pool, "acme", writing.space, 60).await;
    let (group, ops) = person_with(&db, "ops", &[]).await;

    // Reading.
    let status = as_person(&db, &ops, &["status"]);
    assert_eq!(status.status.code(), Some(1), "{}", stderr(&status));
    let check = as_person(&db, &ops, &["check"]);
    assert!(
        matches!(check.status.code(), Some(0 | 1)) && stderr(&check).is_empty(),
        "{}",
        stderr(&check)
    );
    let verify = as_person(&db, &ops, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
    assert!(stdout(&verify).contains("audit chain intact: 0 records"));

    // Every action.
    let space = failed.space.to_string();
    let retry = as_person(&db, &ops, &["retry", &space, "--reason", "fixed", "--yes"]);
    assert_eq!(retry.status.code(), Some(0), "{}", stderr(&retry));
    assert!(
        stdout(&retry).contains("retry applied"),
        "{}",
        stdout(&retry)
    );
    let space = running.space.to_string();
    let cancel = as_person(&db, &ops, &["cancel", &space, "--reason", "halt", "--yes"]);
    assert_eq!(cancel.status.code(), Some(0), "{}", stderr(&cancel));
    let lease_id = lease.to_string();
    let removed = as_person(
        &db,
        &ops,
        &[
            "lease",
            "remove",
            &lease_id,
            "--reason",
            "writer gone",
            "--yes",
        ],
    );
    assert_eq!(removed.status.code(), Some(0), "{}", stderr(&removed));
    let head = printed_head(&removed);
    let verify = as_person(&db, &ops, &["audit", "verify", "--expect-head", &head]);
    assert_eq!(verify.status.code(), Some(0), "{}", stdout(&verify));
    assert!(stdout(&verify).contains("audit chain intact: 3 records"));
    let actors: Vec<String> =
        sqlx::query_scalar("SELECT action FROM bootstrap_console.audit_log ORDER BY chain_seq")
            .fetch_all(&db.pool)
            .await
            .expect("records");
    assert_eq!(actors, ["retry", "cancel", "remove_mutation_lease"]);

    // The console through a terminal, and one action there too.
    every_view_renders(&db, &ops, "READ-WRITE", 3);
    let again = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let url = db.url_as(&ops);
    let mut console = Console::start(&["watch", "--database-url", &url], &[], 120, 30);
    console.wait_ready("READ-WRITE", 20);
    console.send("/");
    console.send(&again.space.to_string()[..8]);
    console.send("\r");
    console.wait_until("one space", 10, |s| s.contains(" 1 of "));
    console.send("\r");
    console.wait_for("── bootstrap", 10);
    console.send("r");
    console.wait_for("will change", 10);
    console.reason_and_yes("through the terminal");
    console.wait_for("retry applied", 10);
    console.send("\r");
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);

    // `migrate` is not theirs to run.
    let migrate = as_person(&db, &ops, &["migrate"]);
    assert_eq!(migrate.status.code(), Some(8), "{}", stderr(&migrate));
    let sentence = assert_one_sentence(&migrate);
    assert!(
        sentence.contains("migrate must be run by role ")
            && sentence.contains(&format!("not by role {ops}")),
        "{sentence}"
    );

    // The audit log: readable, never changeable, and owned by someone else.
    let mut conn = connect_as(&db, &ops).await;
    for sql in [
        "UPDATE bootstrap_console.audit_log SET reason = 'nothing happened'",
        "DELETE FROM bootstrap_console.audit_log",
        "TRUNCATE bootstrap_console.audit_log",
        "INSERT INTO bootstrap_console.audit_log (actor, host, action, tenant_id, \
           knowledge_space_id, bootstrap_id, reason, outcome, chain_seq) \
         VALUES ('x', 'x', 'retry', 'acme', gen_random_uuid(), gen_random_uuid(), 'x', \
           'applied', 1)",
        "INSERT INTO bootstrap_console.audit_log (actor, host, action, tenant_id, \
           knowledge_space_id, bootstrap_id, reason, outcome, at) \
         VALUES ('x', 'x', 'retry', 'acme', gen_random_uuid(), gen_random_uuid(), 'x', \
           'applied', now() - interval '1 day')",
        "ALTER TABLE bootstrap_console.audit_log DISABLE TRIGGER USER",
        // The chain's head is locked by the database's trigger only: no role can hold
        // every console's actions by locking it.
        "SELECT * FROM bootstrap_console.audit_chain_head FOR UPDATE",
        "UPDATE bootstrap_console.audit_chain_head SET chain_seq = 0",
    ] {
        let (code, message) = refused(&mut conn, sql).await;
        assert!(
            code == "42501" || message.contains("must be owner"),
            "{sql}: {code} {message}"
        );
    }
    let owner_is_theirs: bool = sqlx::query_scalar(
        "SELECT pg_has_role($1, relowner, 'USAGE') FROM pg_class \
         WHERE oid = 'bootstrap_console.audit_log'::regclass",
    )
    .bind(&ops)
    .fetch_one(&db.pool)
    .await
    .expect("owner");
    assert!(!owner_is_theirs);

    // Granted by mistake, the changes are still refused, by the log itself.
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "GRANT UPDATE, DELETE, TRUNCATE ON bootstrap_console.audit_log TO \"{group}\""
    )))
    .execute(&db.pool)
    .await
    .expect("a grant by mistake");
    for sql in [
        "UPDATE bootstrap_console.audit_log SET reason = 'nothing happened'",
        "DELETE FROM bootstrap_console.audit_log",
        "TRUNCATE bootstrap_console.audit_log",
    ] {
        let (code, message) = refused(&mut conn, sql).await;
        assert_eq!(code, "42501", "{sql}: {message}");
        assert!(message.contains("append-only"), "{sql}: {message}");
    }
    let _ = conn.close().await;
    assert_eq!(fixture::audit_count(&db.pool).await, 4);

    // An action that outlives its deadline is looked up with the operator's own rights: its
    // transaction is ended (a role may end its own sessions) and the log is searched.
    let busy = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let holder = fixture::hold_row(&db.pool, busy.bootstrap).await;
    let space = busy.space.to_string();
    let late = as_person(
        &db,
        &ops,
        &[
            "cancel",
            &space,
            "--reason",
            "late",
            "--yes",
            "--apply-deadline-secs",
            "1",
        ],
    );
    let out = stdout(&late);
    assert_eq!(late.status.code(), Some(4), "{out}");
    assert!(
        out.contains("no answer within the deadline") && out.contains("not applied"),
        "{out}"
    );
    assert!(
        !out.contains("failed too") && !out.contains("permission"),
        "{out}"
    );
    // Re-driven past its deadline while the row is still held, the lookup waits for the row
    // through the database's function (the role holds no lock of its own on the table): the
    // holder could be the request's earlier run, so the outcome is unknown.
    let request = out
        .lines()
        .find_map(|l| l.strip_prefix("request "))
        .expect("a request line")
        .trim()
        .to_string();
    let redrive = |args: &[&str]| {
        let mut all = vec![
            "cancel",
            space.as_str(),
            "--reason",
            "late",
            "--yes",
            "--apply-deadline-secs",
            "1",
            "--request-id",
            request.as_str(),
        ];
        all.extend(args);
        as_person(&db, &ops, &all)
    };
    let held = redrive(&[]);
    let out = stdout(&held);
    assert_eq!(held.status.code(), Some(6), "{out}{}", stderr(&held));
    assert!(
        out.contains("outcome unknown") && !out.contains("permission"),
        "{out}"
    );
    holder.rollback().await.expect("release");
    let finished = redrive(&[]);
    assert_eq!(finished.status.code(), Some(0), "{}", stdout(&finished));
    assert_eq!(fixture::audit_count(&db.pool).await, 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_observer_role_from_grants_reads_everything_and_writes_nothing() {
    let db = TestDb::migrated().await;
    let failed = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let running = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let lease = fixture::lease(&db.pool, "acme", running.space, 3600).await;
    let (_, watcher) = person_with(&db, "watcher", &["--read-only"]).await;
    let image = fixture::ledger_image(&db.pool).await;

    let status = as_person(&db, &watcher, &["status"]);
    assert_eq!(status.status.code(), Some(1), "{}", stderr(&status));
    let check = as_person(&db, &watcher, &["check", "--json"]);
    assert!(
        matches!(check.status.code(), Some(0 | 1)),
        "{}",
        stderr(&check)
    );
    assert!(!stdout(&check).contains("projection_set_publication_heads"));
    let verify = as_person(&db, &watcher, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
    assert!(
        !stdout(&verify).contains("not checked"),
        "{}",
        stdout(&verify)
    );
    every_view_renders(&db, &watcher, "READ-ONLY", 0);
    // Without the head the database keeps, verify says what it could not check.
    let group = format!("watcher_{}", db.name);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "REVOKE SELECT ON bootstrap_console.audit_chain_head FROM \"{group}\""
    )))
    .execute(&db.pool)
    .await
    .expect("head taken back");
    let verify = as_person(&db, &watcher, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
    assert!(
        stdout(&verify).contains("its end was not checked"),
        "{}",
        stdout(&verify)
    );

    let space = failed.space.to_string();
    let lease_id = lease.to_string();
    // Each refusal names what that action needs: EXECUTE on its function, and on the wait
    // the lookup of an unanswered action makes.
    let function = |name: &str| format!("EXECUTE on function bootstrap_console.{name}");
    let wait = function("await_action_row");
    for (args, needs) in [
        (
            vec!["retry", space.as_str(), "--reason", "x", "--yes"],
            format!("{}, {wait}", function("retry_bootstrap")),
        ),
        (
            vec!["cancel", space.as_str(), "--reason", "x", "--yes"],
            format!("{}, {wait}", function("cancel_bootstrap")),
        ),
        (
            vec![
                "lease",
                "remove",
                lease_id.as_str(),
                "--reason",
                "x",
                "--yes",
            ],
            format!("{}, {wait}", function("remove_mutation_lease")),
        ),
    ] {
        let refused = as_person(&db, &watcher, &args);
        assert_eq!(
            refused.status.code(),
            Some(8),
            "{args:?}: {}",
            stderr(&refused)
        );
        let sentence = assert_one_sentence(&refused);
        assert!(
            sentence.contains(&format!("role {watcher} lacks {needs}:")),
            "{sentence}"
        );
    }
    let migrate = as_person(&db, &watcher, &["migrate"]);
    assert_eq!(migrate.status.code(), Some(8), "{}", stderr(&migrate));
    assert!(assert_one_sentence(&migrate).contains("migrate must be run by role "));
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "nothing was written"
    );
}

/// One grant of the operator's script taken back: the statement that takes it back, and the
/// words the console must name it with.
fn each_grant_taken_back(script: &str, group: &str) -> Vec<(String, String)> {
    let to = format!(" TO \"{group}\";");
    let mut cases = Vec::new();
    for line in script.lines().filter(|l| l.starts_with("GRANT ")) {
        let Some(grant) = line
            .strip_prefix("GRANT ")
            .and_then(|l| l.strip_suffix(&to))
        else {
            continue;
        };
        if grant.contains("SCHEMA \"public\"") {
            continue; // every role may use schema public unless it was taken from PUBLIC
        }
        if grant.contains("audit_chain_head") {
            continue; // read by `audit verify` only: no action needs it
        }
        let (privilege, on) = grant.split_once(" ON ").expect("privilege ON object");
        let shown = |on: &str| {
            on.replace('"', "")
                .replace("public.", "")
                .replace("SCHEMA ", "schema ")
                .replace("FUNCTION ", "function ")
        };
        match privilege.split_once(" (") {
            Some((verb, columns)) => {
                for column in columns.trim_end_matches(')').split(", ") {
                    cases.push((
                        format!("REVOKE {verb} ({column}) ON {on} FROM \"{group}\""),
                        format!("{verb} ({column}) on {}", shown(on)),
                    ));
                }
            }
            None => {
                for table in on.split(", ") {
                    cases.push((
                        format!("REVOKE {privilege} ON {table} FROM \"{group}\""),
                        format!("{privilege} on {}", shown(table)),
                    ));
                }
            }
        }
    }
    cases
}

#[tokio::test(flavor = "multi_thread")]
async fn a_role_missing_any_one_operator_grant_is_told_which_at_connect() {
    let db = TestDb::migrated().await;
    let failed = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let running = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let lease = fixture::lease(&db.pool, "acme", failed.space, 3600)
        .await
        .to_string();
    let (group, ops) = person_with(&db, "short", &[]).await;
    let script = grants_script(&group, &[]);
    let cases = each_grant_taken_back(&script, &group);
    // Three tables read, USAGE on the console's schema, the audit log read, four functions.
    assert_eq!(cases.len(), 3 + 1 + 1 + 4, "{cases:#?}");
    let image = fixture::ledger_image(&db.pool).await;
    let space = failed.space.to_string();
    let busy = running.space.to_string();
    let retry = ["retry", space.as_str(), "--reason", "x", "--yes"];
    let cancel = ["cancel", busy.as_str(), "--reason", "x", "--yes"];
    let remove = ["lease", "remove", lease.as_str(), "--reason", "x", "--yes"];
    for (revoke, named) in &cases {
        // The whole script again (it restores every grant), then one taken back.
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("{script}\n{revoke};")))
            .execute(&db.pool)
            .await
            .unwrap_or_else(|e| panic!("{revoke}: {e}"));
        // The action that needs the grant.
        let args: &[&str] = if named.contains("remove_mutation_lease") {
            &remove
        } else if named.contains("cancel_bootstrap") {
            &cancel
        } else {
            &retry
        };
        let refused = as_person(&db, &ops, args);
        assert_eq!(
            refused.status.code(),
            Some(8),
            "{revoke}: {}{}",
            stderr(&refused),
            stdout(&refused)
        );
        let sentence = assert_one_sentence(&refused);
        assert!(
            sentence.contains(&format!("role {ops} lacks {named}")),
            "{revoke}: {sentence}"
        );
    }
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "nothing was written"
    );

    // Only what an action needs counts: without the lease removal's function, a retry is
    // still planned.
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "{script}\nREVOKE EXECUTE ON FUNCTION bootstrap_console.remove_mutation_lease \
         FROM \"{group}\";"
    )))
    .execute(&db.pool)
    .await
    .expect("EXECUTE taken back");
    let planned = as_person(&db, &ops, &["retry", &space, "--reason", "x", "--dry-run"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stderr(&planned));

    // The live console says it at connect: which actions it may not take, and why.
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "{script}\nREVOKE EXECUTE ON FUNCTION bootstrap_console.retry_bootstrap \
         FROM \"{group}\";"
    )))
    .execute(&db.pool)
    .await
    .expect("one function taken back");
    let url = db.url_as(&ops);
    let mut console = Console::start(&["watch", "--database-url", &url], &[], 200, 30);
    let screen = console.wait_for("not possible", 20);
    assert!(
        screen.contains(&format!(
            "retry not possible: role {ops} lacks EXECUTE on function \
             bootstrap_console.retry_bootstrap"
        )) && screen.contains("READ-WRITE"),
        "cancel and lease removal are still allowed:\n{screen}"
    );
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

#[test]
fn grants_refuses_a_name_that_cannot_be_printed_safely() {
    for (args, words) in [
        (
            vec!["grants", "--role", "ops$grants$"],
            "choose a plain name",
        ),
        (vec!["grants", "--role", ""], "must not be empty"),
        (vec!["grants", "--role", "public"], "reserved"),
        (vec!["grants", "--role", "pg_monitor"], "reserved"),
        (vec!["grants", "--role", "ops\\"], "choose a plain name"),
        (
            vec!["grants", "--role", "ops\u{202e}"],
            "choose a plain name",
        ),
        (
            vec!["grants", "--role", "ops", "--schema", "a\u{1b}]0;x"],
            "choose a plain name",
        ),
    ] {
        let output = run(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(assert_one_sentence(&output).contains(words), "{args:?}");
        assert!(stdout(&output).is_empty());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn migrate_is_for_the_ledgers_owner_who_then_owns_the_audit_log() {
    let db = TestDb::platform_only().await;
    // May create schemas in the database, but owns no ledger table: it must not own the log.
    let creator = format!("creator_{}", db.name);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{creator}\" LOGIN PASSWORD 'pw'; \
         GRANT CREATE ON DATABASE \"{}\" TO \"{creator}\";",
        db.name
    )))
    .execute(&db.pool)
    .await
    .expect("a role that may create schemas");
    let owner = owner_of(&db, "legacy_space_publication_bootstraps").await;
    let refused = as_person(&db, &creator, &["migrate"]);
    assert_eq!(refused.status.code(), Some(8), "{}", stderr(&refused));
    assert!(
        assert_one_sentence(&refused).contains(&format!(
            "migrate must be run by role {owner}, the owner of the ledger tables (or by a \
             superuser), not by role {creator}: whoever runs it owns the audit log"
        )),
        "{}",
        stderr(&refused)
    );
    let exists: bool =
        sqlx::query_scalar("SELECT to_regnamespace('bootstrap_console') IS NOT NULL")
            .fetch_one(&db.pool)
            .await
            .expect("schema");
    assert!(!exists, "nothing was created");

    let migrated = common::cli::on(&db, &["migrate"]);
    assert_eq!(migrated.status.code(), Some(0), "{}", stderr(&migrated));
    assert_eq!(owner_of(&db, "bootstrap_console.audit_log").await, owner);
}

async fn owner_of(db: &TestDb, table: &str) -> String {
    sqlx::query_scalar(
        "SELECT pg_get_userbyid(relowner)::text FROM pg_class WHERE oid = $1::regclass",
    )
    .bind(table)
    .fetch_one(&db.pool)
    .await
    .expect("the table's owner")
}

/// Another session takes bootstrap `id`'s row lock at once, or the test fails saying `why`.
async fn row_is_free(db: &TestDb, id: uuid::Uuid, why: &str) {
    let mut other = db.pool.acquire().await.expect("another session");
    sqlx::query(
        "SELECT 1 FROM legacy_space_publication_bootstraps WHERE id = $1 FOR UPDATE NOWAIT",
    )
    .bind(id)
    .execute(&mut *other)
    .await
    .unwrap_or_else(|e| panic!("{why}: {e}"));
}

/// A call of an action function, as a role connected with `conn`, with the operator's claimed
/// `actor`: (applied, refusal, audit id).
async fn call_retry(
    conn: &mut PgConnection,
    job: &fixture::Job,
    seen_state: &str,
    actor: &str,
    action_id: uuid::Uuid,
) -> Result<(bool, Option<String>, Option<i64>), sqlx::Error> {
    sqlx::query_as(
        "SELECT applied, refusal, audit_id FROM bootstrap_console.retry_bootstrap(\
           $1, $2, (SELECT completed_at FROM legacy_space_publication_bootstraps WHERE id = $1), \
           NULL, $3, 'jump-1', NULL, $4, $4, 'by hand', false)",
    )
    .bind(job.bootstrap)
    .bind(seen_state)
    .bind(actor)
    .bind(action_id)
    .fetch_one(&mut *conn)
    .await
}

/// Point by point, what an operator role made by `grants` could once do from psql and no longer
/// can, and what it can: act through the database's functions, each write with its record.
#[tokio::test(flavor = "multi_thread")]
async fn an_operator_role_writes_only_through_the_functions_each_write_with_its_record() {
    let db = TestDb::migrated().await;
    let failed = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let running = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let writer = fixture::lease(&db.pool, "acme", running.space, 60).await;
    let (group, ops) = person_with(&db, "ops", &[]).await;
    let (_, watcher) = person_with(&db, "watcher", &["--read-only"]).await;
    let image = fixture::ledger_image(&db.pool).await;
    let mut conn = connect_as(&db, &ops).await;

    // Every write from psql is refused, whatever it would have hidden.
    let (bootstrap, space) = (running.bootstrap, running.space);
    for sql in [
        format!(
            "INSERT INTO bootstrap_console.audit_log (actor, host, action, tenant_id, \
               knowledge_space_id, bootstrap_id, reason, outcome) \
             VALUES ('alice', 'bob@jump-1', 'retry', 'acme', '{space}', '{bootstrap}', 'x', \
               'applied')"
        ),
        format!(
            "UPDATE legacy_space_publication_bootstraps SET run_state = 'queued' \
             WHERE id = '{}'",
            failed.bootstrap
        ),
        format!(
            "UPDATE legacy_space_publication_bootstrap_items SET status = 'succeeded' \
             WHERE bootstrap_id = '{bootstrap}'"
        ),
        format!(
            "UPDATE legacy_space_publication_bootstraps \
             SET lease_expires_at = '2036-01-01' WHERE id = '{bootstrap}'"
        ),
        format!("DELETE FROM knowledge_space_mutation_leases WHERE id = '{writer}'"),
        "SELECT 1 FROM legacy_space_publication_bootstraps FOR UPDATE".to_string(),
        "SELECT 1 FROM legacy_space_publication_bootstraps FOR SHARE".to_string(),
    ] {
        let (code, message) = refused(&mut conn, &sql).await;
        assert_eq!(code, "42501", "{sql}: {message}");
    }
    sqlx::raw_sql("BEGIN")
        .execute(&mut conn)
        .await
        .expect("begin");
    let (code, message) = refused(
        &mut conn,
        "LOCK TABLE knowledge_space_mutation_leases IN ACCESS EXCLUSIVE MODE",
    )
    .await;
    assert_eq!(code, "42501", "{message}");
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut conn)
        .await
        .expect("rollback");
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "nothing was written"
    );
    assert_eq!(fixture::audit_count(&db.pool).await, 0);

    // A call that does not apply writes nothing and holds nothing: here a retry of a running
    // job, inside a transaction left open.
    sqlx::raw_sql("BEGIN")
        .execute(&mut conn)
        .await
        .expect("begin");
    let declined = call_retry(
        &mut conn,
        &running,
        "running",
        "alice",
        uuid::Uuid::now_v7(),
    )
    .await
    .expect("a call");
    assert_eq!(declined, (false, Some("wrong_state".into()), None));
    row_is_free(
        &db,
        running.bootstrap,
        "the row is not held by the declined call",
    )
    .await;
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut conn)
        .await
        .expect("rollback");

    // The wait a lookup makes: `false` while another transaction holds the row, and after
    // it, nothing held.
    let holder = fixture::hold_row(&db.pool, running.bootstrap).await;
    let wait = "SELECT free FROM bootstrap_console.await_action_row('bootstrap', $1, $2)";
    sqlx::raw_sql("SET lock_timeout = '200ms'")
        .execute(&mut conn)
        .await
        .expect("a short wait");
    let free: bool = sqlx::query_scalar(wait)
        .bind(running.bootstrap)
        .bind(uuid::Uuid::now_v7())
        .fetch_one(&mut conn)
        .await
        .expect("the wait");
    assert!(!free, "the row is held");
    holder.rollback().await.expect("release");
    sqlx::raw_sql("BEGIN")
        .execute(&mut conn)
        .await
        .expect("begin");
    let free: bool = sqlx::query_scalar(wait)
        .bind(running.bootstrap)
        .bind(uuid::Uuid::now_v7())
        .fetch_one(&mut conn)
        .await
        .expect("the wait");
    assert!(free);
    row_is_free(&db, running.bootstrap, "the wait holds nothing").await;
    sqlx::raw_sql("ROLLBACK; RESET lock_timeout")
        .execute(&mut conn)
        .await
        .expect("rollback");

    // The call applies, with its record; the role in the record is the one that logged in,
    // whatever role the session took and whatever actor it claimed.
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("SET ROLE \"{group}\"")))
        .execute(&mut conn)
        .await
        .expect("the group's role");
    let action = uuid::Uuid::now_v7();
    let applied = call_retry(&mut conn, &failed, "failed", "alice", action)
        .await
        .expect("a call");
    assert!(applied.0 && applied.1.is_none(), "{applied:?}");
    let (role, actor, state): (String, String, String) = sqlx::query_as(
        "SELECT a.db_role, a.actor, b.run_state FROM bootstrap_console.audit_log a \
         JOIN legacy_space_publication_bootstraps b ON b.id = a.bootstrap_id WHERE a.id = $1",
    )
    .bind(applied.2)
    .fetch_one(&db.pool)
    .await
    .expect("the record");
    assert_eq!(
        (role.as_str(), actor.as_str(), state.as_str()),
        (ops.as_str(), "alice", "queued")
    );
    // The same request again is applied before, not twice.
    let again = call_retry(&mut conn, &failed, "failed", "alice", action)
        .await
        .expect("a call");
    assert_eq!(again, (false, Some("applied_before".into()), applied.2));
    let _ = conn.close().await;

    // A role with no EXECUTE grant cannot call them: not even an observer.
    let mut observer = connect_as(&db, &watcher).await;
    let denied = call_retry(
        &mut observer,
        &failed,
        "failed",
        "mallory",
        uuid::Uuid::now_v7(),
    )
    .await
    .expect_err("no EXECUTE");
    assert_eq!(
        denied.as_database_error().and_then(|e| e.code()).as_deref(),
        Some("42501"),
        "{denied}"
    );
    let _ = observer.close().await;
    assert_eq!(fixture::audit_count(&db.pool).await, 1);

    // Racing consoles as that operator: each space retried once, one record each, and each
    // record names a change that happened.
    for _ in 0..5 {
        fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    }
    let runs: Vec<_> = (0..3)
        .map(|_| {
            let url = db.url_as(&ops);
            std::thread::spawn(move || {
                common::cli::run(&[
                    "retry",
                    "--state",
                    "failed",
                    "--reason",
                    "race",
                    "--yes",
                    "--database-url",
                    &url,
                ])
            })
        })
        .collect();
    for run in runs {
        let output = run.join().expect("a run");
        assert!(
            matches!(output.status.code(), Some(0 | 3)),
            "{}{}",
            stdout(&output),
            stderr(&output)
        );
    }
    let (records, changed): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE (a.row_after ->> 'row_version')::int \
                                         = (a.row_before ->> 'row_version')::int + 1 \
                                         AND a.db_role = $1) \
         FROM bootstrap_console.audit_log a",
    )
    .bind(&ops)
    .fetch_one(&db.pool)
    .await
    .expect("records");
    let queued: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM legacy_space_publication_bootstraps WHERE run_state = 'queued'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("queued");
    assert_eq!(
        (records, changed),
        (6, 6),
        "one record per retry, each with its change"
    );
    assert_eq!(queued, 6, "the five raced and the one retried by hand");

    // An action applied from psql in a transaction left open holds its row: another
    // operator's action on it waits out the lock timeout and names that session.
    let busy = fixture::job(&db.pool, &JobSpec::new("acme", "running")).await;
    let mut holder = connect_as(&db, &ops).await;
    sqlx::raw_sql("BEGIN")
        .execute(&mut holder)
        .await
        .expect("begin");
    let held: bool = sqlx::query_scalar(
        "SELECT applied FROM bootstrap_console.cancel_bootstrap($1, 'running', NULL, NULL, \
           'alice', 'jump-1', NULL, $2, $2, 'held open', false)",
    )
    .bind(busy.bootstrap)
    .bind(uuid::Uuid::now_v7())
    .fetch_one(&mut holder)
    .await
    .expect("a call");
    assert!(held);
    let idle: String = sqlx::query_scalar("SHOW idle_in_transaction_session_timeout")
        .fetch_one(&mut holder)
        .await
        .expect("setting");
    assert_eq!(
        idle, "1min",
        "the call capped how long its transaction may sit idle"
    );
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut holder)
        .await
        .expect("pid");
    let space = busy.space.to_string();
    let waited = as_person(&db, &ops, &["cancel", &space, "--reason", "x", "--yes"]);
    let out = stdout(&waited);
    assert_eq!(waited.status.code(), Some(4), "{out}{}", stderr(&waited));
    assert!(
        out.contains(&format!("held by pid {pid} (role {ops}")),
        "{out}"
    );
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut holder)
        .await
        .expect("rollback");
    // And a spoofed action id, one that another action's record bears, is refused outright:
    // it never passes for that record.
    let mut conn = connect_as(&db, &ops).await;
    let recorded: uuid::Uuid = sqlx::query_scalar(
        "SELECT action_id FROM bootstrap_console.audit_log WHERE action = 'retry' LIMIT 1",
    )
    .fetch_one(&db.pool)
    .await
    .expect("a record's action id");
    let spoofed: Result<(bool,), _> = sqlx::query_as(
        "SELECT applied FROM bootstrap_console.cancel_bootstrap($1, 'running', NULL, NULL, \
           'alice', 'jump-1', NULL, $2, $2, 'spoof', false)",
    )
    .bind(busy.bootstrap)
    .bind(recorded)
    .fetch_one(&mut conn)
    .await;
    let spoofed = spoofed.expect_err("refused").to_string();
    assert!(spoofed.contains("is the id of another action"), "{spoofed}");
    // A lease judged by a threshold under a minute is refused too, and a removal's record
    // keeps the threshold it was judged by.
    let young = fixture::lease(&db.pool, "acme", busy.space, 5).await;
    let hasty: Result<(bool,), _> = sqlx::query_as(
        "SELECT applied FROM bootstrap_console.remove_mutation_lease($1, 'acme', $2, \
           (SELECT acquired_at FROM knowledge_space_mutation_leases WHERE id = $1), false, \
           interval '1 second', 'alice', 'jump-1', NULL, $3, $3, 'hasty', false)",
    )
    .bind(young)
    .bind(busy.space)
    .bind(uuid::Uuid::now_v7())
    .fetch_one(&mut conn)
    .await;
    let hasty = hasty.expect_err("refused").to_string();
    assert!(hasty.contains("under a minute"), "{hasty}");
    // Nor one that passes for long by counting months and days: it is judged in seconds.
    let calendar: Result<(bool,), _> = sqlx::query_as(
        "SELECT applied FROM bootstrap_console.remove_mutation_lease($1, 'acme', $2, \
           (SELECT acquired_at FROM knowledge_space_mutation_leases WHERE id = $1), false, \
           interval '-1 year 360 days 00:01', 'alice', 'jump-1', NULL, $3, $3, 'hasty', false)",
    )
    .bind(young)
    .bind(busy.space)
    .bind(uuid::Uuid::now_v7())
    .fetch_one(&mut conn)
    .await;
    let calendar = calendar.expect_err("refused").to_string();
    assert!(calendar.contains("under a minute"), "{calendar}");
    // The same action on the same row under another request's action id is refused too.
    let (bootstrap, request): (uuid::Uuid, uuid::Uuid) = sqlx::query_as(
        "SELECT bootstrap_id, request_id FROM bootstrap_console.audit_log \
         WHERE action = 'retry' AND action_id = $1",
    )
    .bind(recorded)
    .fetch_one(&db.pool)
    .await
    .expect("the record");
    let other_request: Result<(bool,), _> = sqlx::query_as(
        "SELECT applied FROM bootstrap_console.retry_bootstrap($1, 'failed', NULL, NULL, \
           'alice', 'jump-1', NULL, $2, $3, 'spoof', false)",
    )
    .bind(bootstrap)
    .bind(uuid::Uuid::now_v7())
    .bind(recorded)
    .fetch_one(&mut conn)
    .await;
    let other_request = other_request.expect_err("refused").to_string();
    assert!(
        other_request.contains("is the id of another action"),
        "{other_request}"
    );
    let redriven: (bool,) = sqlx::query_as(
        "SELECT applied FROM bootstrap_console.retry_bootstrap($1, 'failed', NULL, NULL, \
           'alice', 'jump-1', NULL, $2, $3, 'again', false)",
    )
    .bind(bootstrap)
    .bind(request)
    .bind(recorded)
    .fetch_one(&mut conn)
    .await
    .expect("its own request, re-driven");
    assert!(!redriven.0, "applied before, not again");
    let _ = conn.close().await;
    let _ = holder.close().await;
    assert_eq!(
        fixture::lease_count(&db.pool).await,
        2,
        "the writer's and the young lease"
    );
}

/// The owners of the action functions, each with whether it is a superuser, and whether any
/// function is open to PUBLIC.
async fn function_owners(db: &TestDb) -> (Vec<(String, bool)>, bool) {
    let owners = sqlx::query_as(
        "SELECT DISTINCT pg_get_userbyid(p.proowner)::text, r.rolsuper FROM pg_proc p \
         JOIN pg_roles r ON r.oid = p.proowner \
         WHERE p.pronamespace = 'bootstrap_console'::regnamespace \
           AND p.proname IN ('retry_bootstrap', 'cancel_bootstrap', 'remove_mutation_lease', \
                             'await_action_row', 'bootstrap_action_apply')",
    )
    .fetch_all(&db.pool)
    .await
    .expect("owners");
    let public: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_proc p, aclexplode(coalesce(p.proacl, \
                          acldefault('f', p.proowner))) a \
                        WHERE p.pronamespace = 'bootstrap_console'::regnamespace \
                          AND p.proname IN ('retry_bootstrap', 'cancel_bootstrap', \
                                            'remove_mutation_lease', 'await_action_row', \
                                            'bootstrap_action_apply') \
                          AND a.grantee = 0)",
    )
    .fetch_one(&db.pool)
    .await
    .expect("acl");
    (owners, public)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_action_functions_run_as_the_ledgers_owner_and_never_as_a_superuser() {
    // A superuser owns the ledger (as in the sandbox): a role of their own, no superuser.
    let db = TestDb::migrated().await;
    let (owners, public) = function_owners(&db).await;
    assert_eq!(owners, [("bootstrap_console_actions".to_string(), false)]);
    assert!(!public, "no action function is open to PUBLIC");
    drop(db);

    // A platform role owns the ledger and runs `migrate` itself: the functions are its own.
    let db = TestDb::platform_only().await;
    let platform = format!("platform_{}", db.name);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{platform}\" LOGIN PASSWORD 'pw'; \
         GRANT CREATE ON DATABASE \"{}\" TO \"{platform}\"; \
         ALTER TABLE legacy_space_publication_bootstraps OWNER TO \"{platform}\"; \
         ALTER TABLE legacy_space_publication_bootstrap_items OWNER TO \"{platform}\"; \
         ALTER TABLE knowledge_space_mutation_leases OWNER TO \"{platform}\";",
        db.name
    )))
    .execute(&db.pool)
    .await
    .expect("a platform owner");
    let migrated = as_person(&db, &platform, &["migrate"]);
    assert_eq!(migrated.status.code(), Some(0), "{}", stderr(&migrated));
    let (owners, public) = function_owners(&db).await;
    assert_eq!(owners, [(platform.clone(), false)]);
    assert!(!public);

    // An operator from `grants` acts through them; the record says who logged in.
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let (_, ops) = person_with(&db, "ops", &[]).await;
    let space = job.space.to_string();
    let retry = as_person(&db, &ops, &["retry", &space, "--reason", "owned", "--yes"]);
    assert_eq!(retry.status.code(), Some(0), "{}", stderr(&retry));
    let role: String = sqlx::query_scalar("SELECT db_role FROM bootstrap_console.audit_log")
        .fetch_one(&db.pool)
        .await
        .expect("one record");
    assert_eq!(role, ops);
    let verify = as_person(&db, &ops, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stdout(&verify));
}

#[tokio::test(flavor = "multi_thread")]
async fn migrate_by_a_superuser_gives_the_functions_to_the_ledgers_owner_and_takes_old_writes_back()
{
    use bootstrap_console::store::schema::{self, CONSOLE_UNITS};
    // The console schema as the previous release left it (units 0001–0005), a platform role
    // owning the ledger, and an operator role with that release's grants: column UPDATEs,
    // DELETE on the leases, INSERT on the audit log.
    let db = TestDb::platform_only().await;
    let platform = format!("platform_{}", db.name);
    let old_ops = format!("old_ops_{}", db.name);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{platform}\" NOLOGIN; \
         ALTER TABLE legacy_space_publication_bootstraps OWNER TO \"{platform}\"; \
         ALTER TABLE legacy_space_publication_bootstrap_items OWNER TO \"{platform}\"; \
         ALTER TABLE knowledge_space_mutation_leases OWNER TO \"{platform}\";"
    )))
    .execute(&db.pool)
    .await
    .expect("a platform owner");
    let mut conn = db.connect().await;
    for unit in &CONSOLE_UNITS[..5] {
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
    let _ = conn.close().await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{old_ops}\" LOGIN PASSWORD 'pw'; \
         GRANT SELECT, UPDATE (run_state, row_version) ON legacy_space_publication_bootstraps \
           TO \"{old_ops}\"; \
         GRANT SELECT, UPDATE (status) ON legacy_space_publication_bootstrap_items \
           TO \"{old_ops}\"; \
         GRANT SELECT, DELETE ON knowledge_space_mutation_leases TO \"{old_ops}\"; \
         GRANT USAGE ON SCHEMA bootstrap_console TO \"{old_ops}\"; \
         GRANT SELECT, INSERT (actor, host, action, reason) ON bootstrap_console.audit_log \
           TO \"{old_ops}\";"
    )))
    .execute(&db.pool)
    .await
    .expect("the previous release's operator");

    let migrated = common::cli::on(&db, &["migrate"]);
    assert_eq!(migrated.status.code(), Some(0), "{}", stderr(&migrated));
    assert!(
        stdout(&migrated).contains("applied console schema unit 0006_action_functions"),
        "{}",
        stdout(&migrated)
    );
    // Run by a superuser, yet the functions are the ledger owner's, which may append to the
    // log it does not own.
    let (owners, public) = function_owners(&db).await;
    assert_eq!(owners, [(platform.clone(), false)]);
    assert!(!public);
    let writes: Vec<(String, bool)> = sqlx::query_as(
        "SELECT w.what, CASE w.kind \
           WHEN 'table' THEN has_table_privilege($1, w.rel::regclass, w.privilege) \
           ELSE has_any_column_privilege($1, w.rel::regclass, w.privilege) END \
         FROM (VALUES ('UPDATE bootstraps', 'legacy_space_publication_bootstraps', 'UPDATE', 'column'), \
                      ('UPDATE items', 'legacy_space_publication_bootstrap_items', 'UPDATE', 'column'), \
                      ('DELETE leases', 'knowledge_space_mutation_leases', 'DELETE', 'table'), \
                      ('INSERT audit', 'bootstrap_console.audit_log', 'INSERT', 'column'), \
                      ('SELECT bootstraps', 'legacy_space_publication_bootstraps', 'SELECT', 'table')) \
              AS w(what, rel, privilege, kind)",
    )
    .bind(&old_ops)
    .fetch_all(&db.pool)
    .await
    .expect("privileges");
    assert_eq!(
        writes,
        [
            ("UPDATE bootstraps".to_string(), false),
            ("UPDATE items".to_string(), false),
            ("DELETE leases".to_string(), false),
            ("INSERT audit".to_string(), false),
            ("SELECT bootstraps".to_string(), true),
        ],
        "the old writes are taken back, the reads kept"
    );
    let owner_appends: bool = sqlx::query_scalar(
        "SELECT has_table_privilege($1, 'bootstrap_console.audit_log', 'INSERT')",
    )
    .bind(&platform)
    .fetch_one(&db.pool)
    .await
    .expect("privilege");
    assert!(owner_appends);
    // Until `grants` runs again the old operator may not act, and is told what it lacks.
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let space = job.space.to_string();
    let refused = as_person(&db, &old_ops, &["retry", &space, "--reason", "x", "--yes"]);
    assert_eq!(refused.status.code(), Some(8), "{}", stderr(&refused));
    assert!(
        assert_one_sentence(&refused)
            .contains("EXECUTE on function bootstrap_console.retry_bootstrap"),
        "{}",
        stderr(&refused)
    );
    let (_, ops) = person_with(&db, "ops", &[]).await;
    let retry = as_person(
        &db,
        &ops,
        &["retry", &space, "--reason", "upgraded", "--yes"],
    );
    assert_eq!(retry.status.code(), Some(0), "{}", stderr(&retry));
    assert_eq!(fixture::audit_count(&db.pool).await, 1);
}

/// A database hardened by default privileges (no function open to PUBLIC) still acts: the
/// functions' rules are opened to every role by `migrate` itself.
#[tokio::test(flavor = "multi_thread")]
async fn actions_work_where_default_privileges_close_functions_to_public() {
    let db = TestDb::platform_only().await;
    sqlx::raw_sql("ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC")
        .execute(&db.pool)
        .await
        .expect("hardened");
    let migrated = common::cli::on(&db, &["migrate"]);
    assert_eq!(migrated.status.code(), Some(0), "{}", stderr(&migrated));
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let (_, ops) = person_with(&db, "ops", &[]).await;
    let space = job.space.to_string();
    let planned = as_person(&db, &ops, &["retry", &space, "--reason", "x", "--dry-run"]);
    assert_eq!(planned.status.code(), Some(0), "{}", stderr(&planned));
    let retry = as_person(
        &db,
        &ops,
        &["retry", &space, "--reason", "hardened", "--yes"],
    );
    assert_eq!(
        retry.status.code(),
        Some(0),
        "{}{}",
        stdout(&retry),
        stderr(&retry)
    );
    assert_eq!(fixture::audit_count(&db.pool).await, 1);
}
