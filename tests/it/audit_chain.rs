//! The audit log's hash chain: one valid chain from consoles acting at once, a stalled action
//! that holds the others no longer than the lock timeout, records chained by the database
//! whatever a client sends, and every kind of tampering by the table's owner (triggers
//! disabled) named by `audit verify`.

use crate::common;

use bootstrap_console::domain::actions::{self, Action, Outcome, RequestId};
use bootstrap_console::domain::session::SessionOptions;
use common::TestDb;
use common::cli::{on, stderr, stdout};
use common::fixture::{self, JobSpec};
use common::pty::Console;

/// Applies a retry to `count` failed jobs, returning the last head the actions printed.
async fn records(db: &TestDb, count: usize) -> String {
    let mut head = String::new();
    for _ in 0..count {
        let job = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
        let space = job.space.to_string();
        let retry = on(db, &["retry", &space, "--reason", "fixed", "--yes"]);
        assert_eq!(retry.status.code(), Some(0), "{}", stderr(&retry));
        head = stdout(&retry)
            .lines()
            .find_map(|l| l.strip_prefix("audit chain head: "))
            .and_then(|l| l.rsplit(' ').next())
            .expect("the head is printed")
            .to_string();
    }
    head
}

/// Runs `sql` as the owner with the log's triggers off, as only its owner can.
async fn tamper(db: &TestDb, sql: &str) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "BEGIN; ALTER TABLE bootstrap_console.audit_log DISABLE TRIGGER USER; {sql}; \
         ALTER TABLE bootstrap_console.audit_log ENABLE TRIGGER audit_log_chain; \
         ALTER TABLE bootstrap_console.audit_log ENABLE ALWAYS TRIGGER audit_log_no_change; \
         ALTER TABLE bootstrap_console.audit_log ENABLE ALWAYS TRIGGER audit_log_no_truncate; \
         COMMIT;"
    )))
    .execute(&db.pool)
    .await
    .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// `audit verify` (with `extra`): its exit code and its first line.
fn verify(db: &TestDb, extra: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["audit", "verify"];
    args.extend(extra);
    let output = on(db, &args);
    let first = stdout(&output)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(stderr(&output).is_empty(), "{}", stderr(&output));
    (output.status.code(), first)
}

/// The statement that swaps the chain positions `a` and `b` (run twice, it swaps them back).
fn swap_positions(a: i64, b: i64) -> String {
    format!(
        "UPDATE bootstrap_console.audit_log SET chain_seq = -chain_seq \
           WHERE chain_seq IN ({a}, {b}); \
         UPDATE bootstrap_console.audit_log SET chain_seq = {} + chain_seq \
           WHERE chain_seq IN (-{a}, -{b})",
        a + b
    )
}

async fn hash_at(db: &TestDb, seq: i64) -> String {
    sqlx::query_scalar(
        "SELECT encode(hash, 'hex') FROM bootstrap_console.audit_log WHERE chain_seq = $1",
    )
    .bind(seq)
    .fetch_one(&db.pool)
    .await
    .expect("a record at that position")
}

async fn id_at(db: &TestDb, seq: i64) -> i64 {
    sqlx::query_scalar("SELECT id FROM bootstrap_console.audit_log WHERE chain_seq = $1")
        .bind(seq)
        .fetch_one(&db.pool)
        .await
        .expect("a record at that position")
}

#[tokio::test(flavor = "multi_thread")]
async fn consoles_acting_at_once_build_one_valid_chain() {
    let db = TestDb::migrated().await;
    const CONSOLES: usize = 4;
    const EACH: usize = 6;
    let mut jobs = Vec::new();
    for _ in 0..CONSOLES * EACH {
        jobs.push(fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await);
    }
    let mut consoles = Vec::new();
    for chunk in jobs.chunks(EACH) {
        let session = db.session(SessionOptions::default()).await;
        let mut mine = Vec::new();
        for job in chunk {
            mine.push(Action::retry(
                fixture::seen(&db.pool, job.bootstrap).await,
                RequestId::new(),
            ));
        }
        consoles.push(tokio::spawn(async move {
            let mut applied = 0;
            for action in &mine {
                match actions::apply(&session, action, "all at once").await {
                    Ok(Outcome::Applied(_)) => applied += 1,
                    other => panic!("{other:?}"),
                }
            }
            session.close().await;
            applied
        }));
    }
    let mut applied = 0;
    for console in consoles {
        applied += console.await.expect("a console");
    }
    assert_eq!(applied, CONSOLES * EACH);

    let (code, first) = verify(&db, &[]);
    assert_eq!(code, Some(0), "{first}");
    assert_eq!(
        first,
        format!("audit chain intact: {} records", CONSOLES * EACH)
    );
    let positions: Vec<i64> =
        sqlx::query_scalar("SELECT chain_seq FROM bootstrap_console.audit_log ORDER BY chain_seq")
            .fetch_all(&db.pool)
            .await
            .expect("positions");
    assert_eq!(
        positions,
        (1..=(CONSOLES * EACH) as i64).collect::<Vec<_>>()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_action_holds_other_consoles_no_longer_than_the_lock_timeout() {
    let db = TestDb::migrated().await;
    let first = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let second = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    // Another console wrote its audit record and stalls before COMMIT.
    let mut stalled = db.pool.begin().await.expect("begin");
    sqlx::query(
        "INSERT INTO bootstrap_console.audit_log (actor, host, action, tenant_id, \
           knowledge_space_id, bootstrap_id, reason, outcome) \
         VALUES ('other', 'jump', 'retry', 'acme', $1, $2, 'stalled', 'applied')",
    )
    .bind(first.space)
    .bind(first.bootstrap)
    .execute(&mut *stalled)
    .await
    .expect("the stalled console's record");
    let image = fixture::ledger_image(&db.pool).await;

    let space = second.space.to_string();
    // A deadline of an hour: an answer in the test's time is the lock timeout's.
    let blocked = on(
        &db,
        &[
            "retry",
            &space,
            "--reason",
            "meanwhile",
            "--yes",
            "--apply-deadline-secs",
            "3600",
        ],
    );
    assert_eq!(blocked.status.code(), Some(4), "{}", stdout(&blocked));
    assert!(
        stdout(&blocked)
            .contains("the audit log stayed locked past the lock timeout, held by pid "),
        "{}",
        stdout(&blocked)
    );
    assert!(
        !stdout(&blocked).contains("deadline"),
        "the lock timeout ended the wait, not the deadline: {}",
        stdout(&blocked)
    );
    assert_eq!(
        fixture::ledger_image(&db.pool).await,
        image,
        "nothing was written"
    );

    stalled
        .rollback()
        .await
        .expect("the stalled console gives up");
    let retried = on(&db, &["retry", &space, "--reason", "again", "--yes"]);
    assert_eq!(retried.status.code(), Some(0), "{}", stdout(&retried));
    assert_eq!(verify(&db, &[]).0, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_database_chains_every_record_whatever_the_client_sends() {
    let db = TestDb::migrated().await;
    records(&db, 2).await;
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    // Even the owner's INSERT is chained: the chain columns and the time are the database's.
    sqlx::query(
        "INSERT INTO bootstrap_console.audit_log (actor, host, action, tenant_id, \
           knowledge_space_id, bootstrap_id, reason, outcome, at, chain_seq, prev_hash, hash) \
         VALUES ('owner', 'psql', 'retry', 'acme', $1, $2, 'by hand', 'applied', \
           now() - interval '1 year', 99, '\\x00', '\\x01')",
    )
    .bind(job.space)
    .bind(job.bootstrap)
    .execute(&db.pool)
    .await
    .expect("an insert by hand");
    let (seq, recent): (i64, bool) = sqlx::query_as(
        "SELECT chain_seq, at > now() - interval '1 hour' FROM bootstrap_console.audit_log \
         WHERE actor = 'owner'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("the record");
    assert_eq!((seq, recent), (3, true));
    let (code, first) = verify(&db, &[]);
    assert_eq!(
        (code, first.as_str()),
        (Some(0), "audit chain intact: 3 records")
    );

    // The triggers refuse changes even to the owner and a superuser.
    for sql in [
        "UPDATE bootstrap_console.audit_log SET reason = 'x'",
        "DELETE FROM bootstrap_console.audit_log",
        "TRUNCATE bootstrap_console.audit_log",
    ] {
        let error = sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
            .execute(&db.pool)
            .await
            .expect_err(sql);
        assert!(error.to_string().contains("append-only"), "{sql}: {error}");
    }
    assert_eq!(fixture::audit_count(&db.pool).await, 3);
}

/// Tampers with `sql`, then `audit verify`: it must fail; its first line.
async fn broken_by(db: &TestDb, sql: &str) -> String {
    tamper(db, sql).await;
    let (code, first) = verify(db, &[]);
    assert_eq!(code, Some(1), "{sql}: {first}");
    first
}

/// A statement setting a record's reason, and with `rehash` its hash to match.
fn set_reason(id: i64, reason: &str, rehash: bool) -> String {
    let mut sql =
        format!("UPDATE bootstrap_console.audit_log SET reason = '{reason}' WHERE id = {id}");
    if rehash {
        sql.push_str(&format!(
            "; UPDATE bootstrap_console.audit_log r \
               SET hash = bootstrap_console.audit_record_hash(r, r.prev_hash) WHERE id = {id}"
        ));
    }
    sql
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_names_the_first_record_changed_removed_or_reordered() {
    let db = TestDb::migrated().await;
    let head = records(&db, 8).await;
    assert_eq!(verify(&db, &["--expect-head", &head]).0, Some(0));
    assert_eq!(verify(&db, &["--expect-head", &head[..16]]).0, Some(0));

    // A reason rewritten.
    let third = id_at(&db, 3).await;
    assert_eq!(
        broken_by(&db, &set_reason(third, "routine", false)).await,
        format!(
            "audit chain BROKEN: record {third} (chain position 3) was changed: its fields no \
             longer give the hash it was chained with"
        )
    );
    tamper(&db, &set_reason(third, "fixed", false)).await;
    assert_eq!(verify(&db, &[]).0, Some(0), "put back, it verifies again");

    // The same change with its hash recomputed: the next record no longer follows it.
    let first = broken_by(&db, &set_reason(third, "routine", true)).await;
    assert!(
        first.contains(&format!("record {third} (chain position 3) was changed")),
        "{first}"
    );
    tamper(&db, &set_reason(third, "fixed", true)).await;
    assert_eq!(verify(&db, &[]).0, Some(0), "put back, it verifies again");

    // Two records swapped in the chain's order.
    let (fourth, fifth, sixth) = (
        id_at(&db, 4).await,
        id_at(&db, 5).await,
        id_at(&db, 6).await,
    );
    // Neighbours swapped: the first one out of place is the one that moved.
    let swap = swap_positions(5, 6);
    assert_eq!(
        broken_by(&db, &swap).await,
        format!(
            "audit chain BROKEN: record {fifth} was moved to chain position 6: it was chained \
             at position 5"
        )
    );
    tamper(&db, &swap).await;
    assert_eq!(
        verify(&db, &[]).0,
        Some(0),
        "swapped back, it verifies again"
    );
    // Farther apart: the record now at 5 was chained after another.
    let seventh = id_at(&db, 7).await;
    let swap = swap_positions(5, 7);
    assert_eq!(
        broken_by(&db, &swap).await,
        format!(
            "audit chain BROKEN: record {seventh} (chain position 5) was reordered: it was \
             chained after record {sixth}, but now follows record {fourth}"
        )
    );
    tamper(&db, &swap).await;
    assert_eq!(
        verify(&db, &[]).0,
        Some(0),
        "swapped back, it verifies again"
    );

    // Records removed from the middle, then from the start.
    assert_eq!(id_at(&db, 7).await, seventh);
    assert_eq!(
        broken_by(
            &db,
            "DELETE FROM bootstrap_console.audit_log WHERE chain_seq IN (5, 6)"
        )
        .await,
        format!(
            "audit chain BROKEN: records at chain positions 5-6 were removed (before record \
             {seventh})"
        )
    );
    let second = id_at(&db, 2).await;
    assert_eq!(
        broken_by(
            &db,
            "DELETE FROM bootstrap_console.audit_log WHERE chain_seq = 1"
        )
        .await,
        format!(
            "audit chain BROKEN: records were removed from the start of the chain: the first \
             record left is {second} (chain position 2)"
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn records_removed_from_the_end_are_found_against_a_head_kept_elsewhere() {
    let db = TestDb::migrated().await;
    let head = records(&db, 4).await;
    // The console's log keeps the head too, with the record it belongs to.
    let log = std::fs::read_to_string(common::pty::console_log_dir().join("console.log"))
        .expect("the console's log");
    assert!(
        log.lines()
            .any(|l| l.contains("audit chain head: record ") && l.ends_with(&head)),
        "no head {head} in the log"
    );
    // Removed, with the head the database keeps left as it was: that head is missing.
    assert_eq!(
        broken_by(
            &db,
            "DELETE FROM bootstrap_console.audit_log WHERE chain_seq = 4"
        )
        .await,
        format!(
            "audit chain BROKEN: the chain's head, chain position 4, is not its last record: \
             records were removed from its end (it now ends at record {} (chain position 3) \
             sha256 {})",
            id_at(&db, 3).await,
            hash_at(&db, 3).await
        )
    );
    // The owner moves that head back too: the chain alone can no longer tell.
    tamper(
        &db,
        "UPDATE bootstrap_console.audit_chain_head SET chain_seq = 3, \
           hash = (SELECT hash FROM bootstrap_console.audit_log WHERE chain_seq = 3)",
    )
    .await;
    assert_eq!(verify(&db, &[]).0, Some(0));
    let (code, first) = verify(&db, &["--expect-head", &head]);
    assert_eq!(code, Some(1));
    assert!(
        first.starts_with(&format!(
            "audit chain BROKEN: head {} is not in the chain: records were removed from its end, \
             or rewritten (or it is not a head of this log); the chain now ends at record {}",
            &head[..16],
            id_at(&db, 3).await
        )),
        "{first}"
    );
    // New records after the removal do not hide it.
    records(&db, 2).await;
    assert_eq!(verify(&db, &["--expect-head", &head]).0, Some(1));

    // A head that is not a sha256 is a usage error.
    let bad = on(&db, &["audit", "verify", "--expect-head", "abc"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(common::cli::assert_one_sentence(&bad).contains("64 digits"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_log_written_before_the_chain_is_chained_by_migrate() {
    let db = TestDb::platform_only().await;
    let mut conn = db.connect().await;
    use bootstrap_console::store::schema;
    for unit in &schema::CONSOLE_UNITS[..3] {
        schema::apply_unit(&mut conn, unit)
            .await
            .expect("an older console schema");
    }
    for n in 0..5 {
        sqlx::query(
            "INSERT INTO bootstrap_console.audit_log (actor, host, action, tenant_id, \
               knowledge_space_id, bootstrap_id, reason, outcome, at) \
             VALUES ('ops', 'jump', 'retry', 'acme', gen_random_uuid(), gen_random_uuid(), $1, \
               'applied', now() - $2 * interval '1 minute')",
        )
        .bind(format!("an earlier release {n}"))
        .bind(10 - n)
        .execute(&mut conn)
        .await
        .expect("an old record");
    }
    // Grants to change the log, made before it was append-only, column-level ones included.
    let clerk = format!("clerk_{}", db.name);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{clerk}\"; \
         GRANT UPDATE (reason), DELETE, TRIGGER ON bootstrap_console.audit_log TO \"{clerk}\""
    )))
    .execute(&db.pool)
    .await
    .expect("old grants");
    let outdated = verify_output(&db);
    assert_eq!(outdated.0, Some(5), "{}", outdated.1);
    assert!(
        outdated
            .1
            .contains("its owner must run `bootstrap-console migrate`")
    );

    let migrate = on(&db, &["migrate"]);
    assert_eq!(migrate.status.code(), Some(0), "{}", stderr(&migrate));
    assert!(stdout(&migrate).contains("0004_audit_chain"));
    let (code, first) = verify(&db, &[]);
    assert_eq!(
        (code, first.as_str()),
        (Some(0), "audit chain intact: 5 records")
    );
    let (update, delete, trigger): (bool, bool, bool) = sqlx::query_as(
        "SELECT has_column_privilege($1, 'bootstrap_console.audit_log', 'reason', 'UPDATE'), \
                has_table_privilege($1, 'bootstrap_console.audit_log', 'DELETE'), \
                has_table_privilege($1, 'bootstrap_console.audit_log', 'TRIGGER')",
    )
    .bind(&clerk)
    .fetch_one(&db.pool)
    .await
    .expect("privileges");
    assert_eq!((update, delete, trigger), (false, false, false));
    // Applying the unit again changes nothing.
    schema::apply_unit(&mut conn, &schema::CONSOLE_UNITS[3])
        .await
        .expect("again");
    assert_eq!(verify(&db, &[]).0, Some(0));
}

fn verify_output(db: &TestDb) -> (Option<i32>, String) {
    let output = on(db, &["audit", "verify"]);
    (output.status.code(), stderr(&output))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_audit_view_says_whether_the_chain_verifies() {
    let db = TestDb::migrated().await;
    records(&db, 3).await;
    let url = db.url();
    let mut console = Console::start(&["watch", "--database-url", &url], &[], 100, 30);
    console.wait_ready("READ-WRITE", 20);
    for _ in 0..3 {
        console.send("\t");
    }
    let screen = console.wait_for("audit chain intact: 3 records", 20);
    assert!(screen.contains("verified"), "{screen}");

    let second = id_at(&db, 2).await;
    tamper(
        &db,
        &format!("UPDATE bootstrap_console.audit_log SET reason = 'x' WHERE id = {second}"),
    )
    .await;
    console.send("\x12"); // Ctrl-R
    let screen = console.wait_for("AUDIT CHAIN BROKEN", 20);
    assert!(
        screen.contains(&format!("record {second} (chain position 2) was changed")),
        "{screen}"
    );

    // Put back, then the end removed: the head this console verified is missing.
    tamper(
        &db,
        &format!("UPDATE bootstrap_console.audit_log SET reason = 'fixed' WHERE id = {second}"),
    )
    .await;
    console.send("\x12");
    console.wait_for("audit chain intact: 3 records", 20);
    tamper(
        &db,
        "DELETE FROM bootstrap_console.audit_log WHERE chain_seq = 3",
    )
    .await;
    console.send("\x12");
    let screen = console.wait_for("AUDIT CHAIN BROKEN", 20);
    assert!(screen.contains("is not in the chain"), "{screen}");
    console.send("q");
    assert_eq!(console.wait_exit(10), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_look_alike_function_planted_on_the_search_path_hides_nothing() {
    let db = TestDb::migrated().await;
    records(&db, 3).await;
    let second = id_at(&db, 2).await;
    tamper(&db, &set_reason(second, "routine", false)).await;
    // A function that gives back the bytes of the record as it was, where the search path
    // finds it before the built-in one (a text argument fits it better).
    sqlx::raw_sql(
        "CREATE FUNCTION public.convert_to(t text, enc text) RETURNS bytea LANGUAGE sql AS \
           $$ SELECT pg_catalog.convert_to(replace(t, 'routine', 'fixed'), enc::name) $$",
    )
    .execute(&db.pool)
    .await
    .expect("a planted function");
    // It would fool an unqualified recomputation…
    let fooled: bool = sqlx::query_scalar(
        "SELECT sha256(convert_to(jsonb_build_array(encode(r.prev_hash, 'hex'), r.id, \
           to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), r.db_role, \
           r.actor, r.host, r.ssh_client, r.action, r.tenant_id, r.knowledge_space_id, \
           r.bootstrap_id, r.lease_id, r.request_id, r.action_id, r.reason, r.row_before, \
           r.row_after, r.outcome)::text, 'UTF8')) = r.hash \
         FROM bootstrap_console.audit_log r WHERE r.chain_seq = 2",
    )
    .fetch_one(&db.pool)
    .await
    .expect("recompute");
    assert!(
        fooled,
        "the planted function is the one an unqualified call finds"
    );
    // …not `audit verify`.
    let (code, first) = verify(&db, &[]);
    assert_eq!(code, Some(1));
    assert!(
        first.contains(&format!("record {second} (chain position 2) was changed")),
        "{first}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_log_whose_guards_are_off_does_not_verify() {
    let db = TestDb::migrated().await;
    records(&db, 2).await;
    sqlx::raw_sql("ALTER TABLE bootstrap_console.audit_log DISABLE TRIGGER audit_log_no_change")
        .execute(&db.pool)
        .await
        .expect("a trigger disabled");
    let output = on(&db, &["audit", "verify"]);
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(out.starts_with("audit chain intact: 2 records"), "{out}");
    assert!(
        out.contains("audit log UNPROTECTED: trigger audit_log_no_change is disabled"),
        "{out}"
    );
    // Enabled as triggers usually are, it would not fire in a replication session.
    sqlx::raw_sql("ALTER TABLE bootstrap_console.audit_log ENABLE TRIGGER audit_log_no_change")
        .execute(&db.pool)
        .await
        .expect("enabled, not always");
    let output = on(&db, &["audit", "verify"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout(&output).contains("trigger audit_log_no_change fires only in ordinary sessions"),
        "{}",
        stdout(&output)
    );
    // A grant on the chain's head would let a role lock it and hold every console's actions.
    let clerk = format!("clerk_{}", db.name);
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "CREATE ROLE \"{clerk}\"; GRANT UPDATE ON bootstrap_console.audit_chain_head TO \"{clerk}\""
    )))
    .execute(&db.pool)
    .await
    .expect("a grant on the head");
    let output = on(&db, &["audit", "verify"]);
    assert!(
        stdout(&output).contains(&format!("role {clerk} holds UPDATE on the chain's head")),
        "{}",
        stdout(&output)
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "REVOKE ALL ON bootstrap_console.audit_chain_head FROM \"{clerk}\""
    )))
    .execute(&db.pool)
    .await
    .expect("revoked");
    // A grant to change or remove records, table-wide or on one column, is named too (the
    // triggers refuse it, but it was revoked at migrate for a reason); so is INSERT, which only
    // the action functions' owner holds, and an action function open to PUBLIC.
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "GRANT DELETE, INSERT ON bootstrap_console.audit_log TO \"{clerk}\"; \
         GRANT UPDATE (reason) ON bootstrap_console.audit_log TO PUBLIC; \
         GRANT EXECUTE ON FUNCTION bootstrap_console.cancel_bootstrap TO PUBLIC; \
         GRANT EXECUTE ON FUNCTION bootstrap_console.retry_bootstrap TO \"{clerk}\"; \
         GRANT UPDATE (run_state) ON legacy_space_publication_bootstraps TO \"{clerk}\""
    )))
    .execute(&db.pool)
    .await
    .expect("write grants on the log");
    let output = on(&db, &["audit", "verify"]);
    assert_eq!(output.status.code(), Some(1));
    let out = stdout(&output);
    assert!(
        out.contains(&format!("role {clerk} holds DELETE on the audit log"))
            && out.contains("role PUBLIC holds UPDATE on the audit log")
            && out.contains(&format!("role {clerk} holds INSERT on the audit log"))
            && out.contains("function bootstrap_console.cancel_bootstrap is open to PUBLIC")
            && out.contains(&format!(
                "role {clerk} may call the action functions and holds UPDATE on \
                 legacy_space_publication_bootstraps"
            ))
            && !out.contains("retry_bootstrap")
            && !out.contains("bootstrap_console_actions"),
        "{out}"
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "REVOKE ALL ON bootstrap_console.audit_log FROM \"{clerk}\"; \
         REVOKE UPDATE (reason) ON bootstrap_console.audit_log FROM PUBLIC; \
         REVOKE EXECUTE ON FUNCTION bootstrap_console.cancel_bootstrap FROM PUBLIC; \
         REVOKE EXECUTE ON FUNCTION bootstrap_console.retry_bootstrap FROM \"{clerk}\"; \
         REVOKE UPDATE ON legacy_space_publication_bootstraps FROM \"{clerk}\""
    )))
    .execute(&db.pool)
    .await
    .expect("revoked");
    // And in a replication session, the guards still refuse.
    sqlx::raw_sql(
        "ALTER TABLE bootstrap_console.audit_log ENABLE ALWAYS TRIGGER audit_log_no_change",
    )
    .execute(&db.pool)
    .await
    .expect("enabled again");
    let error = sqlx::raw_sql(
        "SET session_replication_role = replica; \
         DELETE FROM bootstrap_console.audit_log",
    )
    .execute(&mut db.connect().await)
    .await
    .expect_err("refused");
    assert!(error.to_string().contains("append-only"), "{error}");
    assert_eq!(verify(&db, &[]).0, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn records_written_under_any_session_settings_verify_under_others() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let mut odd = db.connect().await;
    sqlx::raw_sql(
        "SET TimeZone = 'Pacific/Chatham'; SET DateStyle = 'SQL, DMY'; \
         SET extra_float_digits = -15; SET bytea_output = 'escape'; \
         SET client_encoding = 'LATIN1'",
    )
    .execute(&mut odd)
    .await
    .expect("odd settings");
    sqlx::query(
        "INSERT INTO bootstrap_console.audit_log (actor, host, action, tenant_id, \
           knowledge_space_id, bootstrap_id, reason, outcome, row_before) \
         VALUES ('opérateur', 'jump', 'retry', 'acme', $1, $2, 'réessayé après la panne', \
           'applied', '{\"ratio\": 0.1, \"at\": \"2026-12-01T10:00:00Z\"}')",
    )
    .bind(job.space)
    .bind(job.bootstrap)
    .execute(&mut odd)
    .await
    .expect("a record under odd settings");
    records(&db, 1).await;
    let (code, first) = verify(&db, &[]);
    assert_eq!(
        (code, first.as_str()),
        (Some(0), "audit chain intact: 2 records")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transaction_chaining_from_an_old_snapshot_fails_instead_of_forking() {
    let db = TestDb::migrated().await;
    let job = fixture::job(&db.pool, &JobSpec::new("acme", "failed")).await;
    let mut late = db.connect().await;
    sqlx::raw_sql(
        "BEGIN ISOLATION LEVEL REPEATABLE READ; \
         SELECT count(*) FROM bootstrap_console.audit_log",
    )
    .execute(&mut late)
    .await
    .expect("an old snapshot");
    records(&db, 1).await;
    let error = sqlx::query(
        "INSERT INTO bootstrap_console.audit_log (actor, host, action, tenant_id, \
           knowledge_space_id, bootstrap_id, reason, outcome) \
         VALUES ('ops', 'jump', 'retry', 'acme', $1, $2, 'late', 'applied')",
    )
    .bind(job.space)
    .bind(job.bootstrap)
    .execute(&mut late)
    .await
    .expect_err("no fork");
    let code = error
        .as_database_error()
        .and_then(|e| e.code())
        .map(|c| c.to_string());
    assert_eq!(code.as_deref(), Some("40001"), "{error}");
    let _ = sqlx::raw_sql("ROLLBACK").execute(&mut late).await;
    assert_eq!(verify(&db, &[]).0, Some(0));
    assert_eq!(fixture::audit_count(&db.pool).await, 1);
}
